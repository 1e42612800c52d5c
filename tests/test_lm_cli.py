"""zoo train / eval / generate for language models, and the charlm demo's parts."""

import json

import pytest

from zoo.cli.main import main

LINES = "the cat sat on the mat\nthe dog sat on the log\n" * 30


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lm")
    (folder / "train.txt").write_text(LINES)
    (folder / "valid.txt").write_text("the cat sat on the log\nthe bird sat\n")
    out = folder / "lm.safetensors"
    code = main(
        ["train", "lstm-lm", "--data", str(folder / "train.txt"), "--valid", str(folder / "valid.txt"),
         "--steps", "120", "--batch-size", "4", "--unroll", "8", "--optimizer", "adam", "--lr", "0.02",
         "--set", "hidden_size=16", "--set", "embedding_size=16", "--quiet", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    return folder, out


def test_eval_prints_perplexity(trained, capsys):
    folder, model = trained
    capsys.readouterr()
    assert main(["eval", str(model), "--data", str(folder / "valid.txt"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["model"] == "lstm-lm" and scores["tokens"] == 10  # 11 tokens with </s>, the first not predicted
    assert scores["unknown"] == pytest.approx(1 / 11)  # "bird"
    assert 1.0 < scores["perplexity"] < 8.0, scores  # 11 tokens in the vocabulary: a guess would be ~11


def test_generate_is_reproducible_by_seed(trained, capsys):
    _, model = trained
    capsys.readouterr()
    args = ["generate", str(model), "--prompt", "the dog", "--length", "12", "--top-k", "3", "--seed", "7"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    assert first.startswith("the dog ")
    assert main(["generate", str(model), "--temperature", "0", "--length", "6", "--prompt", "the cat"]) == 0
    assert capsys.readouterr().out.split()[:5] == ["the", "cat", "sat", "on", "the"]


def test_generate_and_eval_refuse_models_they_cannot_use(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["generate", "m.safetensors", "--top-p", "1.5"])
    assert "argument --top-p: 1.5 is out of range: it must be a number in (0, 1]" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "missing.safetensors"), "--data", "x"]) == 2
    assert "no weights file" in capsys.readouterr().err


def test_the_built_in_text_is_hamlet():
    from zoo_lm.demo import hamlet

    text = hamlet()
    assert text.startswith("HAMLET, PRINCE OF DENMARK") and 150_000 < len(text) < 300_000
    assert "To be, or not to be" in text
