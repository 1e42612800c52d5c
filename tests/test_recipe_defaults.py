"""The tagger's and TextCNN's recipes stop on their dev set, save its best epoch and say so.

Tiny models on tiny, fixed-length data (one bucket, so one compilation per run).
"""

from __future__ import annotations

import argparse
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.data.vocab import Vocab
from zoo.errors import InvalidParameterError
from zoo_tagger.data import read_tagged
from zoo_tagger.recipe import EPOCHS as TAGGER_EPOCHS
from zoo_tagger.recipe import evaluate_tagger
from zoo_tagger.recipe import recipe as tagger_recipe
from zoo_textcnn.optim import kim_optimizer, textcnn_optimizer
from zoo_textcnn.recipe import EPOCHS as TEXTCNN_EPOCHS
from zoo_textcnn.recipe import FEW_TEXTS, accuracy, read_data, small_data_note
from zoo_textcnn.recipe import recipe as textcnn_recipe

TINY_TAGGER = {"embedding_size": 8, "char_embedding_size": 4, "maps": [4], "hidden_size": 8, "dropout": 0.0}
TINY_CNN = {"embedding_size": 8, "maps": [4], "encoder.widths": [2], "dropout": 0.0}
STOPPED = re.compile(
    r"stopped after epoch (\d+): no dev improvement for (\d+) epochs(?: since epoch \d+)?; "
    r"kept epoch (\d+) \([a-z ]+ ([\d.]+)(?:, equal to epoch \d+'s)?\)"
)


def dev_scores(err: str) -> dict[int, float]:
    """The ``epoch N (step S): dev_accuracy A`` lines a run shows, one per epoch."""
    return {
        int(e): float(a)
        for e, a in re.findall(r"^(?:[\w+.-]+: )?epoch (\d+) \(step \d+\): dev_accuracy ([\d.]+)$", err, re.M)
    }


