"""Whole fastText models through gensim's functions: a ``.bin`` the fastText package trained loads with
`load_facebook_model` (words, counts, word and n-gram rows, output layer, settings) as gensim loads
it, training goes on in zoo, `save_facebook_model` writes it back, and the fastText package loads
that file with zoo's vectors and trains on from them; gensim's FastText ``wv`` attributes and
``bucket=0``. Tests needing the fastText package or gensim skip without them."""

from __future__ import annotations

import gzip
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest

from zoo.errors import DataError, InvalidParameterError, ZooError
from zoo.vectors import FastText, load_facebook_model, save_facebook_model
from zoo_word2vec.backends import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "en-mix.txt.gz"
THREADS = 12  # fastText's default; on this small corpus fewer threads make fastText 0.9.3 report NaN losses


@pytest.fixture(scope="module")
def lines():
    if not CORPUS.is_file():
        pytest.skip(f"the shared corpus {CORPUS.name} is absent (../shared/data/corpus)")
    with gzip.open(CORPUS, "rt", encoding="utf-8") as text:
        return [line.strip() for line in itertools.islice(text, 3000) if line.strip()]


@pytest.fixture(scope="module")
def fasttext_bin(lines, tmp_path_factory):
    """(the fastText package, a skip-gram .bin it trained on 3,000 lines, the text file)."""
    fasttext = pytest.importorskip("fasttext", reason="the fastText package (the bench extra) is not installed")
    folder = tmp_path_factory.mktemp("fb")
    text = folder / "text.txt"
    text.write_text("\n".join(lines) + "\n")
    trained = fasttext.train_unsupervised(
        str(text), model="skipgram", dim=16, minCount=2, bucket=3000, epoch=2, thread=THREADS, verbose=0
    )
    trained.save_model(str(folder / "theirs.bin"))
    return fasttext, folder / "theirs.bin", text


def test_a_fasttext_bin_loads_whole_trains_on_and_goes_back_to_fasttext(fasttext_bin, lines, tmp_path):
    fasttext, path, text = fasttext_bin
    theirs = fasttext.load_model(str(path))
    model = load_facebook_model(path)
    assert model.wv.index_to_key == theirs.words
    np.testing.assert_array_equal(model.wv.expandos["count"], theirs.get_words(include_freq=True)[1])
    args = theirs.f.getArgs()
    assert (model.vector_size, model.window, model.epochs, model.negative, model.min_count) == (16, 5, 2, 5, 2)
    assert (model.wv.bucket, model.wv.min_n, model.wv.max_n, model.sample) == (3000, args.minn, args.maxn, args.t)
    np.testing.assert_array_equal(model.syn1neg, theirs.get_output_matrix())
    np.testing.assert_array_equal(np.concatenate([model.wv.vectors_vocab, model.wv.vectors_ngrams]),
                                  theirs.get_input_matrix())  # fmt: skip
    for word in ["the", "city", "unseenwordly", "Zürich"]:
        np.testing.assert_allclose(model.wv[word], theirs.get_word_vector(word), atol=1e-6)
    sentences = [line.split() for line in lines]
    before = model.wv["city"].copy()
    model.train(sentences, total_examples=len(sentences), epochs=1)
    assert np.isfinite(model.history[-1]["loss"]) and not np.allclose(before, model.wv["city"])
    ours = save_facebook_model(model, tmp_path / "ours.bin")
    back = fasttext.load_model(str(ours))
    assert back.words == model.wv.index_to_key
    for word in ["city", "the", "unseenwordly"]:
        np.testing.assert_allclose(back.get_word_vector(word), model.wv[word], atol=1e-6)
    near = [w for _, w in back.get_nearest_neighbors("city", k=5)]
    assert near == [w for w, _ in model.wv.most_similar("city", topn=5)]
    # fastText trains on from a model's vectors through -pretrainedVectors (a .vec of them)
    vec = tmp_path / "ours.vec"
    vec.write_text(
        f"{len(back.words)} 16\n" + "".join(f"{w} {' '.join(map(str, back.get_word_vector(w)))}\n" for w in back.words)
    )
    again = fasttext.train_unsupervised(
        str(text), model="skipgram", dim=16, minCount=2, bucket=3000, epoch=1, thread=THREADS, verbose=0,
        pretrainedVectors=str(vec),
    )  # fmt: skip
    assert set(again.words) == set(back.words) and np.isfinite(again.get_input_matrix()).all()
    reloaded = load_facebook_model(ours)
    rows = [i for i, w in enumerate(model.wv.index_to_key) if w != "</s>"]  # composed again from n-grams, as gensim
    np.testing.assert_array_equal(reloaded.wv.vectors[rows], model.wv.vectors[rows])
    np.testing.assert_array_equal(reloaded.syn1neg, model.syn1neg)


