"""Where a compiled JAX computation spends its time: XLA operations ranked by time.

Used by the benchmarks' ``--profile`` option. It records a JAX profiler trace
of a few calls and sums each XLA operation's durations (on the CPU, one event
per executed thunk: a fused loop, a matrix product, a while loop), so a
benchmark can say what limits it rather than guess. A while loop's own event
spans the operations inside it, which are listed too: shares are of the wall
time of the calls, and overlapping rows can sum past 100%.

    from xla_ops import profile_ops
    print(profile_ops(lambda: step(...), calls=10))
"""

from __future__ import annotations

import collections
import gzip
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# Events that are not operations: executor bookkeeping and the Python frames the trace also holds.
_NOT_OPS = ("ThunkExecutor", "PjRt", "PjitFunction", "SlinkyThreadPool", "$")


def op_times(trace_dir: Path) -> dict[str, tuple[float, int]]:
    """``{operation: (total microseconds, count)}`` from the perfetto trace under `trace_dir`."""
    path = max(trace_dir.rglob("*.trace.json.gz"), key=lambda p: p.stat().st_mtime)
    with gzip.open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    total: dict[str, float] = collections.defaultdict(float)
    count: dict[str, int] = collections.Counter()
    for event in events:
        name = event.get("name", "")
        if event.get("ph") != "X" or name.startswith(_NOT_OPS):
            continue
        total[name] += event.get("dur", 0.0)
        count[name] += 1
    return {name: (total[name], count[name]) for name in total}


def profile_ops(run: Callable[[], object], *, calls: int = 5, top: int = 15) -> str:
    """A table of the `top` operations of `run` (already compiled: call it once before), per call."""
    import jax

    with tempfile.TemporaryDirectory() as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            started = time.perf_counter()
            for _ in range(calls):
                jax.block_until_ready(run())
            wall = (time.perf_counter() - started) * 1e6
        times = op_times(Path(tmp))
    ranked = sorted(times.items(), key=lambda item: -item[1][0])
    lines = [f"{'ms/call':>8s} {'share':>6s} {'runs':>5s}  operation"]
    for name, (micros, n) in ranked[:top]:
        lines.append(f"{micros / calls / 1e3:8.2f} {micros / wall:6.1%} {n // calls:5d}  {name}")
    lines.append(f"{wall / calls / 1e3:8.2f} {1:6.1%}        wall time of a call (traced)")
    return "\n".join(lines)
