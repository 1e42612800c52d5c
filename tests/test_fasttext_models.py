"""fastText's supervised models in zoo: ``.bin`` and ``.ftz`` files the fastText package wrote, read by
``zoo.load``/``zoo import``/``zoo classify``/``zoo eval``, predicting what the package predicts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zoo
from zoo.building.store import Store
from zoo.cli.main import main
from zoo.data.paths import shared_data
from zoo.errors import DataError, WeightsError

fasttext = pytest.importorskip("fasttext", reason="the fastText package (the bench extra) is not installed")

SMALL = {"epoch": 5, "lr": 0.1, "wordNgrams": 2, "dim": 16, "bucket": 20000, "verbose": 0}
# 12 threads, as fastText's command line: with fewer than 11, fastText 0.9.3 leaves part of its
# input matrix undrawn (and reads stale memory there: "Encountered NaN" on some runs)
THREADS = 12


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reviews(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """2,000 movie-review sentences to train on and 1,000 others, in fastText's format."""
    source = shared_data("classify", "movie-review-sentences.tsv")
    if source is None:
        pytest.skip("no shared data folder (set ZOO_DATA_DIR): classify/movie-review-sentences.tsv")
    rows = [line.split("\t") for line in source.read_text(encoding="utf-8").splitlines()][1:]
    lines = [f"__label__{'pos' if float(s) > 0 else 'neg'} {t.lower()}" for _, s, t in rows if float(s) != 0]
    order = np.random.default_rng(0).permutation(len(lines))
    folder = tmp_path_factory.mktemp("reviews")
    train = _write(folder / "train.txt", [lines[i] for i in order[:2000]])
    test = _write(folder / "test.txt", [lines[i] for i in order[2000:3000]])
    texts = [line.split(" ", 1)[1] for line in test.read_text(encoding="utf-8").splitlines()]
    return train, test, texts


def _train(train: Path, folder: Path, name: str, quantize: dict | None = None, **extra) -> dict[str, Path]:
    model = fasttext.train_supervised(input=str(train), thread=THREADS, seed=0, **SMALL, **extra)
    model.save_model(str(folder / f"{name}.bin"))
    out = {name: folder / f"{name}.bin"}
    if quantize is not None:  # the package's quantize
        model.quantize(input=str(train), **quantize)
        model.save_model(str(folder / f"{name}.ftz"))
        out[f"{name}.ftz"] = folder / f"{name}.ftz"
    return out


@pytest.fixture(scope="module")
def models(reviews, tmp_path_factory) -> dict[str, Path]:
    """Supervised models the package trained, softmax and ova, and the same quantized (norms too)."""
    folder = tmp_path_factory.mktemp("models")
    return {
        **_train(reviews[0], folder, "softmax", {"qnorm": True}),
        **_train(reviews[0], folder, "ova", {"qnorm": True}, loss="ova"),
    }


@pytest.fixture(scope="module")
def more_models(reviews, tmp_path_factory) -> dict[str, Path]:
    """hs, ns, and character n-grams with a pruned dictionary (the 3,000 rows of largest norm kept)."""
    folder = tmp_path_factory.mktemp("more")
    return {
        **_train(reviews[0], folder, "hs", loss="hs"),
        **_train(reviews[0], folder, "ns", loss="ns"),
        **_train(reviews[0], folder, "chars-cutoff", {"cutoff": 3000}, minn=2, maxn=4),
    }


def _same_predictions(path: Path, model, texts: list[str], k: int, threshold: float) -> None:
    theirs = fasttext.load_model(str(path))
    labels, probs = theirs.predict(texts, k=k, threshold=threshold)
    ours, our_probs = model.predict(texts, k=k, threshold=threshold)
    assert [tuple(ls) for ls in labels] == ours, f"{path.name}: labels differ (k={k}, threshold={threshold})"
    for mine, expected in zip(our_probs, probs, strict=True):
        np.testing.assert_allclose(mine, expected, atol=1e-5, rtol=0)


SETTINGS = ((1, 0.0), (-1, 0.0), (2, 0.3))  # k, threshold


@pytest.mark.parametrize("name", ["softmax", "ova", "softmax.ftz", "ova.ftz"])
def test_predictions_equal_the_packages_on_1000_texts(models, reviews, name):
    _, _, texts = reviews
    model = zoo.load(models[name])
    assert model.spec.arch == "fasttext-classifier" and len(texts) == 1000
    for k, threshold in SETTINGS:
        _same_predictions(models[name], model, texts, k, threshold)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hs", "ns", "chars-cutoff", "chars-cutoff.ftz"])
def test_other_losses_and_pruned_files_predict_as_the_package(more_models, reviews, name):
    _, _, texts = reviews
    model = zoo.load(more_models[name])
    for k, threshold in (*SETTINGS, (1, 0.8)):
        _same_predictions(more_models[name], model, texts, k, threshold)