def test_gensim_loads_the_same_model_from_either_file(fasttext_bin, tmp_path):
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext", reason="gensim is not installed")
    _, path, _ = fasttext_bin
    ours = load_facebook_model(path)
    written = save_facebook_model(ours, tmp_path / "ours.bin")
    for source in (path, written):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = gensim_fasttext.load_facebook_model(str(source))
        assert ours.wv.index_to_key == theirs.wv.index_to_key and ours.wv.bucket == theirs.wv.bucket
        # fastText's end of line, </s>, has no n-grams there: its .bin row is its whole vector, which
        # zoo (as fastText) writes; gensim composes it from n-grams anyway, so its row differs there
        rows = [i for i, w in enumerate(ours.wv.index_to_key) if source == path or w != "</s>"]
        np.testing.assert_array_equal(ours.wv.vectors_vocab[rows], theirs.wv.vectors_vocab[rows])
        np.testing.assert_array_equal(ours.wv.vectors_ngrams, theirs.wv.vectors_ngrams)
        np.testing.assert_allclose(ours.wv.vectors[rows], theirs.wv.vectors[rows], atol=1e-6)
        np.testing.assert_array_equal(ours.syn1neg, theirs.syn1neg)
        assert (ours.epochs, ours.window, ours.negative, ours.min_count) == (
            theirs.epochs, theirs.window, theirs.negative, theirs.min_count
        )  # fmt: skip
        assert ours.corpus_total_words == theirs.corpus_total_words
        np.testing.assert_allclose(ours.wv["unseenwordly"], theirs.wv["unseenwordly"], atol=1e-6)


def test_a_classifier_or_a_non_model_is_refused(tmp_path):
    with pytest.raises(DataError, match="save_facebook_model writes a FastText"):
        save_facebook_model(FastText(), tmp_path / "x.bin")
    (tmp_path / "x.bin").write_bytes(b"\x00" * 40)
    with pytest.raises(ZooError):
        load_facebook_model(tmp_path / "x.bin")


def test_bucket_zero_turns_ngrams_off_as_gensim(lines):
    sentences = [line.split() for line in lines[:1500]]
    model = FastText(sentences, vector_size=16, bucket=0, sg=1, min_count=3, epochs=1, workers=1)
    assert model.wv.bucket == 0 and model.wv.vectors_ngrams.shape == (0, 16)
    np.testing.assert_allclose(model.wv.vectors, model.wv.vectors_vocab, atol=1e-6)  # a word is its own row
    assert "the" in model.wv and "zzqqxx" not in model.wv
    with pytest.raises(KeyError, match="without ngrams"):
        model.wv["zzqqxx"]
    with_ngrams = FastText(sentences, vector_size=16, bucket=500, sg=1, min_count=3, epochs=1, workers=1)
    assert "zzqqxx" in with_ngrams.wv and not with_ngrams.wv.has_index_for("zzqqxx")
    assert with_ngrams.wv.vectors_ngrams.shape == (500, 16)
    assert with_ngrams.wv.vectors_vocab.shape == (len(with_ngrams.wv), 16)
    with pytest.raises(InvalidParameterError, match="bucket"):
        FastText(bucket=-1)


def test_cbow_and_hs_bins_train_on_and_go_back_to_fasttext(fasttext_bin, lines, tmp_path):
    fasttext, _, text = fasttext_bin
    small = dict(dim=8, minCount=3, bucket=500, epoch=1, thread=THREADS, verbose=0)
    sentences = [line.split() for line in lines[:500]]
    for name, options, expected in (
        ("cbow", {"model": "cbow"}, ("cbow", "ns")),
        ("hs", {"loss": "hs"}, ("skipgram", "hs")),
    ):
        options = {"model": "skipgram", **options, **small}
        fasttext.train_unsupervised(str(text), **options).save_model(str(tmp_path / f"{name}.bin"))
        model = load_facebook_model(tmp_path / f"{name}.bin")
        assert (model.sg, model.hs) == (int(expected[0] == "skipgram"), int(expected[1] == "hs"))
        model.train(sentences, total_examples=len(sentences), epochs=1)
        back = fasttext.load_model(str(save_facebook_model(model, tmp_path / f"{name}-again.bin")))
        assert (back.f.getArgs().model.name, back.f.getArgs().loss.name) == expected
        np.testing.assert_allclose(back.get_word_vector("city"), model.wv["city"], atol=1e-6)


def test_a_bin_of_fasttexts_first_layout_loads_as_gensim_loads_it():
    """fastText before its file version 11 wrote no signature; gensim ships such a file."""
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext", reason="gensim is not installed")
    from gensim.test.utils import datapath

    path = Path(datapath("lee_fasttext.bin"))
    ours = load_facebook_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = gensim_fasttext.load_facebook_model(str(path))
    assert ours.wv.index_to_key == theirs.wv.index_to_key and ours.wv.bucket == theirs.wv.bucket == 1000
    np.testing.assert_allclose(ours.wv.vectors, theirs.wv.vectors, atol=1e-6)
    np.testing.assert_array_equal(ours.syn1neg, theirs.syn1neg)
    np.testing.assert_allclose(ours.wv["nonexistent"], theirs.wv["nonexistent"], atol=1e-6)
    assert (ours.epochs, ours.window, ours.min_count) == (theirs.epochs, theirs.window, theirs.min_count)


def test_an_empty_fasttext_table_fills_as_gensims():
    from zoo.vectors import FastTextKeyedVectors

    for table in (FastTextKeyedVectors(vector_size=2, min_n=3, max_n=6, bucket=50), FastTextKeyedVectors(2, 3, 6, 50)):
        table.add_vectors(["a", "b"], np.array([[0, 0], [1, 1]]))
        table.add_vector("c", np.array([2, 3]))
        assert table.index_to_key == ["a", "b", "c"] and (table.bucket, table.min_n, table.max_n) == (50, 3, 6)
        np.testing.assert_array_equal(table.vectors_vocab, [[0, 0], [1, 1], [2, 3]])
        assert table.vectors_ngrams.shape == (50, 2) and not table.vectors_ngrams.any()
        assert table.compatible_hash
        table.adjust_vectors()  # nothing to redo: the vectors stay
        np.testing.assert_array_equal(table.vectors, table.vectors_vocab)
