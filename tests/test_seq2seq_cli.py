"""Seq2seq from the command line: the data summary, validation with keep-best and early
stopping, the time budget, and ``zoo eval --pairs`` scored by sacreBLEU."""

from __future__ import annotations

import contextlib
import io
import json
import re

import jax
import numpy as np
import optax
import pytest
import sacrebleu

import zoo
from zoo.cli.main import main
from zoo.errors import InvalidParameterError
from zoo.training.trainer import time_budget
from zoo_seq2seq.data import pair_batches
from zoo_seq2seq.tasks import digit_vocab, reversal_pairs

TINY = [
    "--set",
    "hidden_size=8",
    "--set",
    "embedding_size=8",
    "--batch-size",
    "16",
    "--max-length",
    "10",
    "--lr",
    "0.02",
    "--quiet",
]
"""A tiny model, the same in every run, so runs share their compilations."""


def run_zoo(*argv: str) -> tuple[int, str]:
    """``zoo ARGV`` in this process: its status and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as stop:
            status = int(stop.code or 0)
    return status, out.getvalue() + err.getvalue()


def write_pairs(path, sources, targets, extra: str = "") -> None:
    lines = [f"{' '.join(s)}\t{' '.join(t)}\n" for s, t in zip(sources, targets, strict=True)]
    path.write_text("".join(lines) + extra, encoding="utf-8")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The reversal task as pairs files: training (with a long, an empty and a bad line) and validation.

    Every pair is 5 tokens long, so every run compiles one training step (one bucket)."""
    folder = tmp_path_factory.mktemp("reversal")
    src, tgt = reversal_pairs(200, min_length=5, max_length=5, seed=0)
    write_pairs(folder / "train.tsv", src, tgt, "1 2 3 4 5 6 7 8 9 0 1 2 3\tlong\n\t5 4\nno tab here\n")
    src, tgt = reversal_pairs(20, min_length=5, max_length=5, seed=1)
    src[0], tgt[0] = ["1", "x", "2", "3", "4"], ["4", "3", "2", "x", "1"]  # 'x' is unknown to the training data
    write_pairs(folder / "valid.tsv", src, tgt)
    return folder


@pytest.fixture(scope="module")
def trained(files):
    """A tiny model trained with --valid, evaluated every 10 steps; what the run printed."""
    out = files / "model.safetensors"
    status, printed = run_zoo(
        "train", "seq2seq+luong-dot", "--data", str(files / "train.tsv"), "--valid", str(files / "valid.tsv"),
        "--steps", "40", "--eval-every", "10", "--out", str(out), *TINY,
    )  # fmt: skip
    assert status == 0, printed
    return out, printed


def test_the_data_summary(files, trained):
    printed = trained[1]
    assert (
        f"data: {files / 'train.tsv'}: 203 pairs read, 200 kept, 3 dropped (1 too long (> 10 tokens); "
        f"1 with an empty side; 1 bad line, the first {files / 'train.tsv'}:203: expected 'source<TAB>target', "
        "got 'no tab here')"
    ) in printed
    assert f"data: {files / 'valid.tsv'}: 20 pairs read, 20 kept, 0 dropped\n" in printed
    assert f"data: 200 training pairs, 20 validation pairs (--valid {files / 'valid.tsv'})" in printed
    assert "data: vocabulary: source 14 tokens, target 14 (reserved ones included)" in printed  # 4 + 10 digits
    lines = (files / "valid.tsv").read_text().splitlines()
    tokens = sum(len(line.split("\t")[0].split()) for line in lines)
    rate = f"{1 / tokens:.2%}"
    assert f"unknown tokens: training source 0.00%, target 0.00%; validation source {rate}, target {rate}" in printed


def evaluations(printed: str) -> dict[int, dict[str, float]]:
    """The run's ``step N: metric value, ...`` lines."""
    found = {}
    # "step 10: ...", or "epoch 2 (step 26): ..." where a step ends an epoch
    found_at = r"^(?:[\w+.-]+: )?(?:epoch \d+ \()?step (\d+)\)?: (valid_loss .*)$"
    for step, figures in re.findall(found_at, printed, flags=re.M):
        found[int(step)] = {k: float(v) for k, v in (pair.split(" ") for pair in figures.split(", "))}
    return found


