"""``zoo tag``, ``zoo classify`` and ``zoo eval`` on saved models; ``zoo train textcnn``."""

from __future__ import annotations

import json

import jax
import pytest

import zoo
from zoo.cli.main import main
from zoo.data.vocab import Vocab


@pytest.fixture(scope="module")
def tagger_file(tmp_path_factory):
    words = Vocab.build([["the", "cat", "sat"]], specials=("pad", "unk"))
    tags = Vocab(["DT", "NN", "VBD"], specials={})
    model = zoo.build(
        "bilstm-tagger+chars=none", key=jax.random.key(0), vocab={"words": words, "tags": tags}, embedding_size=4
    )
    return zoo.save(model, tmp_path_factory.mktemp("cli") / "tagger.safetensors"), model


def test_zoo_tag_prints_word_slash_tag_and_conll(tagger_file, tmp_path, capsys):
    path, model = tagger_file
    expected = model.tag([["The", "cat", "sat"], ["sat"]])
    assert main(["tag", str(path), "The cat sat", "sat"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        " ".join(f"{w}/{t}" for w, t in zip(["The", "cat", "sat"], expected[0], strict=True)),
        f"sat/{expected[1][0]}",
    ]
    lines = tmp_path / "in.txt"
    lines.write_text("The cat sat\n\nsat\n")
    assert main(["tag", str(path), "--file", str(lines), "--format", "conll"]) == 0
    assert (
        capsys.readouterr().out
        == f"The\t{expected[0][0]}\ncat\t{expected[0][1]}\nsat\t{expected[0][2]}\n\nsat\t{expected[1][0]}\n\n"
    )


def test_zoo_tag_and_classify_refuse_the_wrong_model(tagger_file, capsys):
    path, _ = tagger_file
    assert main(["classify", str(path), "some text"]) == 2
    assert "does not classify" in capsys.readouterr().err


def test_zoo_train_textcnn_then_classify(tmp_path, capsys):
    data = tmp_path / "train.tsv"
    rows = [("pos", "a good fun film"), ("neg", "a dull bad film"), ("pos", "great acting"), ("neg", "awful plot")]
    data.write_text("".join(f"{label}\t{text}\n" for label, text in rows * 15))
    out = tmp_path / "cnn.safetensors"
    args = ["train", "textcnn", "--data", str(data), "--out", str(out), "--epochs", "1", "--quiet"]
    assert main([*args, "--set", "embedding_size=8", "--set", "encoder.maps=[4]"]) == 0
    capsys.readouterr()
    assert main(["classify", str(out), "great fun", "bad plot", "--probabilities"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].endswith("\tgreat fun") and "neg=" in lines[0] and "pos=" in lines[0]
    assert main(["eval", str(out), "--data", str(data), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert scores["examples"] == 60 and 0.0 <= scores["accuracy"] <= 1.0


def test_zoo_eval_scores_a_tagger(tagger_file, tmp_path, capsys):
    path, model = tagger_file
    gold = tmp_path / "gold.txt"
    gold.write_text("The/DT cat/NN sat/VBD\nsat/VBD\n")
    predicted = model.tag([["The", "cat", "sat"], ["sat"]])
    right = sum(p == g for p, g in zip(predicted[0] + predicted[1], ["DT", "NN", "VBD", "VBD"], strict=True))
    assert main(["eval", str(path), "--data", str(gold), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert scores["tokens"] == 4 and scores["accuracy"] == pytest.approx(right / 4)
