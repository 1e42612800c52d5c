"""fasttext-classifier's machinery: the compiled reader, the stored buckets, the losses over labels, the
Huffman tree, quantized rows."""

from __future__ import annotations

import gzip
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.errors import DataError
from zoo_word2vec.classifier.data import LabelledLines, read_labelled, word_vocab
from zoo_word2vec.classifier.fit import fit, train_lines
from zoo_word2vec.classifier.kernels import uniform_rows
from zoo_word2vec.classifier.objectives import label_probabilities
from zoo_word2vec.classifier.reading import MAX_LINE_CHARS
from zoo_word2vec.classifier.splitting import fasttext_split
from zoo_word2vec.fasttext_files.quantized import ProductQuantizer, QuantizedMatrix
from zoo_word2vec.huffman import huffman_tree

NAME = "fasttext-classifier"


def _lines(rng: np.random.Generator, n: int) -> list[str]:
    """Two separable labels over a small vocabulary, with filler words."""
    out = []
    for _ in range(n):
        good = rng.random() < 0.5
        words = [*rng.choice(["great", "fine", "moving"] if good else ["dull", "bad", "tedious"], 2)]
        words += [f"w{int(i)}" for i in rng.integers(0, 300, 5)]
        rng.shuffle(words)
        out.append(f"__label__{'pos' if good else 'neg'} " + " ".join(words))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    path.write_text("\n".join(_lines(np.random.default_rng(0), 600)) + "\n", encoding="utf-8")
    return path


def test_the_compiled_reader_splits_as_fasttext_and_as_the_python_path(tmp_path):
    text = (
        "__label__a  caf\u00e9\u00a0noir\tx\r\n\n   \n__label__b __label__c y\x0bz\x0c w __label__a\n"
        "q __label__b"  # no newline at the end
    )
    (tmp_path / "a.txt").write_bytes(text.encode("utf-8"))
    with gzip.open(tmp_path / "a.txt.gz", "wb") as out:
        out.write(text.encode("utf-8"))
    expected_texts = [["caf\u00e9\u00a0noir", "x"], ["y", "z", "w"], ["q"]]  # a no-break space is inside a token
    expected_labels = [("__label__a",), ("__label__b", "__label__c", "__label__a"), ("__label__b",)]
    for name in ("a.txt", "a.txt.gz"):
        data = read_labelled(tmp_path / name)
        assert data.texts == expected_texts and data.labels == expected_labels
    assert [fasttext_split(line) for line in ["a\u00a0b c", " x\ty "]] == [["a\u00a0b", "c"], ["x", "y"]]
    listed = LabelledLines(expected_texts, expected_labels)
    assert word_vocab(listed).tokens == word_vocab(read_labelled(tmp_path / "a.txt")).tokens


