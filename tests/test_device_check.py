"""`bench/device_check.sh --smoke` runs end to end on the CPU: every row gives figures."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the whole device check end to end: minutes

ROOT = Path(__file__).resolve().parent.parent


def test_the_device_check_runs_on_the_cpu_in_smoke_mode():
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHON=sys.executable, ZOO_DEVICE_CHECK_SKIP_INSTALL="1")
    done = subprocess.run(
        ["bash", str(ROOT / "bench" / "device_check.sh"), "--smoke", "--no-torch", "--timeout", "200"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout
    assert "device: cpu" in table
    assert "failed" not in table, table
    for row, figure in [("word2vec skip-gram (JAX runner)", "words/s"), ("seq2seq", "beam"), ("lstm-lm", "tokens/s")]:
        line = next((line for line in table.splitlines() if line.startswith(row)), None)
        assert line is not None and figure in line, table
