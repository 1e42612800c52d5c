"""The conditions a benchmark ran under, printed with its figures so anyone can judge them.

Every script in ``bench/`` prints, before and after its work, the machine's load
average and the other zoo processes running, and calls the run **quiet** only
when the load before it was under `QUIET_LOAD` and no other zoo process ran:
load slows a peer's thread pool and XLA's differently, so ratios measured under
load are not the machine's. Scripts with a peer print its version and thread
count (`peer_line`), and speed figures are the median of `--rounds` rounds
(`add_rounds_argument`, at least 3 by default).

    from conditions import Conditions
    with Conditions() as run:      # prints the load and the other zoo processes
        ...                        # the benchmark
    # on leaving: the load after, and "quiet" or why not
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

QUIET_LOAD = 1.5
"""A run is quiet only when the 1-minute load average before it is below this."""

_BUSY = 0.05
"""CPU share over the sampling window above which another process counts as running."""


def load_average() -> float:
    """The 1-minute load average (0.0 where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def _is_zoo_checkout(directory: Path) -> bool:
    for folder in (directory, *directory.parents):
        project = folder / "pyproject.toml"
        if project.is_file():
            try:
                return 'name = "zoo"' in project.read_text(errors="replace")
            except OSError:
                return False
    return False


def _own_tree() -> set[int]:
    """This process, its ancestors and its descendants: the benchmark's own processes."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    own, pid = set(), os.getpid()
    while pid > 1 and pid not in own:
        own.add(pid)
        pid = parents.get(pid, 0)
    grew = True
    while grew:
        children = {child for child, parent in parents.items() if parent in own} - own
        own |= children
        grew = bool(children)
    return own


def _cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


def other_zoo_processes(window: float = 1.0, *, own: set[int] | None = None) -> list[str]:
    """Other processes of zoo's that used the CPU over `window` seconds: those running in a zoo
    checkout, running the ``zoo`` command or an interpreter or script from a checkout, outside
    `own` (by default this benchmark's own process tree: itself, its ancestors and its children);
    ``[]`` where ``/proc`` is missing."""
    if not Path("/proc").is_dir():
        return []
    own, candidates = (_own_tree() if own is None else own), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in own:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            words = [a.decode(errors="replace") for a in argv if a]
            ours = (
                any(Path(w).name == "zoo" for w in words[:2])
                or any(w.startswith("/") and _is_zoo_checkout(Path(w).parent) for w in words[:2])
                or _is_zoo_checkout(Path(os.readlink(entry / "cwd")))
            )
        except OSError:
            continue
        if ours and words:
            candidates[int(entry.name)] = " ".join(" ".join(words).split())[:80]
    before = {pid: _cpu_ticks(pid) for pid in candidates}
    time.sleep(window)
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    busy = []
    for pid, command in candidates.items():
        start, end = before[pid], _cpu_ticks(pid)
        if start is not None and end is not None and (end - start) / ticks > _BUSY * window:
            busy.append(f"{pid} {command}")
    return busy


def peer_line(package: str, threads: int | None) -> str:
    """``"peer: torch 2.14.1, 2 threads"`` for a peer package (its installed version)."""
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        version = "not installed"
    return f"peer: {package} {version}" + ("" if threads is None else f", {threads} threads")


def add_rounds_argument(parser: argparse.ArgumentParser, default: int = 3) -> None:
    """``--rounds N``: how many rounds the speed figures are the median of."""
    parser.add_argument(
        "--rounds",
        type=int,
        default=default,
        help=f"rounds (sides alternating); figures are medians (default {default})",
    )


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


class Conditions:
    """Prints the conditions at the start and end of a run (to `stream`, stderr by default, so a
    script's JSON on stdout stays parseable); `quiet` says whether the figures are a quiet run's."""

    def __init__(self, *, stream=None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.load_before = self.load_after = None
        self.others: list[str] = []

    @property
    def quiet(self) -> bool:
        return self.load_before is not None and self.load_before < QUIET_LOAD and not self.others

    def start(self) -> Conditions:
        self.load_before, self.others = load_average(), other_zoo_processes()
        shown = "; ".join(self.others[:3]) + (f"; {len(self.others) - 3} more" if len(self.others) > 3 else "")
        print(
            f"conditions: load {self.load_before:.2f} before (1-minute average, {os.cpu_count()} CPUs); "
            f"other zoo processes: {shown or 'none'}",
            file=self.stream,
            flush=True,
        )
        return self

    def finish(self) -> None:
        self.load_after = load_average()
        self.others = sorted(set(self.others) | set(other_zoo_processes()))
        if self.quiet:
            verdict = "quiet"
        else:
            why = [f"load {self.load_before:.2f} >= {QUIET_LOAD}"] if self.load_before >= QUIET_LOAD else []
            why += [f"{len(self.others)} other zoo process(es) ran"] if self.others else []
            verdict = "NOT quiet (" + ", ".join(why) + "): do not quote these figures as the machine's"
        print(f"conditions: load {self.load_after:.2f} after; {verdict}", file=self.stream, flush=True)

    def __enter__(self) -> Conditions:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.finish()


def _is_child(argv: list[str]) -> bool:
    """Whether a script runs as one of its driver's children: ``--side zoo`` (not ``--side both``),
    ``--worker`` or ``--one``."""
    if "--worker" in argv or "--one" in argv:
        return True
    sides = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--side"] + [
        a.split("=", 1)[1] for a in argv if a.startswith("--side=")
    ]
    return any(side != "both" for side in sides)


def run_reporting_conditions(main):
    """``sys.exit(main())`` between the two conditions lines; a benchmark's child process (see
    `_is_child`), which its driver times and reports on, prints none."""
    if _is_child(sys.argv[1:]):
        sys.exit(main())
    with Conditions():
        code = main()
    sys.exit(code)
