"""What gensim users' code calls around the models, side by side with gensim 4.4 where it is
installed: gensim.models.word2vec's corpus readers, keyedvectors' helpers, the training loss
summed over a `train` call, the errors gensim code catches, and the refusals named (gensim's
pickles, a fastText .bin of two losses, a fastText classifier). Comparisons with gensim or the
fastText package skip without them."""

from __future__ import annotations

import bz2
import gzip
import pickle
import warnings

import numpy as np
import pytest

from zoo.errors import DataError, WeightsError
from zoo.vectors import (
    REAL,
    FastText,
    KeyedVectors,
    LineSentence,
    PathLineSentences,
    Text8Corpus,
    Word2Vec,
    load_facebook_model,
    pseudorandom_weak_vector,
    save_facebook_model,
)
from zoo_word2vec.backends import numba_available

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")

TEXT = "the cat sat on the mat\n\n  a dog   barked at the cat \nthe end\nüber straße café\n" * 3
"""Lines with runs of spaces, an empty line and UTF-8 words."""

TOY = [
    ["human", "interface", "computer"],
    ["survey", "user", "computer", "system", "response", "time"],
    ["eps", "user", "interface", "system"],
    ["system", "human", "system", "eps"],
    ["user", "response", "time"],
    ["trees"],
    ["graph", "trees"],
    ["graph", "minors", "trees"],
    ["graph", "minors", "survey"],
]
"""Nine short sentences of twelve words (29 words): every word is frequent at sample=1e-3."""


@pytest.fixture(scope="module")
def gensim_word2vec():
    return pytest.importorskip("gensim.models.word2vec", reason="the parity tests compare with gensim")