def test_the_reader_names_bad_bytes_and_skips_overlong_lines(tmp_path):
    good = b"__label__a fine\n" * 100_000  # past what the format detection reads
    (tmp_path / "bad.txt").write_bytes(good + b"__label__b caf\xe9\n")
    with pytest.raises(DataError, match=r"bad.txt:100001: byte e9 is not valid utf-8"):
        read_labelled(tmp_path / "bad.txt")
    assert read_labelled(tmp_path / "bad.txt", encoding="latin-1").texts[-1] == ["caf\u00e9"]
    (tmp_path / "nul.txt").write_bytes(good + b"__label__b x\0y\n")
    with pytest.raises(DataError, match=r"nul.txt:100001: a NUL byte"):
        read_labelled(tmp_path / "nul.txt")
    long = b"__label__a " + b"x" * (5 * MAX_LINE_CHARS) + b"\n"
    (tmp_path / "long.txt").write_bytes(b"__label__a one\n" + long + b"__label__b two\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = read_labelled(tmp_path / "long.txt")
    assert data.texts == [["one"], ["two"]] and any("skipped 1 lines" in str(w.message) for w in caught)


def test_only_the_buckets_training_uses_are_stored_drawn_as_in_the_full_matrix(corpus):
    data = read_labelled(corpus)
    settings = {"dim": 8, "bucket": 200_000, "word_ngrams": 2}
    model, _ = fit(NAME, data, epochs=1, lr=0.0, overrides=settings)  # lr 0: the start, untouched
    nwords, kept = model.spec["vocab_size"], np.asarray(model.bucket_ids)
    _, rows = model.featurizer().encoded_rows(data.encoded())
    assert np.array_equal(kept, np.unique(rows[rows >= nwords] - nwords)) and kept.size < 200_000 // 20
    assert model.spec["stored_buckets"] == kept.size and model.input.shape == (nwords + kept.size, 8)
    full_rows = np.concatenate([np.arange(nwords), nwords + kept])
    expected = np.empty((full_rows.size, 8), np.float32)
    uniform_rows(expected, full_rows, 1.0 / 8, 2 * 0 + 1)
    np.testing.assert_array_equal(np.asarray(model.input), expected)
    again, _ = fit(NAME, data, epochs=2, lr=0.5, overrides=settings)
    same, _ = fit(NAME, data, epochs=2, lr=0.5, overrides=settings)
    np.testing.assert_array_equal(np.asarray(again.input), np.asarray(same.input))  # one thread: reproducible
    new_lines = LabelledLines([["brand", "new", "words"]] * 3, [("__label__pos",)] * 3)
    grown, _ = train_lines(again, new_lines, epochs=1, lr=0.1)
    assert grown.spec["stored_buckets"] > again.spec["stored_buckets"]
    assert set(np.asarray(again.bucket_ids)) <= set(np.asarray(grown.bucket_ids))


@pytest.mark.parametrize("loss", ["hs", "ns", "ova"])
def test_each_loss_learns_and_its_jax_objective_agrees(corpus, tmp_path, loss):
    data = read_labelled(corpus)
    model, _ = fit(NAME, data, epochs=5, lr=0.5, overrides={"dim": 8, "loss": loss, "bucket": 10_000})
    probs = model.predict_proba(["great moving w1", "dull tedious w2"])
    assert probs[0, model.vocabs["labels"].index["__label__pos"]] > 0.8
    assert probs[1, model.vocabs["labels"].index["__label__neg"]] > 0.8
    if loss == "hs":
        np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    texts = ["w1 w7", "w3 w4 great"]  # not too sure: a loss well above float32's floor
    probs = model.predict_proba(texts)
    offsets, rows = model.input_rows(texts)
    width = int(np.diff(offsets).max())
    padded = np.zeros((2, width), np.int32)
    mask = np.zeros((2, width), bool)
    for i in range(2):
        line = rows[offsets[i] : offsets[i + 1]]
        padded[i, : line.size], mask[i, : line.size] = line, True
    labels = jax.nn.one_hot(jnp.asarray([model.vocabs["labels"].index[y] for y in ("__label__pos", "__label__neg")]), 2)
    batch = {"inputs": jnp.asarray(padded), "inputs_mask": jnp.asarray(mask), "labels": labels}
    targets = np.asarray(labels.argmax(-1))
    p_target, p_other = probs[[0, 1], targets], probs[[0, 1], 1 - targets]
    weight = {"hs": 0.0, "ova": 1.0, "ns": 5.0}[loss]  # hs: -log p; ova, ns: -log p - w log(1 - p_other)
    expected = np.mean(-np.log(p_target) - weight * np.log1p(-p_other))
    assert float(model.loss(batch)) == pytest.approx(expected, rel=1e-4)
    copy = zoo.load(zoo.save(model, tmp_path / f"{loss}.safetensors"))
    np.testing.assert_array_equal(copy.predict_proba(["great w3"]), model.predict_proba(["great w3"]))


def test_the_huffman_tree_is_fasttexts():
    # leaves 0..3; node 4 joins leaves 3 and 2 (count 3); node 5 joins node 4 and leaf 1 (a leaf is
    # taken first only when its count is strictly smaller: 3 < 3 fails); the root joins leaf 0 and node 5
    tree = huffman_tree(np.array([5, 3, 2, 1]))
    assert tree.left.tolist()[4:] == [3, 4, 0] and tree.right.tolist()[4:] == [2, 1, 5]
    paths = [tree.nodes[tree.offsets[c] : tree.offsets[c + 1]].tolist() for c in range(4)]
    codes = [tree.codes[tree.offsets[c] : tree.offsets[c + 1]].tolist() for c in range(4)]
    assert paths == [[2], [1, 2], [0, 1, 2], [0, 1, 2]]  # output rows = node - 4
    assert codes == [[False], [True, True], [True, False, True], [False, False, True]]
    probs = label_probabilities(np.array([[0.3, -1.0, 2.0, 9.9]], np.float32), "hs", np.array([5, 3, 2, 1]))
    assert probs.sum() == pytest.approx(1.0, rel=1e-6)


def test_quantized_rows_decode_as_fasttext_adds_them():
    rng = np.random.default_rng(0)
    quantizer = ProductQuantizer(5, 3, 2, 1, rng.standard_normal(256 * 5).astype(np.float32))
    norms = ProductQuantizer(1, 1, 1, 1, rng.random(256).astype(np.float32))
    codes = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    a, b, e = (int(x) for x in codes[2])
    matrix = QuantizedMatrix(codes, quantizer, rng.integers(0, 256, 4).astype(np.uint8), norms)
    row = matrix[2]
    c = quantizer.centroids
    by_hand = np.concatenate([c[2 * a : 2 * a + 2], c[512 + 2 * b : 512 + 2 * b + 2], c[1024 + e : 1024 + e + 1]])
    by_hand = by_hand * norms.centroids[matrix.norm_codes[2]]
    np.testing.assert_array_equal(row, by_hand.astype(np.float32))
    with pytest.raises(DataError, match="does not add up"):
        ProductQuantizer(5, 2, 2, 1, quantizer.centroids).check("crafted")