def _options(recipe, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    recipe.add_arguments(parser)
    return parser.parse_args(argv)


def _tagged(path, n: int, seed: int, noise: float) -> None:
    """Five-word sentences whose tag is the word's first letter, a `noise` share of tags random."""
    rng = np.random.default_rng(seed)
    words = [f"{c}{v}" for c in "abcd" for v in "xyz"]
    lines = []
    for _ in range(n):
        sentence = rng.choice(words, size=5)
        tags = [w[0].upper() if rng.random() >= noise else str(rng.choice(list("ABCD"))) for w in sentence]
        lines.append(" ".join(f"{w}/{t}" for w, t in zip(sentence, tags, strict=True)))
    path.write_text("\n".join(lines) + "\n")


def _texts(path, n: int, seed: int, noise: float) -> None:
    """Four-word texts labelled by whether "good" is among them, a `noise` share of labels flipped."""
    rng = np.random.default_rng(seed)
    filler = ["the", "film", "was", "a", "plot", "very", "it", "had"]
    lines = []
    for i in range(n):
        words = list(rng.choice(filler, size=4))
        positive = i % 2 == 0
        if positive:
            words[int(rng.integers(4))] = "good"
        if rng.random() < noise:
            positive = not positive
        lines.append(f"{'pos' if positive else 'neg'}\t{' '.join(words)}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow  # trains the tagger for several epochs
def test_tagger_stops_after_patience_and_saves_the_best_epoch(tmp_path, capsys):
    _tagged(tmp_path / "train.txt", 64, 0, 0.0)
    _tagged(tmp_path / "dev.txt", 40, 1, 0.3)
    argv = ["--data", str(tmp_path / "train.txt"), "--valid", str(tmp_path / "dev.txt")]
    argv += ["--out", str(tmp_path / "t.safetensors"), "--patience", "2", "--lr", "0.05", "--quiet"]
    options = _options(tagger_recipe, argv)
    assert options.epochs == TAGGER_EPOCHS and options.patience == 2
    path = tagger_recipe.train("bilstm-tagger", options, dict(TINY_TAGGER))
    printed = capsys.readouterr()
    assert f"held out: 40 sentences (--valid {tmp_path / 'dev.txt'})" in printed.out
    said = STOPPED.search(printed.out)
    assert said, "the recipe should say it stopped early and which epoch it saves"
    stopped_at, patience, best = (int(g) for g in said.groups()[:3])
    assert patience == 2 and stopped_at == best + 2 < TAGGER_EPOCHS
    scores = dev_scores(printed.err)  # every epoch's, the one that stopped the run too
    assert sorted(scores) == list(range(1, stopped_at + 1))
    assert scores[best] == max(scores.values()) == pytest.approx(float(said.group(4)), abs=1e-4)
    model = zoo.load(path)
    dev = read_tagged(tmp_path / "dev.txt")
    assert evaluate_tagger(model, dev)["accuracy"] == pytest.approx(float(said.group(4)), abs=1e-4)


def test_tagger_patience_0_trains_every_epoch_and_steps_with_epochs_is_refused(tmp_path, capsys):
    _tagged(tmp_path / "train.txt", 150, 0, 0.1)
    base = ["--data", str(tmp_path / "train.txt"), "--out", str(tmp_path / "t.safetensors"), "--quiet"]
    with pytest.raises(InvalidParameterError, match="--steps or --epochs"):
        tagger_recipe.train("bilstm-tagger", _options(tagger_recipe, [*base, "--steps", "8", "--epochs", "2"]), {})
    _, info = tagger_recipe.fit(
        "bilstm-tagger", _options(tagger_recipe, [*base, "--epochs", "3", "--patience", "0"]), dict(TINY_TAGGER)
    )
    assert info["epochs_run"] == 3 and info["stopped"] is None and len(info["history"]) == 3
    out = capsys.readouterr().out
    # --valid-size's default, as --help prints it: a tenth of the sentences, at most 1,000
    assert "held out: 15 sentences (of the 150 in --data: a tenth, at most 1,000)" in out
    assert "trained all 3 epochs; kept epoch" in out
    assert info["best_dev"] == max(info["history"])


def test_textcnn_stops_after_patience_and_saves_the_best_epoch(tmp_path, capsys):
    _texts(tmp_path / "train.tsv", 120, 0, 0.0)
    _texts(tmp_path / "dev.tsv", 60, 1, 0.3)
    argv = ["--data", str(tmp_path / "train.tsv"), "--valid", str(tmp_path / "dev.tsv")]
    argv += ["--out", str(tmp_path / "c.safetensors"), "--patience", "2", "--batch-size", "20", "--quiet"]
    options = _options(textcnn_recipe, argv)
    assert options.optimizer == "adam" and options.lr is None  # Adam at 1e-3; Kim's Adadelta is --optimizer adadelta
    path = textcnn_recipe.train("textcnn", options, dict(TINY_CNN))
    printed = capsys.readouterr()
    out = printed.out
    assert f"held out: 60 texts (--valid {tmp_path / 'dev.tsv'})" in out
    said = STOPPED.search(out)
    assert said, "the recipe should say it stopped early and which epoch it saves"
    stopped_at, patience, best = (int(g) for g in said.groups()[:3])
    # ties go to the later epoch (Kim), so the saved epoch may be one that only equalled the best;
    # patience counts from the first of them (a tie is no improvement), and the line says so
    assert patience == 2 and best <= stopped_at < TEXTCNN_EPOCHS
    scores = dev_scores(printed.err)
    assert sorted(scores) == list(range(1, stopped_at + 1)) and scores[best] == max(scores.values())
    first_best = min(e for e, a in scores.items() if a == scores[best])
    assert stopped_at == first_best + 2
    if first_best != best:
        assert f"since epoch {first_best}; kept epoch {best}" in out and f"equal to epoch {first_best}'s" in out
    model = zoo.load(path)
    dev = read_data(tmp_path / "dev.tsv", text_column=None, label_column=None, lowercase=True)
    assert accuracy(model, dev) == pytest.approx(float(said.group(4)), abs=1e-4)
    assert "note: 120 training texts are few for a TextCNN" in out and "--vectors FILE" in out


def test_textcnn_small_data_note_only_without_vectors_below_the_threshold():
    assert "1,999 training texts" in small_data_note(1999, vectors=False)
    assert small_data_note(1999, vectors=True) is None
    assert small_data_note(FEW_TEXTS, vectors=False) is None


def _cnn_params():
    vocab = Vocab.build([["good", "bad", "film"]], specials=("pad", "unk"))
    labels = Vocab(["neg", "pos"], specials={})
    model = zoo.build("textcnn", key=jax.random.key(0), vocab={"words": vocab, "labels": labels}, **TINY_CNN)
    return model, eqx.filter(model, eqx.is_inexact_array)


def _steps(optimizer, params, n: int = 3):
    """`n` updates of `optimizer` with a fixed, non-uniform gradient; the parameters after them."""
    grads = jax.tree.map(lambda x: jnp.linspace(-2.0, 3.0, x.size).reshape(x.shape), params)
    state = optimizer.init(params)
    for _ in range(n):
        updates, state = optimizer.update(grads, state, params)
        params = eqx.apply_updates(params, updates)
    return params


def test_textcnn_optimizers_adadelta_is_kims_rule_and_adam_keeps_max_norm_and_static_tables():
    model, params = _cnn_params()
    kim, adadelta = _steps(kim_optimizer(), params), _steps(textcnn_optimizer("adadelta"), params)
    for a, b in zip(jax.tree.leaves(kim), jax.tree.leaves(adadelta), strict=True):
        np.testing.assert_array_equal(a, b)
    adam = _steps(textcnn_optimizer("adam", max_norm_limit=0.01), params, n=20)
    assert not np.allclose(adam.encoder.filters[0], kim.encoder.filters[0])
    # unbounded, 20 Adam steps of ~1e-3 would take each class's weights (from zero) to a norm of ~0.04
    np.testing.assert_allclose(np.linalg.norm(adam.output.weight, axis=-1), 0.01, rtol=1e-4)
    static = textcnn_optimizer("adam", train_embeddings=False)
    np.testing.assert_array_equal(_steps(static, params).embedder.weight, model.embedder.weight)
    state_size = lambda o: sum(x.size for x in jax.tree.leaves(o.init(params)))
    assert state_size(textcnn_optimizer("adam")) - state_size(static) == 2 * model.embedder.weight.size
    with pytest.raises(ValueError, match="optimizer must be one of"):
        textcnn_optimizer("sgd")