@pytest.mark.slow
def test_the_files_keep_what_fasttext_keeps(models, more_models):
    assert zoo.load(more_models["hs"]).spec["loss"] == "hs" and zoo.load(more_models["ns"]).spec["loss"] == "ns"
    quantized = zoo.load(models["softmax.ftz"])
    assert quantized.spec["quantize_dsub"] == 2 and quantized.spec["quantize_norm"]
    assert np.asarray(quantized.input.codes).dtype == np.uint8
    pruned = zoo.load(more_models["chars-cutoff.ftz"])
    assert pruned.spec["unstored_buckets"] == "drop" and 0 < pruned.spec["stored_buckets"] < 3000
    assert pruned.spec["minn"] == 2 and pruned.spec["maxn"] == 4
    text = "__label__pos an utterly wonderful film"  # a label among the words is left out, as fastText does
    assert pruned.predict(text) == pruned.predict("an utterly wonderful film")


def test_import_store_classify_and_eval_as_fasttext(models, reviews, tmp_path, monkeypatch, capsys):
    _, test, texts = reviews
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    assert main(["import", str(models["ova.ftz"]), "--as", "reviews.ova"]) == 0
    assert "fasttext-classifier" in capsys.readouterr().out
    entry = Store(tmp_path / "home").get("reviews.ova")
    assert entry.kind == "model" and entry.path.suffix == ".safetensors"
    stored = zoo.load("reviews.ova")
    _same_predictions(models["ova.ftz"], stored, texts[:200], -1, 0.0)
    assert main(["classify", "reviews.ova", "--k", "2", "--threshold", "0.1", *texts[:5]]) == 0
    theirs = fasttext.load_model(str(models["ova.ftz"]))
    for line, text in zip(capsys.readouterr().out.splitlines(), texts[:5], strict=True):
        labels, probs = theirs.predict([text], k=2, threshold=0.1)
        assert line == " ".join(f"{label} {p:.6g}" for label, p in zip(labels[0], probs[0], strict=True))
    assert main(["eval", str(models["softmax.ftz"]), "--data", str(test), "--k", "2", "--per-label", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    n, precision, recall = fasttext.load_model(str(models["softmax.ftz"])).test(str(test), k=2)
    assert (metrics["N"], metrics["P@2"], metrics["R@2"]) == (n, pytest.approx(precision), pytest.approx(recall))
    by_label = fasttext.load_model(str(models["softmax.ftz"])).test_label(str(test), k=2)
    for label, values in by_label.items():
        assert metrics[f"precision {label}"] == pytest.approx(values["precision"])
        assert metrics[f"recall {label}"] == pytest.approx(values["recall"])
        assert metrics[f"f1 {label}"] == pytest.approx(values["f1score"])


def test_a_zoo_saved_copy_predicts_the_same(models, reviews, tmp_path):
    _, _, texts = reviews
    for name in ("softmax.ftz", "ova"):
        model = zoo.load(models[name])
        copy = zoo.load(zoo.save(model, tmp_path / f"{name}.safetensors"))
        assert copy.spec == model.spec
        (labels, probs), (their_labels, their_probs) = copy.predict(texts[:100], k=-1), model.predict(texts[:100], k=-1)
        assert labels == their_labels
        np.testing.assert_array_equal(np.concatenate(probs), np.concatenate(their_probs))


def test_vectors_files_and_crafted_files_are_refused_clearly(models, tmp_path, reviews):
    train, _, _ = reviews
    skipgram = fasttext.train_unsupervised(
        str(train), model="skipgram", dim=8, epoch=1, minCount=1, bucket=1000, thread=THREADS, verbose=0
    )
    skipgram.save_model(str(tmp_path / "sg.bin"))
    with pytest.raises(WeightsError, match="word vectors, not a model.*KeyedVectors.load"):
        zoo.load(tmp_path / "sg.bin")
    data = models["softmax.ftz"].read_bytes()
    last = max(data.find(b"__label__neg"), data.find(b"__label__pos"))  # the dictionary's last entry
    rows_at = last + len(b"__label__pos") + 1 + 9 + 2  # its NUL, count, type; the flag and qnorm bytes
    cases = {
        "cut": data[: len(data) // 2],  # truncated inside the codes
        "rows": data[:rows_at] + (10**12).to_bytes(8, "little") + data[rows_at + 8 :],  # m = 10**12 rows
        "tail": data + b"\0",
    }
    for name, crafted in cases.items():
        (tmp_path / f"{name}.ftz").write_bytes(crafted)
        with pytest.raises(DataError) as error:
            zoo.load(tmp_path / f"{name}.ftz")
        assert f"{name}.ftz" in str(error.value), error.value
