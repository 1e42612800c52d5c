"""How a training run reports itself: a bar on a terminal, plain lines elsewhere, a metrics log.

One behaviour for every training loop (`zoo.train` and the word-vector family's own):

- standard error a terminal: a tqdm bar, its postfix updated every log interval,
  evaluation scores and notes printed above it;
- standard error a file or a pipe: one plain line per log interval (``step 50/200
  loss 2.3456 1.2k ex/s elapsed 12s``), evaluation lines and notes as they come, no
  carriage returns;
- a metrics log (``zoo train ... --log-file metrics.jsonl``, ``zoo.train(log_file=)``):
  one JSON object a line per interval and per evaluation (``step``, ``loss``, ``lr``
  where known, ``units_per_s``, ``elapsed`` seconds, ``time``, the scores). Each line
  is written with one ``write`` to a file opened for appending and nothing is held in
  the process, so a run killed at any moment leaves every finished line valid, and a
  resumed run appends to the same file. `read_log` reads it back (`zoo plot curve`).

A log given to `metrics_log` is ambient: every loop inside the block writes to it
(``zoo train`` opens it around the recipe, so a recipe passes nothing along).
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from tqdm.auto import tqdm

from zoo.building.files import check_writable
from zoo.errors import DataError, WeightsError

__all__ = ["MetricsLog", "Progress", "format_seconds", "metrics_log", "open_log", "read_log"]


class MetricsLog:
    """A JSON-lines file of training records, appended one whole line per `write`.

    Opening checks that `path` can be written (`zoo.building.files.check_writable`)
    and creates it (and missing parent folders) if needed; an existing file is
    appended to. `started` is the clock (`time.perf_counter`) records' ``elapsed``
    counts from; `written` counts the records written.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = check_writable(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        except OSError as error:
            raise WeightsError(f"cannot open the metrics log {path}: {error.strerror or error}") from error
        self.started = time.perf_counter()
        self.written = 0

    def write(self, record: Mapping[str, Any]) -> None:
        """Append `record` as one JSON line; a non-finite number is written as null (JSON has no NaN)."""
        if self._fd is None:
            raise WeightsError(f"the metrics log {self.path} is closed")
        line = json.dumps({k: _plain(v) for k, v in record.items()}, allow_nan=False) + "\n"
        data = line.encode("utf-8")
        while data:  # one write for a line of a few hundred bytes; the loop only guards a short write
            data = data[os.write(self._fd, data) :]
        self.written += 1

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain(value: Any) -> Any:
    """A JSON value for `value`: NumPy and JAX scalars as Python numbers, NaN and infinities as None."""
    if isinstance(value, str | bool) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else None


_AMBIENT: ContextVar[MetricsLog | None] = ContextVar("zoo_metrics_log", default=None)


@contextlib.contextmanager
def metrics_log(path: str | os.PathLike | None) -> Iterator[MetricsLog | None]:
    """Within this block every training loop also writes its records to the JSON-lines file `path`
    (None: no log). The file is opened, and checked, on entry: before any training starts."""
    if path is None:
        yield None
        return
    with MetricsLog(path) as log:
        token = _AMBIENT.set(log)
        try:
            yield log
        finally:
            _AMBIENT.reset(token)


@contextlib.contextmanager
def open_log(path: str | os.PathLike | None) -> Iterator[MetricsLog | None]:
    """The log a loop writes to: a fresh one at `path`, closed at the end, or else the ambient one
    (`metrics_log`), or None."""
    if path is None:
        yield _AMBIENT.get()
        return
    with MetricsLog(path) as log:
        yield log


class Progress:
    """The progress display and records of one training loop.

    **Arguments:**

    - `total`, `initial`: the bar's length and where it starts (a resumed run), in `unit`.
    - `show`: whether to show the bar or the interval lines (``--quiet`` turns them
      off; scores and notes are still printed); the log is written either way.
    - `log`: a `MetricsLog` (or None).
    - `description`: the bar's label, the plain lines' prefix.
    - `unit_scale`: the bar counts in k/M (words).
    - `stream`: where to show progress (default standard error); a bar when it is a
      terminal, plain lines otherwise.
    """

    def __init__(
        self,
        *,
        total: int,
        initial: int = 0,
        unit: str = "step",
        show: bool = True,
        log: MetricsLog | None = None,
        description: str | None = None,
        unit_scale: bool = False,
        stream: TextIO | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.log = log
        self.started = log.started if log is not None else time.perf_counter()
        self.prefix = f"{description}: " if description else ""
        terminal = show and _is_terminal(self.stream)
        self.lines = show and not terminal
        self.bar = tqdm(
            total=total,
            initial=initial,
            disable=not terminal,
            desc=description,
            unit=unit,
            unit_scale=unit_scale,
            dynamic_ncols=True,
            file=self.stream,
        )

    def elapsed(self) -> float:
        """Seconds since the run started (since the log opened, when there is one)."""
        return time.perf_counter() - self.started

    def advance(self, n: int = 1) -> None:
        """Move the bar `n` units (nothing without a terminal)."""
        if not self.bar.disable:
            self.bar.update(n)

    def status(self, shown: str) -> None:
        """Show `shown` in the bar's postfix, between intervals (not a line, not a record)."""
        if not self.bar.disable:
            self.bar.set_postfix_str(shown, refresh=False)

    def interval(self, record: Mapping[str, Any], shown: str, where: str) -> dict[str, Any]:
        """One log interval: `record` (with ``elapsed`` and ``time`` added) to the log; `shown`
        (``loss 2.3456  1.2k ex/s``) in the bar's postfix, or else a plain line ``{where}
        {shown}  elapsed 12s`` (`where`: ``step 50/200``); returns the record."""
        full = self._stamp(record)
        if not self.bar.disable:
            self.bar.set_postfix_str(shown)
        elif self.lines:
            self._line(f"{where}  {shown}  elapsed {format_seconds(full['elapsed'])}")
        return full

    def scores(self, record: Mapping[str, Any], shown: str) -> dict[str, Any]:
        """Evaluation scores: `record` to the log, `shown` as a line (above the bar on a terminal)."""
        full = self._stamp(record)
        self.note(shown)
        return full

    def note(self, text: str) -> None:
        """A line of text: above the bar on a terminal, a plain line otherwise (also when `show`
        is off: scores and notes are few, and worth seeing)."""
        if not self.bar.disable:
            self.bar.write(f"{self.prefix}{text}", file=self.stream)
        else:
            self._line(text)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stamp(self, record: Mapping[str, Any]) -> dict[str, Any]:
        full = {**record, "elapsed": round(self.elapsed(), 3), "time": round(time.time(), 3)}
        if self.log is not None:
            self.log.write(full)
        return full

    def _line(self, text: str) -> None:
        print(f"{self.prefix}{text}", file=self.stream, flush=True)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a stream without a descriptor, or a closed one
        return False


def format_seconds(seconds: float) -> str:
    """``12s``, ``3m05s``, ``1h02m``: elapsed time for a progress line."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def read_log(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The records of a metrics log, in order.

    A last line without its newline (a run killed while writing it) is skipped;
    any other line that is not a JSON object is a `DataError` naming its number.
    """
    from zoo.data.inputs import read_small
    from zoo.data.textfile import decode_bytes

    path = Path(path)
    try:  # a FIFO, a device, a file past 64 MiB (some 300,000 records): a DataError saying which
        text = decode_bytes(read_small(path, "metrics log"), name=str(path))
    except OSError as error:
        raise DataError(f"cannot read the metrics log {path}: {error.strerror or error}") from error
    records = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # cut short by a crash: no newline after it
                break
            raise DataError(f"{path}, line {number}: not a JSON record; is this a zoo metrics log?") from None
        if not isinstance(record, dict):
            raise DataError(f"{path}, line {number}: a JSON {type(record).__name__}, not a record (an object)")
        records.append(record)
    return records
