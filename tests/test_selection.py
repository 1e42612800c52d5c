"""KeepBest: which model it keeps, when it stops, what it says."""

from __future__ import annotations

import pytest

from zoo.errors import DataError
from zoo.training.recipes import HeldOutShare, held_out_size, hold_out
from zoo.training.selection import KeepBest, StopTraining, held_out_line, last_kept_line


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


def _stopped(scores: list[float], **kwargs) -> KeepBest:
    keeper = _keeper(scores, **kwargs)
    with pytest.raises(StopTraining) as stop:
        _feed(keeper, scores)
    assert stop.value.scores == {"dev_accuracy": scores[-1]}  # what zoo.train shows for the last evaluation
    return keeper


def test_the_report_says_why_it_stopped_and_what_it_kept_with_its_score():
    keeper = _stopped([0.5, 0.8123, 0.7, 0.6], patience=2)
    assert keeper.report(unit="epoch") == (
        "stopped after epoch 4: no dev improvement for 2 epochs; kept epoch 2 (dev accuracy 0.8123)"
    )
    assert keeper.report(unit="epoch", label="dev token accuracy").endswith("(dev token accuracy 0.8123)")


def test_a_kept_tie_is_named_and_patience_counts_from_the_first_of_the_equal_scores():
    keeper = _stopped([0.5, 0.7, 0.6, 0.7, 0.6], patience=3, ties="last")
    assert keeper.report(unit="epoch") == (
        "stopped after epoch 5: no dev improvement for 3 epochs since epoch 2; "
        "kept epoch 4 (dev accuracy 0.7000, equal to epoch 2's)"
    )
    assert (keeper.best_at, keeper.improved_at) == (4, 2)


def test_a_run_that_did_not_stop_early_says_so():
    keeper = _keeper([0.5, 0.6, 0.55])
    _feed(keeper, [0.5, 0.6, 0.55])
    assert keeper.report(unit="epoch") == "trained all 3 epochs; kept epoch 2 (dev accuracy 0.6000)"
    assert keeper.report(unit="epoch", planned=50, on_time=True) == (
        "the time budget ran out in epoch 3 of 50; kept epoch 2 (dev accuracy 0.6000)"
    )
    climbing = _keeper([0.5, 0.6])
    _feed(climbing, [0.5, 0.6])
    assert climbing.report(unit="epoch").endswith(
        "warning: dev accuracy was still improving at the last epoch, more may help"
    )
    one = _keeper([0.5])
    _feed(one, [0.5])
    assert one.report(unit="epoch") == "trained all 1 epoch; kept epoch 1 (dev accuracy 0.5000)"


def test_the_lines_of_a_run_without_selection():
    assert held_out_line(90, "sentences", "of the 900 in --data") == "held out: 90 sentences (of the 900 in --data)"
    assert held_out_line(0, "text", "the vectors train on the whole corpus") == (
        "held out: none (the vectors train on the whole corpus)"
    )
    assert last_kept_line(25, 25, "epoch") == "trained all 25 epochs; kept the last"
    assert last_kept_line(7, 25, "epoch", on_time=True, scores="loss 0.1") == (
        "the time budget ran out after epoch 7 of 25; kept the last (loss 0.1)"
    )
    assert last_kept_line(1234, None, "step", on_time=True) == "the time budget ran out after step 1,234; kept the last"
    assert last_kept_line(0.5, 0.5, "epoch") == "trained all 0.5 epochs; kept the last"


@pytest.mark.parametrize(
    ("requested", "available", "held"),
    [
        (HeldOutShare(1000, "sentences"), 900, 90),
        (HeldOutShare(1000, "sentences"), 20000, 1000),
        (50, 900, 50),
        (0, 9, 0),
    ],
)
def test_valid_size_holds_out_its_default_share_or_exactly_what_is_asked(requested, available, held):
    assert held_out_size(requested, available, "sentences") == held


def test_valid_size_prints_the_rule_it_applies_and_refuses_to_hold_out_everything():
    rule = HeldOutShare(1000, "sentences")
    assert str(rule) == "a tenth of the sentences, at most 1,000"
    assert hold_out(rule, 900, what="sentences") == (
        90,
        "held out: 90 sentences (of the 900 in --data: a tenth, at most 1,000)",
    )
    assert hold_out(50, 900, what="sentences")[1] == "held out: 50 sentences (of the 900 in --data: --valid-size 50)"
    with pytest.raises(DataError, match="--valid-size 900 would hold out all 900 sentences, leaving none to train on"):
        held_out_size(900, 900, "sentences")