def test_zoo_eval_reports_sacrebleu_and_keeps_the_best(files, trained, capsys):
    out, printed = trained
    history = evaluations(printed)
    assert sorted(history) == [10, 20, 30, 40]
    best_step = max(history, key=lambda s: (history[s]["bleu"], -s))  # ties keep the earlier
    assert f"saving the best of 4 evaluations by bleu: step {best_step} (" in printed

    assert main(["eval", str(out), "--data", str(files / "valid.tsv")]) == 0
    text = capsys.readouterr().out
    assert "bleu_signature  nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:" in text
    assert "chrf_signature  nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|version:" in text
    assert re.search(r"^  exact_match +[0-9.]+$", text, flags=re.M)
    assert main(["eval", str(out), "--data", str(files / "valid.tsv"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["pairs"] == 20
    # the saved model is the best evaluation's: it scores what that evaluation printed
    assert scores["bleu"] == pytest.approx(history[best_step]["bleu"], rel=5e-4, abs=1e-3)
    assert scores["exact_match"] == pytest.approx(history[best_step]["exact_match"], abs=1e-3)

    model = zoo.load(out)
    lines = [line.split("\t") for line in (files / "valid.tsv").read_text().splitlines()]
    hypotheses = model.translate([s for s, _ in lines])
    references = [t for _, t in lines]
    assert scores["bleu"] == sacrebleu.corpus_bleu(hypotheses, [references], lowercase=True).score
    assert scores["chrf"] == sacrebleu.metrics.CHRF(lowercase=True).corpus_score(hypotheses, [references]).score
    wanted = np.mean([h.split() == r.split() for h, r in zip(hypotheses, references, strict=True)])
    assert scores["exact_match"] == pytest.approx(wanted)

    assert main(["eval", str(out), "--data", str(files / "valid.tsv"), "--beam", "3", "--length-penalty", "0.6"]) == 0
    assert "bleu" in capsys.readouterr().out
    assert main(["eval", str(out), "--data", str(files / "valid.tsv"), "--length-penalty", "0.6"]) == 2
    assert "--length-penalty needs --beam K" in capsys.readouterr().err


def test_minutes_stops_on_time_and_keeps_the_best(files):
    out = files / "timed.safetensors"
    status, printed = run_zoo(
        "train", "seq2seq+luong-dot", "--data", str(files / "train.tsv"), "--valid", str(files / "valid.tsv"),
        "--steps", "100000", "--eval-every", "5", "--minutes", "0.05", "--patience", "0", "--out", str(out), *TINY,
    )  # fmt: skip
    assert status == 0, printed
    stopped = re.search(r"stopped on time: the time budget ran out after step (\d+) of 100000", printed)
    assert stopped, printed
    last = int(stopped.group(1))
    history = evaluations(printed)
    assert max(history) == last  # the last step was evaluated like the end of a run
    best_step = max(history, key=lambda s: (history[s]["bleu"], -s))
    assert f"saving the best of {len(history)} evaluations by bleu: step {best_step} (" in printed
    assert zoo.load(out).spec.name == "seq2seq+luong-dot"


def test_early_stopping_after_patience(files):
    out = files / "early.safetensors"
    status, printed = run_zoo(
        "train", "seq2seq+luong-dot", "--data", str(files / "train.tsv"), "--valid", str(files / "valid.tsv"),
        "--epochs", "100", "--eval-every", "2", "--patience", "2", "--keep-best-by", "exact_match",
        "--out", str(out), *TINY,
    )  # fmt: skip
    assert status == 0, printed
    assert "100 epochs of 13 batches: 1,300 steps" in printed
    # a model this small matches no reversal after 6 steps: exact match stays 0, the first 0 is kept
    assert sorted(evaluations(printed)) == [2, 4, 6]
    assert "stopped after step 6: no exact_match improvement for 2 evaluations" in printed
    assert "saving the best of 3 evaluations by exact_match: step 2 (" in printed
    assert out.exists()


@pytest.mark.parametrize(("name", "data"), [("seq2seq", "--data"), ("bilstm-tagger", "--data")])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_minutes_must_be_positive(tmp_path, name, data, value):
    status, printed = run_zoo("train", name, data, "x", "--out", str(tmp_path / "m"), "--minutes", value)
    assert status == 2
    assert f"argument --minutes: {value} is out of range: it must be a finite number > 0" in printed


def test_steps_and_epochs_are_one_or_the_other(tmp_path):
    status, printed = run_zoo(
        "train", "seq2seq", "--task", "reversal", "--steps", "5", "--epochs", "1", "--out", str(tmp_path / "m")
    )
    assert status == 2
    assert "give --steps or --epochs, not both" in printed


def test_train_stops_on_a_time_limit_or_an_enclosing_budget():
    vocab = digit_vocab()
    src, tgt = reversal_pairs(64, min_length=5, max_length=5)
    data = pair_batches(vocab, vocab, src, tgt, batch_size=16)
    model = zoo.build("seq2seq", key=jax.random.key(0), vocab={"src": vocab, "tgt": vocab}, hidden_size=4)
    run = {"key": jax.random.key(1), "optimizer": optax.adam(1e-3), "progress": False}  # one compilation
    result = zoo.train(model, data, steps=10**9, time_limit=0.2, **run)
    assert result.stopped_on_time and 0 < result.step < 10**9
    with time_budget(0.2):  # how zoo train --minutes reaches every recipe's zoo.train
        result = zoo.train(model, data, steps=10**9, **run)
    assert result.stopped_on_time and 0 < result.step < 10**9
    result = zoo.train(model, data, steps=3, time_limit=1e6, **run)
    assert not result.stopped_on_time and result.step == 3
    for bad in (0, -1.0, float("nan"), float("inf"), True):
        with pytest.raises(InvalidParameterError, match="time_limit=.* is out of range"):
            zoo.train(model, data, steps=3, time_limit=bad, **run)


def test_a_resumed_valid_run_equals_the_uninterrupted_one(files, trained, tmp_path):
    """Stopped after 20 of 40 steps (as a kill after the checkpoint at step 20 leaves it) and
    resumed three times in all: the same kept model and the same report as the run straight through."""
    whole, whole_printed = trained
    common = ["train", "seq2seq+luong-dot", "--data", str(files / "train.tsv"), "--valid", str(files / "valid.tsv"),
              "--eval-every", "10", "--checkpoint", str(tmp_path / "run.ckpt"), "--checkpoint-every", "10", *TINY]  # fmt: skip
    for steps in ("10", "20", "30", "40"):
        status, printed = run_zoo(
            *common, "--steps", steps, "--resume", "--out", str(tmp_path / f"m{steps}.safetensors")
        )
        assert status == 0, printed
    kept = [line for line in printed.splitlines() if line.startswith("saving the best")]
    assert kept == [line for line in whole_printed.splitlines() if line.startswith("saving the best")]
    assert "of 4 evaluations" in kept[0]
    a, b = zoo.load(whole), zoo.load(tmp_path / "m40.safetensors")
    for x, y in zip(jax.tree.leaves(eqx_arrays(a)), jax.tree.leaves(eqx_arrays(b)), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def eqx_arrays(model):
    import equinox as eqx

    return eqx.filter(model, eqx.is_array)
