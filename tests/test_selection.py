"""KeepBest: which model it keeps, when it stops, what it says."""

from __future__ import annotations

import pytest

from zoo.training.selection import KeepBest, StopTraining


def _feed(keeper: KeepBest, scores: list[float]) -> None:
    """Evaluate models named 'm1', 'm2', ... whose scores are `scores`."""
    for i, _ in enumerate(scores, start=1):
        keeper(f"m{i}")


def _keeper(scores: list[float], **kwargs) -> KeepBest:
    table = {f"m{i}": s for i, s in enumerate(scores, start=1)}
    return KeepBest(table.__getitem__, "dev_accuracy", **kwargs)


def test_keeps_the_best_and_reports_every_score():
    scores = [0.5, 0.7, 0.6]
    keeper = _keeper(scores)
    reports = [keeper(f"m{i}") for i in (1, 2, 3)]
    assert reports == [{"dev_accuracy": s} for s in scores]
    assert (keeper.model, keeper.score, keeper.best_at, keeper.history) == ("m2", 0.7, 2, scores)


@pytest.mark.parametrize(("ties", "kept", "at"), [("first", "m2", 2), ("last", "m4", 4)])
def test_ties_keep_the_first_or_the_last_equal_score(ties, kept, at):
    scores = [0.5, 0.7, 0.6, 0.7, 0.65]
    keeper = _keeper(scores, ties=ties)
    _feed(keeper, scores)
    assert (keeper.model, keeper.score, keeper.best_at) == (kept, 0.7, at)


@pytest.mark.parametrize("ties", ["first", "last"])
def test_patience_counts_from_the_last_strictly_better_score(ties):
    scores = [0.5, 0.7, 0.7, 0.6, 0.65]
    keeper = _keeper(scores, patience=3, ties=ties)
    _feed(keeper, scores[:4])  # a tie is no improvement: three evaluations without one at m5
    message = r"dev_accuracy has not improved for 3 evaluations \(best 0\.7 at evaluation"
    with pytest.raises(StopTraining, match=message):
        keeper("m5")
    assert keeper.best_at == (3 if ties == "last" else 2)


def test_patience_resets_on_improvement():
    scores = [0.5, 0.4, 0.6, 0.55, 0.7]
    keeper = _keeper(scores, patience=2)
    _feed(keeper, scores)  # never two in a row without a better score
    assert (keeper.model, keeper.best_at) == ("m5", 5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"patience": 0}, "patience must be at least 1, got 0"), ({"ties": "latest"}, "ties must be 'first' or 'last'")],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        KeepBest(lambda m: 0.0, "dev_accuracy", **kwargs)
