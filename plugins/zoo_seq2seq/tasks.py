"""Generated sequence-to-sequence tasks for demos and tests.

Each task returns source and target token lists; `Vocab` builds their
vocabularies. Generation is deterministic for a seed.

- ``reversal``: digits -> the same digits reversed (the seeds' exercise).
- ``sorting``: digits -> the same digits in ascending order.
- ``dates``: a date written out in one of several English forms
  (``"3rd of March 1999"``, ``"March 3, 1999"``, ``"3 Mar 1999"``, ...) ->
  its ISO form ``"1999-03-03"``, tokenised with `zoo.data.text.tokenize`.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from zoo.plugin_api import UnknownNameError, Vocab, close_matches, tokenize

__all__ = [
    "TASKS",
    "Task",
    "date_pairs",
    "digit_vocab",
    "format_date",
    "get_task",
    "reversal_pairs",
    "sorting_pairs",
]

DIGITS = [str(d) for d in range(10)]
Pairs = tuple[list[list[str]], list[list[str]]]


def digit_vocab() -> Vocab:
    """``<pad> <unk> <s> </s> 0 1 ... 9``: the vocabulary of the digit tasks."""
    return Vocab.build({d: 1 for d in DIGITS})


def _digit_sequences(count: int, min_length: int, max_length: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_length, max_length + 1, size=count)
    return [[DIGITS[d] for d in rng.integers(0, 10, size=int(n))] for n in lengths]


def reversal_pairs(count: int, *, min_length: int = 3, max_length: int = 10, seed: int = 0) -> Pairs:
    """`count` random digit sequences (lengths uniform in [min, max]) and their reversals."""
    sources = _digit_sequences(count, min_length, max_length, seed)
    return sources, [s[::-1] for s in sources]


def sorting_pairs(count: int, *, min_length: int = 3, max_length: int = 10, seed: int = 0) -> Pairs:
    """`count` random digit sequences and the same digits sorted ascending."""
    sources = _digit_sequences(count, min_length, max_length, seed)
    return sources, [sorted(s) for s in sources]


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


_DATE_FORMS: list[Callable[[int, int, int], str]] = [
    lambda y, m, d: f"{_ordinal(d)} of {calendar.month_name[m]} {y}",
    lambda y, m, d: f"the {_ordinal(d)} of {calendar.month_name[m]}, {y}",
    lambda y, m, d: f"{calendar.month_name[m]} {d}, {y}",
    lambda y, m, d: f"{calendar.month_name[m]} {_ordinal(d)} {y}",
    lambda y, m, d: f"{d} {calendar.month_name[m]} {y}",
    lambda y, m, d: f"{d} {calendar.month_abbr[m]} {y}",
    lambda y, m, d: f"{calendar.month_abbr[m]} {d}, {y}",
    lambda y, m, d: f"{calendar.day_name[calendar.weekday(y, m, d)]}, {calendar.month_name[m]} {d}, {y}",
]


def format_date(year: int, month: int, day: int, form: int) -> str:
    """The date in written form number `form` (0 .. 7), e.g. form 0: ``"3rd of March 1999"``."""
    return _DATE_FORMS[form](year, month, day)


def date_pairs(count: int, *, first_year: int = 1950, last_year: int = 2049, seed: int = 0) -> Pairs:
    """`count` random valid dates in written English forms -> ``YYYY-MM-DD``, tokenised.

    ``"3rd of March 1999"`` -> ``["3", "rd", "of", "march", "1999"]`` and
    ``["1999", "-", "03", "-", "03"]``.
    """
    rng = np.random.default_rng(seed)
    sources, targets = [], []
    for _ in range(count):
        year = int(rng.integers(first_year, last_year + 1))
        month = int(rng.integers(1, 13))
        day = int(rng.integers(1, calendar.monthrange(year, month)[1] + 1))
        form = int(rng.integers(len(_DATE_FORMS)))
        sources.append(tokenize(format_date(year, month, day, form)))
        targets.append(tokenize(f"{year:04d}-{month:02d}-{day:02d}"))
    return sources, targets


class Task(NamedTuple):
    """A generated task: ``make(count, seed=...) -> (sources, targets)``."""

    name: str
    make: Callable[..., Pairs]
    summary: str
    fixed_vocab: Callable[[], Vocab] | None = None  # one vocabulary for both sides, or None: build from data


TASKS: dict[str, Task] = {
    "reversal": Task("reversal", reversal_pairs, "digits -> the same digits reversed", digit_vocab),
    "sorting": Task("sorting", sorting_pairs, "digits -> the same digits sorted ascending", digit_vocab),
    "dates": Task("dates", date_pairs, "'3rd of March 1999' -> '1999-03-03'"),
}


def get_task(name: str) -> Task:
    """The task called `name`; an unknown name is an error listing the tasks."""
    if name not in TASKS:
        raise UnknownNameError(f"no task {name!r}; tasks: {sorted(TASKS)}." + close_matches(name, TASKS))
    return TASKS[name]
