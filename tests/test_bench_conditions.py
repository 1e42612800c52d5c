"""bench/conditions.py: what a benchmark prints about the conditions it ran under."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
try:
    import conditions
finally:
    sys.path.remove(str(BENCH))


def _run(monkeypatch, load: float, others: list[str]) -> tuple[conditions.Conditions, str]:
    monkeypatch.setattr(conditions, "load_average", lambda: load)
    monkeypatch.setattr(conditions, "other_zoo_processes", lambda window=1.0: others)
    out = io.StringIO()
    with conditions.Conditions(stream=out) as run:
        pass
    return run, out.getvalue()


def test_a_run_is_quiet_only_under_low_load_with_no_other_zoo_process(monkeypatch):
    run, text = _run(monkeypatch, 0.8, [])
    assert run.quiet and "load 0.80 before" in text and text.rstrip().endswith("quiet")
    run, text = _run(monkeypatch, 1.5, [])
    assert not run.quiet and "NOT quiet (load 1.50 >= 1.5)" in text
    run, text = _run(monkeypatch, 0.3, ["123 zoo train word2vec-skipgram"])
    assert not run.quiet and "1 other zoo process(es) ran" in text and "123 zoo train" in text


def test_peer_line_names_the_installed_version_and_threads():
    import numpy

    assert conditions.peer_line("numpy", 2) == f"peer: numpy {numpy.__version__}, 2 threads"
    assert conditions.peer_line("no-such-package-zoo", None) == "peer: no-such-package-zoo not installed"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_busy_zoo_processes_are_seen_unless_they_are_the_benchmark_s_own():
    root = Path(__file__).resolve().parents[1]  # a zoo checkout: the processes run in it
    busy = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 20\nwhile time.time() < end: pass"], cwd=root
    )
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"], cwd=root)
    try:
        time.sleep(0.5)  # both started
        pids = lambda lines: {int(line.split()[0]) for line in lines}
        assert busy.pid not in pids(conditions.other_zoo_processes(window=0.5))  # a child: the benchmark's own
        seen = pids(conditions.other_zoo_processes(window=0.5, own={os.getpid()}))  # as another session's would be
        assert busy.pid in seen and idle.pid not in seen
    finally:
        for child in (busy, idle):
            child.terminate()
            child.wait()


def test_children_of_a_driver_are_told_apart_from_the_driver():
    assert conditions._is_child(["--side", "zoo", "--steps", "3"]) and conditions._is_child(["--side=torch"])
    assert conditions._is_child(["--worker", "gensim"]) and conditions._is_child(["--one", "glove"])
    assert not conditions._is_child(["--side", "both"]) and not conditions._is_child(["--rounds", "3"])


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or not conditions._is_zoo_checkout(Path(sys.executable).parent),
    reason="reads /proc; needs an interpreter inside a zoo checkout (a venv in it)",
)
def test_a_busy_interpreter_from_a_zoo_checkout_counts_wherever_it_runs(tmp_path):
    spin = "import time\nend = time.time() + 20\nwhile time.time() < end: pass"
    busy = subprocess.Popen([sys.executable, "-c", spin], cwd=tmp_path)  # tmp_path: no checkout
    try:
        time.sleep(0.5)
        seen = {int(line.split()[0]) for line in conditions.other_zoo_processes(window=0.5, own={os.getpid()})}
        assert busy.pid in seen
    finally:
        busy.terminate()
        busy.wait()