@pytest.fixture
def files(tmp_path):
    """The same text plain, gzipped and bzip2ed, in a folder of its own."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    (folder / "b.txt.gz").write_bytes(gzip.compress(TEXT.upper().encode()))
    (folder / "c.txt.bz2").write_bytes(bz2.compress(TEXT[::-1].encode()))
    return folder


def test_line_sentence_reads_what_gensims_reads(files, gensim_word2vec):
    for name in ("a.txt", "b.txt.gz", "c.txt.bz2"):
        path = str(files / name)
        for options in ({}, {"max_sentence_length": 2}, {"limit": 3}):
            ours = list(LineSentence(path, **options))
            assert ours == list(gensim_word2vec.LineSentence(path, **options)), (name, options)
            assert list(LineSentence(path, **options)) == ours  # restartable
    assert [] not in list(LineSentence(str(files / "a.txt")))  # an empty line gives no sentence
    with open(files / "a.txt", "rb") as handle:  # an open file is read from its start on every pass
        corpus = LineSentence(handle)
        assert list(corpus) == list(corpus) == list(gensim_word2vec.LineSentence(str(files / "a.txt")))
    with bz2.BZ2File(files / "c.txt.bz2") as handle:
        assert list(LineSentence(handle)) == list(gensim_word2vec.LineSentence(str(files / "c.txt.bz2")))


def test_path_line_sentences_and_text8_read_what_gensims_read(files, gensim_word2vec):
    assert list(PathLineSentences(str(files))) == list(gensim_word2vec.PathLineSentences(str(files)))
    one = str(files / "b.txt.gz")
    assert list(PathLineSentences(one, max_sentence_length=3)) == list(
        gensim_word2vec.PathLineSentences(one, max_sentence_length=3)
    )
    for length in (4, 10000):
        assert list(Text8Corpus(files / "a.txt", length)) == list(
            gensim_word2vec.Text8Corpus(str(files / "a.txt"), length)
        )


def test_corpus_readers_refuse_what_they_cannot_read(tmp_path):
    with pytest.raises(DataError, match="no corpus file"):
        list(LineSentence(str(tmp_path / "absent.txt")))
    with pytest.raises(DataError, match="no such file or folder"):
        PathLineSentences(tmp_path / "absent")
    with pytest.raises(DataError, match="max_sentence_length"):
        LineSentence("x.txt", max_sentence_length=0)


@needs_numba
def test_a_line_sentence_trains_as_the_token_lists_do(files):
    settings = {"vector_size": 8, "min_count": 1, "epochs": 1, "workers": 1, "seed": 3}
    read = Word2Vec(LineSentence(str(files / "a.txt")), **settings)
    given = Word2Vec([line.split() for line in TEXT.splitlines() if line.split()], **settings)
    assert read.wv.index_to_key == given.wv.index_to_key
    np.testing.assert_array_equal(read.wv.vectors, given.wv.vectors)


def test_keyedvectors_helpers_as_gensims(tmp_path):
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors", reason="the parity tests compare with gensim")
    from zoo.vectors import _load_word2vec_format

    assert REAL is gensim_kv.REAL is np.float32
    vector = pseudorandom_weak_vector(7, seed_string="king")
    assert vector.dtype == np.float32 and vector.shape == (7,) and np.all(np.abs(vector) <= 0.5 / 7)
    np.testing.assert_array_equal(vector, pseudorandom_weak_vector(7, seed_string="king"))  # same process, same hash
    assert not np.array_equal(pseudorandom_weak_vector(7), pseudorandom_weak_vector(7))
    path = tmp_path / "v.bin"
    KeyedVectors(["a", "bb", "c"], np.arange(6, dtype=np.float32).reshape(3, 2)).save_word2vec_format(path, binary=True)
    ours = _load_word2vec_format(KeyedVectors, fname=path, binary=True, limit=2, binary_chunk_size=5)
    theirs = gensim_kv._load_word2vec_format(gensim_kv.KeyedVectors, fname=str(path), binary=True, limit=2)
    assert isinstance(ours, KeyedVectors) and ours.index_to_key == theirs.index_to_key == ["a", "bb"]
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)


def test_an_undecodable_word_is_gensims_unicode_decode_error(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("2 2\ncafé 1 2\nthé 3 4\n".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError) as caught:
        KeyedVectors.load_word2vec_format(path, binary=False)
    assert isinstance(caught.value, DataError) and "encoding='latin-1'" in str(caught.value)
    assert caught.value.encoding == "utf-8" and caught.value.reason == "invalid continuation byte"
    assert KeyedVectors.load_word2vec_format(path, binary=False, encoding="latin-1").index_to_key == ["café", "thé"]


@needs_numba
def test_the_training_loss_is_summed_over_the_call_as_gensims():
    gensim_models = pytest.importorskip("gensim.models", reason="the parity tests compare with gensim")
    rng = np.random.default_rng(0)
    weights = 1 / np.arange(1, 201)
    sentences = [list(rng.choice([f"w{i}" for i in range(200)], 12, p=weights / weights.sum())) for _ in range(300)]
    for hs, negative in ((0, 5), (1, 0)):
        losses = []
        for cls in (Word2Vec, gensim_models.Word2Vec):
            model = cls(
                sentences, vector_size=16, min_count=1, sg=1, hs=hs, negative=negative, epochs=2, workers=1,
                sample=0, seed=3, compute_loss=True,
            )  # fmt: skip
            losses.append(model.get_latest_training_loss())
        assert losses[0] == pytest.approx(losses[1], rel=0.1), (hs, negative)  # the same sum, up to the draws
    model = Word2Vec(sentences, vector_size=16, min_count=1, sg=1, epochs=2, workers=1, seed=3)
    first = model.get_latest_training_loss()
    assert first == pytest.approx(sum(h["loss"] * h["pairs"] for h in model.history))
    model.train(sentences, total_examples=len(sentences), epochs=1)  # a new call starts from zero
    assert model.get_latest_training_loss() == pytest.approx(model.history[-1]["loss"] * model.history[-1]["pairs"])
    assert model.get_latest_training_loss() < first


@needs_numba
@pytest.mark.parametrize("sg", [1, 0], ids=["skipgram", "cbow"])
def test_train_returns_gensims_effective_and_raw_word_counts(sg):
    """``train`` returns ``(trained_word_count, raw_word_count)`` over its epochs: raw counts every
    token (words under min_count too), effective those kept by the vocabulary and subsampling."""
    gensim_models = pytest.importorskip("gensim.models", reason="the parity tests compare with gensim")
    rng = np.random.default_rng(5)
    weights = 1 / np.arange(1, 301)
    vocab = [f"w{i}" for i in range(300)]
    sentences = [list(rng.choice(vocab, 15, p=weights / weights.sum())) for _ in range(400)]
    raw = sum(map(len, sentences))
    counts = {}
    for cls in (Word2Vec, gensim_models.Word2Vec):
        for sample in (1e-3, 0):
            model = cls(vector_size=8, min_count=3, sg=sg, sample=sample, workers=1, seed=2)
            model.build_vocab(sentences)
            counts["zoo" if cls is Word2Vec else "gensim", sample] = model.train(
                sentences, total_examples=len(sentences), epochs=3
            )
    in_vocabulary = counts["gensim", 0][0]
    assert in_vocabulary < 3 * raw  # min_count dropped some words
    for side in ("zoo", "gensim"):
        trained, seen = counts[side, 1e-3]
        assert seen == 3 * raw and counts[side, 0] == (in_vocabulary, 3 * raw)
        assert trained < in_vocabulary  # subsampling drops frequent words
    ours, theirs = counts["zoo", 1e-3][0], counts["gensim", 1e-3][0]
    assert ours == pytest.approx(theirs, rel=0.04)  # the same expected count, different draws (sd ~1%)


@needs_numba
def test_a_tiny_corpus_at_gensims_sample_still_trains_some_pairs():
    """At sample=1e-3 each of the 29 words is kept with probability 0.09 to 0.13 (gensim's
    formula), so a few pairs train over five epochs, as in gensim; the seeds of successive jobs
    and runs are independent streams, not shifted copies of one."""
    trained = 0
    for seed in range(4):
        model = Word2Vec(min_count=1, sg=1, negative=5, hs=1, seed=seed, workers=1)
        model.build_vocab(TOY)
        probabilities = model.wv.expandos["sample_int"] / 2**32
        assert probabilities.min() > 0.09 and probabilities.max() < 0.14
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.train(TOY, compute_loss=True, total_examples=model.corpus_count, epochs=model.epochs)
        assert model.get_latest_training_loss() > 0.0, seed
        trained += sum(h["pairs"] > 0 for h in model.history)
    assert trained < 4 * 5  # subsampling leaves some epochs without a pair


def test_job_seeds_are_not_shifted_copies_of_one_stream():
    from zoo_word2vec.kernels import splitmix64
    from zoo_word2vec.training import job_seed

    def draws(seed, count=64):
        state, out = np.uint64(seed), []
        for _ in range(count):
            state, bits = splitmix64(np.uint64(state))
            out.append(int(bits))
        return set(out)

    streams = [draws(job_seed(s, i)) for s in range(3) for i in range(3)]
    for a in range(len(streams)):
        for b in range(a + 1, len(streams)):
            assert not streams[a] & streams[b]


def test_gensims_pickled_models_are_refused_named(tmp_path):
    path = tmp_path / "model.w2v"
    path.write_bytes(pickle.dumps({"a gensim model": 1}, protocol=2))
    for cls in (Word2Vec, FastText):
        with pytest.raises(WeightsError, match=f"pickle.*gensim's {cls.__name__}.save.*never loads") as caught:
            cls.load(path)
        assert (
            "save_facebook_model" in str(caught.value)
            if cls is FastText
            else "save_word2vec_format" in str(caught.value)
        )


@needs_numba
def test_gensims_own_pickle_is_refused_with_what_to_write_instead(tmp_path):
    gensim_models = pytest.importorskip("gensim.models", reason="gensim writes the pickle")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gensim_models.Word2Vec(TOY, vector_size=4, min_count=1, epochs=1).save(str(tmp_path / "g.model"))
    with pytest.raises(WeightsError, match="Python pickle"):
        Word2Vec.load(tmp_path / "g.model")


@needs_numba
def test_a_fasttext_bin_of_two_losses_is_refused_naming_why(tmp_path):
    model = FastText(TOY, vector_size=4, min_count=1, hs=1, negative=5, bucket=50, epochs=1, workers=1)
    with pytest.raises(DataError, match=r"hs=1, negative=5.*fastText trains one loss") as caught:
        save_facebook_model(model, tmp_path / "both.bin")
    assert "negative=0" in str(caught.value) and not (tmp_path / "both.bin").exists()
    for hs, negative in ((1, 0), (0, 5)):  # one loss each: written, and read back alike
        one = FastText(TOY, vector_size=4, min_count=1, hs=hs, negative=negative, bucket=50, epochs=1, workers=1)
        back = load_facebook_model(save_facebook_model(one, tmp_path / f"{hs}.bin"))
        assert (back.hs, back.negative) == (hs, negative)
        np.testing.assert_allclose(back.wv["graph"], one.wv["graph"], atol=1e-6)


def test_a_fasttext_classifier_is_gensims_not_implemented_even_in_latin_1(tmp_path):
    fasttext = pytest.importorskip("fasttext", reason="the fastText package (the bench extra) is not installed")
    text = tmp_path / "train.txt"
    text.write_bytes("".join(f"__label__{i % 2} café crème w{i % 37}\n" for i in range(400)).encode("latin-1"))
    # fastText 0.9.3 reports a NaN loss on a file this small unless its default 12 threads share it
    trained = fasttext.train_supervised(str(text), epoch=1, dim=4, minCount=1, bucket=100, thread=12, verbose=0)
    trained.save_model(str(tmp_path / "classifier.bin"))
    with pytest.raises(NotImplementedError, match="classifier") as caught:
        load_facebook_model(tmp_path / "classifier.bin")
    assert isinstance(caught.value, DataError) and "zoo.load" in str(caught.value)


def test_a_fasttext_bin_with_words_not_in_its_encoding_loads_as_gensim_loads_it(tmp_path, caplog):
    fasttext = pytest.importorskip("fasttext", reason="the fastText package (the bench extra) is not installed")
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext", reason="the parity tests compare with gensim")
    text = tmp_path / "text.txt"
    text.write_bytes("".join(f"the café w{i % 37} crème x{i % 11}\n" for i in range(400)).encode("latin-1"))
    trained = fasttext.train_unsupervised(str(text), epoch=1, dim=4, minCount=1, bucket=100, thread=12, verbose=0)
    trained.save_model(str(tmp_path / "latin.bin"))
    with caplog.at_level("ERROR"):
        ours = load_facebook_model(tmp_path / "latin.bin")
    assert "backslash escapes" in caplog.text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = gensim_fasttext.load_facebook_model(str(tmp_path / "latin.bin"))
    assert ours.wv.index_to_key == theirs.wv.index_to_key and "caf\\xe9" in ours.wv.index_to_key
    np.testing.assert_allclose(ours.wv.vectors_vocab, theirs.wv.vectors_vocab, atol=1e-6)
