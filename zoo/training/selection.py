"""Model selection on held-out data: keep the best model, stop when it stops improving.

`KeepBest` is an ``evaluate`` callback for `zoo.train`: it scores the model at
every evaluation, remembers the best one, and (with `patience`) raises
`StopTraining` once that many evaluations in a row brought no improvement::

    keeper = KeepBest(lambda m: accuracy(m, dev), "dev_accuracy", patience=5)
    try:
        zoo.train(model, data, steps=..., evaluate=keeper, eval_every=steps_per_epoch)
    except StopTraining:
        pass
    best = keeper.model
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo.errors import ZooError

__all__ = ["KeepBest", "StopTraining"]


class StopTraining(ZooError):
    """Raised by an ``evaluate`` callback to end training early (the loop re-raises it)."""


class KeepBest:
    """Score the model at each evaluation; keep the best; optionally stop early.

    **Arguments:**

    - `score`: ``score(model) -> float``, higher is better (negate a loss).
    - `metric`: the name the score is reported under.
    - `patience`: raise `StopTraining` after this many evaluations without a
      better score (None: never stop).
    - `ties`: which model a score equal to the best keeps: ``"first"`` (the earlier
      one) or ``"last"`` (the later one, as Kim's (2014) sentence-classification code
      does; on a small dev set, equal accuracies are common). Either way, patience
      counts from the last strictly better score.

    **Attributes:** `model` (the best so far), `score` and `best_at` (its 1-based
    evaluation index: an epoch when evaluating once per epoch), `history` (all scores).
    """

    def __init__(
        self, score: Callable[[Any], float], metric: str, *, patience: int | None = None, ties: str = "first"
    ) -> None:
        if patience is not None and patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience}")
        if ties not in ("first", "last"):
            raise ValueError(f"ties must be 'first' or 'last', got {ties!r}")
        self._score, self.metric, self.patience, self.ties = score, metric, patience, ties
        self.model: Any = None
        self.score = float("-inf")
        self.best_at = 0
        self._improved_at = 0
        self.history: list[float] = []

    def __call__(self, model: Any) -> dict[str, float]:
        value = float(self._score(model))
        self.history.append(value)
        improved = value > self.score
        if improved or (value == self.score and self.ties == "last"):
            self.model, self.score, self.best_at = model, value, len(self.history)
        if improved:
            self._improved_at = len(self.history)
        elif self.patience is not None and len(self.history) - self._improved_at >= self.patience:
            raise StopTraining(
                f"{self.metric} has not improved for {self.patience} evaluations "
                f"(best {self.score:.4g} at evaluation {self.best_at})"
            )
        return {self.metric: value}
