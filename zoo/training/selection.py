"""Model selection on held-out data: keep the best model, stop when it stops improving, say so.

`KeepBest` is an ``evaluate`` callback for `zoo.train`: it scores the model at
every evaluation, remembers the best one, and (with `patience`) raises
`StopTraining` once that many evaluations in a row brought no strictly better
score (a tie is no improvement)::

    keeper = KeepBest(lambda m: accuracy(m, dev), "dev_accuracy", patience=5)
    try:
        zoo.train(model, data, steps=..., evaluate=keeper, eval_every=steps_per_epoch)
    except StopTraining:
        pass
    best = keeper.model
    print(keeper.report(unit="epoch"))  # stopped after epoch 12: no dev improvement for 5 epochs; kept epoch 7 (...)

`held_out_line` and `last_kept_line` are the lines a run without selection
prints: what it held out, and that it keeps its last state and why it ended.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zoo.errors import ZooError

__all__ = ["KeepBest", "StopTraining", "held_out_line", "last_kept_line"]


class StopTraining(ZooError):
    """Raised by an ``evaluate`` callback to end training early (the loop re-raises it).

    `scores` are the scores of the evaluation that decided it: the loop shows and
    logs them as it does every evaluation's.
    """

    def __init__(self, message: str, scores: Mapping[str, float] | None = None) -> None:
        super().__init__(message)
        self.scores = dict(scores or {})


class KeepBest:
    """Score the model at each evaluation; keep the best; optionally stop early.

    **Arguments:**

    - `score`: ``score(model) -> float``, higher is better (negate a loss).
    - `metric`: the name the score is reported under.
    - `patience`: raise `StopTraining` after this many evaluations without a
      strictly better score (None: never stop).
    - `ties`: which model a score equal to the best keeps: ``"first"`` (the earlier
      one) or ``"last"`` (the later one, as Kim's (2014) sentence-classification code
      does; on a small dev set, equal accuracies are common). Either way a tie is no
      improvement: patience counts from the last strictly better score.

    **Attributes:** `model` (the best so far), `score` and `best_at` (its 1-based
    evaluation index: an epoch when evaluating once per epoch), `improved_at` (the
    last evaluation that beat every earlier one: `best_at` or, after a kept tie,
    before it), `history` (all scores), `stopped` (the early-stop message, or None).
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
        self.improved_at = 0
        self.history: list[float] = []
        self.stopped: str | None = None

    def __call__(self, model: Any) -> dict[str, float]:
        value = float(self._score(model))
        self.history.append(value)
        improved = value > self.score
        if improved or (value == self.score and self.ties == "last"):
            self.model, self.score, self.best_at = model, value, len(self.history)
        if improved:
            self.improved_at = len(self.history)
        elif self.patience is not None and len(self.history) - self.improved_at >= self.patience:
            self.stopped = (
                f"{self.metric} has not improved for {self.patience} evaluations "
                f"(best {self.score:.4g} at evaluation {self.best_at})"
            )
            raise StopTraining(self.stopped, {self.metric: value})
        return {self.metric: value}

    def report(
        self, *, unit: str = "evaluation", label: str | None = None, planned: int | None = None, on_time: bool = False
    ) -> str:
        """One line: why training ended and which evaluation is kept, with its score.

        ``stopped after epoch 12: no dev improvement for 5 epochs; kept epoch 7 (dev accuracy 0.8123)``;
        ``trained all 50 epochs; kept epoch 48 (...)``, warning when the last was the best (the
        score was still climbing); ``the time budget ran out in epoch 9 of 50; kept epoch 6 (...)``
        (`on_time`). `unit` names an evaluation, `label` the score (default: the metric's name),
        `planned` the evaluations the run would have made.
        """
        label = label or self.metric.replace("_", " ")
        done = len(self.history)
        if not done:
            return f"no {unit} was scored: nothing was kept"
        kept = f"kept {unit} {self.best_at} ({label} {self.score:.4f}"
        if self.best_at != self.improved_at:  # a tie kept the later one; patience counted from the first
            kept += f", equal to {unit} {self.improved_at}'s"
        kept += ")"
        since = f" since {unit} {self.improved_at}" if self.best_at != self.improved_at else ""
        if self.stopped is not None:
            return f"stopped after {unit} {done}: no dev improvement for {_count(self.patience, unit)}{since}; {kept}"
        if on_time:
            return f"the time budget ran out in {unit} {done}{f' of {planned}' if planned else ''}; {kept}"
        line = f"trained all {_count(done, unit)}; {kept}"
        if self.best_at == done and done > 1:
            line += f"; warning: {label} was still improving at the last {unit}, more may help"
        return line


def held_out_line(count: int, what: str, source: str) -> str:
    """What a run scores itself on: ``held out: 90 sentences (a tenth of --data, at most 1,000)``,
    or ``held out: none (...)`` when `count` is 0, `source` then saying why and what is kept."""
    return f"held out: {f'{count:,} {what}' if count else 'none'} ({source})"


def last_kept_line(done: float, planned: float | None, unit: str, *, on_time: bool = False, scores: str = "") -> str:
    """How a run without selection ended, keeping its last state: ``trained all 25 epochs; kept the
    last`` or ``the time budget ran out after epoch 7 of 25; kept the last``; `scores` (the last
    evaluation's, as shown) are added in brackets."""
    if on_time:
        of = f" of {_number(planned)}" if planned else ""
        ended = f"the time budget ran out after {unit} {_number(done)}{of}"
    else:
        ended = f"trained all {_count(done, unit)}"
    return f"{ended}; kept the last{f' ({scores})' if scores else ''}"


def _number(n: float) -> str:
    return f"{int(n):,}" if float(n).is_integer() else f"{n:g}"


def _count(n: float, unit: str) -> str:
    return f"{_number(n)} {unit}{'' if n == 1 else 's'}"
