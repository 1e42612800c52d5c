"""The main job, shortened: the reversal demo learns, saves, reloads and aligns."""

import re

import pytest

from zoo_seq2seq.demo import run

pytestmark = [pytest.mark.xla_optimised, pytest.mark.slow]  # trains for hundreds of steps


def test_reversal_demo_end_to_end(tmp_path, capsys):
    out = tmp_path / "reversal.safetensors"
    run(["--steps", "700", "--train-size", "8000", "--test-size", "300", "--out", str(out), "--quiet"])
    text = capsys.readouterr().out
    accuracy = float(re.search(r"exact match on 300 held-out sequences: ([\d.]+)%", text).group(1))
    assert accuracy >= 90.0, text
    assert "loaded it back from the file alone" in text
    assert out.exists()
    rows = [line for line in text.splitlines() if re.match(r"^\s+\d\s+[\d. ]+$", line)]
    assert len(rows) >= 3  # an alignment row per output digit
