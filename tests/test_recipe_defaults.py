"""The tagger's and TextCNN's recipes stop on their dev set, save its best epoch and say so.

Tiny models on tiny, fixed-length data (one bucket, so one compilation per run).
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pytest

import zoo
from zoo.errors import InvalidParameterError
from zoo_tagger.data import read_tagged
from zoo_tagger.recipe import EPOCHS as TAGGER_EPOCHS
from zoo_tagger.recipe import evaluate_tagger
from zoo_tagger.recipe import recipe as tagger_recipe
from zoo_textcnn.recipe import EPOCHS as TEXTCNN_EPOCHS
from zoo_textcnn.recipe import accuracy, read_data
from zoo_textcnn.recipe import recipe as textcnn_recipe

TINY_TAGGER = {"embedding_size": 8, "char_embedding_size": 4, "maps": [4], "hidden_size": 8, "dropout": 0.0}
TINY_CNN = {"embedding_size": 8, "maps": [4], "encoder.widths": [2], "dropout": 0.0}
STOPPED = re.compile(
    r"stopped after epoch (\d+): no dev improvement for (\d+) epochs; saving epoch (\d+) \(.* ([\d.]+)\)"
)


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


def test_tagger_stops_after_patience_and_saves_the_best_epoch(tmp_path, capsys):
    _tagged(tmp_path / "train.txt", 64, 0, 0.0)
    _tagged(tmp_path / "dev.txt", 40, 1, 0.3)
    argv = ["--data", str(tmp_path / "train.txt"), "--valid", str(tmp_path / "dev.txt")]
    argv += ["--out", str(tmp_path / "t.safetensors"), "--patience", "2", "--lr", "0.05", "--quiet"]
    options = _options(tagger_recipe, argv)
    assert options.epochs is None and options.patience == 2
    path = tagger_recipe.train("bilstm-tagger", options, dict(TINY_TAGGER))
    said = STOPPED.search(capsys.readouterr().out)
    assert said, "the recipe should say it stopped early and which epoch it saves"
    stopped_at, patience, best = (int(g) for g in said.groups()[:3])
    assert patience == 2 and stopped_at == best + 2 < TAGGER_EPOCHS
    model = zoo.load(path)
    dev = read_tagged(tmp_path / "dev.txt")
    assert evaluate_tagger(model, dev)["accuracy"] == pytest.approx(float(said.group(4)), abs=1e-4)


def test_tagger_patience_0_trains_every_epoch_and_steps_with_epochs_is_refused(tmp_path, capsys):
    _tagged(tmp_path / "train.txt", 64, 0, 0.0)
    _tagged(tmp_path / "dev.txt", 40, 1, 0.3)
    base = ["--data", str(tmp_path / "train.txt"), "--valid", str(tmp_path / "dev.txt")]
    base += ["--out", str(tmp_path / "t.safetensors"), "--quiet"]
    with pytest.raises(InvalidParameterError, match="--steps or --epochs"):
        tagger_recipe.train("bilstm-tagger", _options(tagger_recipe, [*base, "--steps", "8", "--epochs", "2"]), {})
    _, info = tagger_recipe.fit(
        "bilstm-tagger", _options(tagger_recipe, [*base, "--epochs", "3", "--patience", "0"]), dict(TINY_TAGGER)
    )
    assert info["epochs_run"] == 3 and info["stopped"] is None and len(info["history"]) == 3
    assert "trained all 3 epochs; saving epoch" in capsys.readouterr().out
    assert info["best_dev"] == max(info["history"])


def test_textcnn_stops_after_patience_and_saves_the_best_epoch(tmp_path, capsys):
    _texts(tmp_path / "train.tsv", 120, 0, 0.0)
    _texts(tmp_path / "dev.tsv", 60, 1, 0.3)
    argv = ["--data", str(tmp_path / "train.tsv"), "--valid", str(tmp_path / "dev.tsv")]
    argv += ["--out", str(tmp_path / "c.safetensors"), "--patience", "2", "--batch-size", "20", "--quiet"]
    options = _options(textcnn_recipe, argv)
    path = textcnn_recipe.train("textcnn", options, dict(TINY_CNN))
    said = STOPPED.search(capsys.readouterr().out)
    assert said, "the recipe should say it stopped early and which epoch it saves"
    stopped_at, patience, best = (int(g) for g in said.groups()[:3])
    # ties go to the later epoch (Kim), so the saved epoch may be one that only equalled the best
    assert patience == 2 and best <= stopped_at < TEXTCNN_EPOCHS
    model = zoo.load(path)
    dev = read_data(tmp_path / "dev.tsv", text_column=None, label_column=None, lowercase=True)
    assert accuracy(model, dev) == pytest.approx(float(said.group(4)), abs=1e-4)
