"""fasttext-classifier: fastText's supervised mode (hashing, training, predict, files, the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zoo
from zoo.cli.main import main
from zoo.data.paths import shared_data
from zoo_word2vec.classifier.data import read_labelled
from zoo_word2vec.classifier.features import Featurizer
from zoo_word2vec.classifier.fit import fit
from zoo_word2vec.classifier.recipe import score

NAME = "fasttext-classifier"
SMALL = {"dim": 16, "bucket": 5000, "word_ngrams": 2}


def fnv1a_by_hand(token: str) -> int:
    """fastText's ``Dictionary::hash``: FNV-1a over the UTF-8 bytes, each byte sign-extended (int8)."""
    h = 2166136261
    for byte in token.encode("utf-8"):
        signed = byte - 256 if byte >= 128 else byte
        h = ((h ^ (signed & 0xFFFFFFFF)) * 16777619) % 2**32
    return h


def bigram_bucket_by_hand(a: str, b: str, bucket: int) -> int:
    """fastText's addWordNgrams for two tokens: int32 hashes widened to uint64 with their sign."""
    widen = lambda h: (h - 2**32 if h >= 2**31 else h) % 2**64
    h = widen(fnv1a_by_hand(a))
    h = (h * 116049371 + widen(fnv1a_by_hand(b))) % 2**64
    return h % bucket


@pytest.fixture(scope="module")
def reviews(tmp_path_factory) -> tuple[Path, Path]:
    """1,600 training and 400 test sentences of the movie-review data, in fastText's format."""
    source = shared_data("classify", "movie-review-sentences.tsv")
    if source is None:
        pytest.skip("no shared data folder (set ZOO_DATA_DIR): classify/movie-review-sentences.tsv")
    data = read_labelled(source, split=lambda text: text.lower().split())
    order = np.random.default_rng(0).permutation(len(data))
    folder = tmp_path_factory.mktemp("reviews")
    paths = []
    for name, rows in (("train.txt", order[:1600]), ("test.txt", order[1600:2000])):
        lines = [f"__label__{data.labels[i][0]} {' '.join(data.texts[i])}\n" for i in rows]
        (folder / name).write_text("".join(lines), encoding="utf-8")
        paths.append(folder / name)
    return paths[0], paths[1]


@pytest.fixture(scope="module")
def trained(reviews):
    model, stats = fit(NAME, read_labelled(reviews[0]), epochs=10, lr=0.5, threads=2, overrides=SMALL)
    return model, stats


def test_word_bigram_rows_are_fasttexts_bucket_ids():
    from zoo.data.vocab import Vocab

    words = Vocab(["good", "</s>"], None, {})
    bucket = 2_000_003
    featurizer = Featurizer(words, bucket=bucket, word_ngrams=2, minn=0, maxn=0)
    line = ["good", "film", "très", "bon"]  # "très": a byte >= 0x80, sign-extended into the hash
    _, rows = featurizer.rows([line])
    tokens = [*line, "</s>"]
    expected = [0] + [
        len(words) + bigram_bucket_by_hand(a, b, bucket) for a, b in zip(tokens, tokens[1:], strict=False)
    ]
    assert rows.tolist() == [0, 1, *expected[1:]], "own rows of known words (good, </s>), then the bigrams"
    assert any(fnv1a_by_hand(t) >= 2**31 for t in tokens), "an example whose int32 hash is negative"


def test_learns_movie_reviews_above_the_majority_baseline(reviews, trained):
    model, stats = trained
    test = read_labelled(reviews[1])
    majority = max(np.mean([ls == ("__label__positive",) for ls in test.labels]), 0.5)
    metrics = score(model, test, k=1)
    assert metrics["accuracy"] > majority + 0.1, (metrics, majority)
    assert metrics["P@1"] == metrics["accuracy"] == metrics["R@1"] and metrics["N"] == 400  # one label a line
    # two Hogwild threads stop once their tokens add up to 10 epochs, reported every 100 tokens
    assert abs(stats.lines - 10 * 1600) < 100 and 0 < stats.loss < np.log(2)


def test_predict_k_and_threshold(trained):
    model, _ = trained
    labels, probs = model.predict("a wonderful , moving film", k=-1)
    assert set(labels) == {"__label__positive", "__label__negative"}
    # fastText reports exp(log(p + 1e-5)) and compares p itself with the threshold
    assert probs[0] >= probs[1] and abs(probs.sum() - 1.0 - 2e-5) < 1e-6
    assert model.predict("a wonderful , moving film") == (labels[:1], pytest.approx(probs[:1]))
    assert model.predict("a wonderful , moving film", k=2, threshold=float(probs[0]) + 1e-6)[0] == ()
    assert model.predict("a wonderful , moving film", k=5, threshold=float(probs[1]) - 2e-5)[0] == labels
    assert model.predict("a wonderful , moving film", k=5, threshold=float(probs[1]))[0] == labels[:1]
    texts = ["dull and tedious", "a wonderful , moving film"]
    many, many_probs = model.predict(texts, k=1)  # a list: one (labels, probabilities) per text
    assert many == [model.predict(t)[0] for t in texts] and len(many_probs) == 2
    np.testing.assert_allclose(model.predict_proba(["a wonderful , moving film"])[0][[0, 1]].sum(), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="k must be"):
        model.predict("film", k=0)


