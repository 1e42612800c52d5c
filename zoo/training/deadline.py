"""The time budget of ``zoo train --minutes``: a deadline every `zoo.train` inside it stops at.

Light to import (no JAX), so a command sets it up before any training code is loaded.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from zoo.errors import InvalidParameterError

__all__ = ["time_budget"]

_DEADLINE: ContextVar[float | None] = ContextVar("zoo_training_deadline", default=None)


@contextlib.contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Within this block, every `train` stops at the first step boundary after `seconds`
    from now (None: no budget; nested budgets keep the earlier end). ``zoo train --minutes``."""
    if seconds is None:
        yield
        return
    _check_time_limit(seconds)
    earlier = _DEADLINE.get()
    token = _DEADLINE.set(min(time.monotonic() + seconds, earlier if earlier is not None else math.inf))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _check_time_limit(seconds: Any) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < math.inf:
        raise InvalidParameterError(
            f"zoo.train: time_limit={seconds!r} is out of range: it must be a finite number of seconds > 0"
        )