def test_sentence_vector_is_the_mean_of_the_input_rows(reviews):
    small = {"dim": 8, "bucket": 100_000, "word_ngrams": 2}
    model, _ = fit(NAME, read_labelled(reviews[0]).subset(range(200)), epochs=1, overrides=small)
    _, rows = model.input_rows(["a moving unseen-word"])
    stored = np.concatenate([np.asarray(model.input), np.zeros((1, model.spec["dim"]), np.float32)])
    assert (rows == -1).any(), "an n-gram whose row training never touched: a zero row, not stored"
    np.testing.assert_allclose(model.get_sentence_vector("a moving unseen-word"), stored[rows].mean(0), rtol=1e-6)


def test_one_vs_all_predicts_several_labels(tmp_path):
    rng = np.random.default_rng(0)
    filler = [f"w{i}" for i in range(30)]
    lines = []
    for _ in range(600):
        red, blue = rng.random() < 0.5, rng.random() < 0.5
        words = list(rng.choice(filler, 4)) + ["red"] * red + ["blue"] * blue
        labels = ["__label__red"] * red + ["__label__blue"] * blue + ["__label__none"] * (not (red or blue))
        rng.shuffle(words)
        lines.append(" ".join(labels + words) + "\n")
    (tmp_path / "multi.txt").write_text("".join(lines), encoding="utf-8")
    data = read_labelled(tmp_path / "multi.txt")
    model, _ = fit(NAME, data, epochs=10, lr=0.5, threads=1, overrides={"dim": 8, "loss": "ova"})
    both, probs = model.predict("w1 red w2 blue", k=-1, threshold=0.5)
    assert set(both) == {"__label__red", "__label__blue"} and all(p >= 0.5 for p in probs)
    assert model.predict("w3 blue w4", k=-1, threshold=0.5)[0] == ("__label__blue",)
    assert score(model, data, k=2)["R@2"] > 0.95


def test_save_load_is_exact(trained, tmp_path):
    model, _ = trained
    loaded = zoo.load(zoo.save(model, tmp_path / "ft.safetensors"))
    assert loaded.spec == model.spec and loaded.vocabs == model.vocabs
    texts = ["a wonderful , moving film", "dull"]
    np.testing.assert_array_equal(loaded.predict_proba(texts), model.predict_proba(texts))
    np.testing.assert_array_equal(np.asarray(loaded.input), np.asarray(model.input))


def test_cli_train_eval_classify(reviews, tmp_path, capsys):
    out = tmp_path / "cli.safetensors"
    argv = ["train", NAME, "--data", str(reviews[0]), "--out", str(out), "--epoch", "5", "--lr", "0.5"]
    assert main([*argv, "--dim", "10", "--bucket", "3000", "--word-ngrams", "2", "--threads", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", str(out), "--data", str(reviews[1]), "--k", "2", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["N"] == 400 and metrics["R@2"] == 1.0 and metrics["P@2"] == 0.5
    assert metrics["accuracy"] > 0.6
    assert main(["classify", str(out), "an utterly wonderful film"]) == 0
    assert capsys.readouterr().out.split("\t")[0] in {"__label__positive", "__label__negative"}


def test_reads_tab_separated_and_review_files(tmp_path):
    (tmp_path / "tsv.txt").write_text("pos\tgood film\nneg\tbad  film\n", encoding="utf-8")
    data = read_labelled(tmp_path / "tsv.txt")
    assert data.labels == [("pos",), ("neg",)] and data.texts == [["good", "film"], ["bad", "film"]]
    (tmp_path / "r.tsv").write_text("id\tsentiment\ttext\n1\t2.5\tgood\n2\t0\tmeh\n3\t-1\tbad\n", encoding="utf-8")
    assert read_labelled(tmp_path / "r.tsv").labels == [("positive",), ("negative",)]


@pytest.mark.parametrize(
    ("flag", "value"), [("--dim", "0"), ("--word-ngrams", "0"), ("--bucket", "-1"), ("--loss", "nce")]
)
def test_bad_flags_are_refused_before_reading_data(tmp_path, capsys, flag, value):
    missing = tmp_path / "never-read.txt"
    try:  # a usage error (argparse) or a hyperparameter out of its domain (zoo): status 2 either way
        status = main(["train", NAME, "--data", str(missing), "--out", str(tmp_path / "m.safetensors"), flag, value])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and flag in err and "never-read" not in err
