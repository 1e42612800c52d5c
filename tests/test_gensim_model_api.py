"""gensim's vocabulary and model API on zoo's Word2Vec and FastText, side by side with gensim 4.4:
the vocabulary scan and its rules (trim_rule, max_vocab_size, max_final_vocab, sorted_vocab), the
reports, per-word attributes, build_vocab_from_freq, predict_output_word, reset_from, the wv
setter, estimate_memory, callbacks' hooks and save's options. Without gensim those tests skip."""

from __future__ import annotations

import warnings

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.errors import DataError, InvalidParameterError
from zoo.vectors import RULE_DEFAULT, RULE_DISCARD, RULE_KEEP, CallbackAny2Vec, FastText, KeyedVectors, Word2Vec
from zoo_word2vec.backends import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")


@pytest.fixture(scope="module")
def gensim_models():
    return pytest.importorskip("gensim.models", reason="the parity tests compare with gensim (pip install gensim)")


@pytest.fixture(scope="module")
def zipf():
    """400 sentences of Zipf-distributed words ``w1``..``w59``: many ties among the rare counts."""
    rng = np.random.default_rng(0)
    sentences = [[f"w{int(x)}" for x in rng.zipf(1.5, 12) if x < 60] for _ in range(400)]
    return [s for s in sentences if s]


def rule(word, count, min_count):
    """Drop the most frequent word, keep two rare ones whatever their count."""
    return RULE_DISCARD if word == "w1" else RULE_KEEP if word in ("w50", "w51") else RULE_DEFAULT


def both(gensim_models, cls="Word2Vec", **settings):
    settings = {"vector_size": 8, "seed": 1, "workers": 1, **settings}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"Word2Vec": Word2Vec, "FastText": FastText}[cls](**settings), getattr(gensim_models, cls)(**settings)


def same_vocabulary(ours, theirs):
    assert ours.wv.index_to_key == theirs.wv.index_to_key
    assert ours.wv.expandos.keys() == theirs.wv.expandos.keys() == {"count", "sample_int"}
    for attr in ("count", "sample_int"):
        np.testing.assert_array_equal(ours.wv.expandos[attr], theirs.wv.expandos[attr])
        assert ours.wv.get_vecattr(ours.wv.index_to_key[-1], attr) == theirs.wv.get_vecattr(
            theirs.wv.index_to_key[-1], attr
        )


def test_the_rule_constants_are_gensims(gensim_models):
    from gensim import utils

    assert (RULE_DEFAULT, RULE_DISCARD, RULE_KEEP) == (utils.RULE_DEFAULT, utils.RULE_DISCARD, utils.RULE_KEEP)


def test_scan_then_prepare_reports_and_keeps_what_gensim_keeps(gensim_models, zipf):
    ours, theirs = both(gensim_models, min_count=3)
    assert ours.scan_vocab(zipf) == theirs.scan_vocab(zipf) == (sum(map(len, zipf)), len(zipf))
    assert ours.corpus_count == theirs.corpus_count == 0  # build_vocab keeps them, not scan_vocab
    assert dict(ours.raw_vocab) == dict(theirs.raw_vocab) and list(ours.raw_vocab) == list(theirs.raw_vocab)
    dry = ours.prepare_vocab(trim_rule=rule, dry_run=True)
    assert dry == theirs.prepare_vocab(trim_rule=rule, dry_run=True) and ours.zoo_model is None
    report = ours.prepare_vocab(trim_rule=rule, keep_raw_vocab=True)
    assert report == theirs.prepare_vocab(trim_rule=rule, keep_raw_vocab=True) == dry
    assert report["num_retained_words"] == len(ours.wv) and report["drop_unique"] > 0
    assert "w1" not in ours.wv and "w50" in ours.wv and ours.raw_vocab is not None
    same_vocabulary(ours, theirs)
    assert ours.estimate_memory() == theirs.estimate_memory()
    with pytest.raises(DataError, match="scan_vocab"):
        Word2Vec().prepare_vocab()


@pytest.mark.parametrize(
    "settings",
    [
        {"min_count": 1},  # ties among equal counts: the later word first, as gensim's sort
        {"min_count": 1, "sorted_vocab": 0},
        {"min_count": 1, "max_final_vocab": 10},
        {"min_count": 2, "max_vocab_size": 20},
        {"min_count": 5, "sample": 1e-2},
    ],
    ids=str,
)
def test_build_vocab_keeps_and_orders_the_words_as_gensim(gensim_models, zipf, settings):
    ours, theirs = both(gensim_models, **settings)
    for model in (ours, theirs):
        model.build_vocab(zipf, trim_rule=rule if "max_vocab_size" in settings else None)
    same_vocabulary(ours, theirs)


def test_build_vocab_from_freq_as_gensim(gensim_models):
    freq = {"a": 5, "b": 9, "c": 5, "d": 1, "e": 7}
    ours, theirs = both(gensim_models, min_count=2)
    for model in (ours, theirs):
        model.build_vocab_from_freq(freq, corpus_count=3)
    same_vocabulary(ours, theirs)
    assert ours.wv.index_to_key == ["b", "e", "c", "a"] and ours.corpus_count == theirs.corpus_count == 3
    for model in (ours, theirs):
        model.build_vocab_from_freq({"f": 4, "a": 2, "g": 1}, update=True)
    assert ours.wv.index_to_key == theirs.wv.index_to_key == ["b", "e", "c", "a", "f"]


def test_predict_output_word_as_gensim_on_the_same_vectors(gensim_models, zipf):
    ours, theirs = both(gensim_models, min_count=3, epochs=2)
    theirs.build_vocab(zipf)
    theirs.train(zipf, total_examples=len(zipf), epochs=2)
    ours.build_vocab(zipf)
    ours.wv = KeyedVectors(theirs.wv.index_to_key, theirs.wv.vectors)  # same words: the model's input rows
    ours._model = eqx.tree_at(lambda m: m.output, ours.zoo_model, jnp.asarray(theirs.syn1neg))
    np.testing.assert_array_equal(ours.wv.vectors, theirs.wv.vectors)
    for context in (["w2", "w3"], ["w5", "unknown", "w7", "w2"], ["w9"]):
        mine, other = ours.predict_output_word(context, topn=6), theirs.predict_output_word(context, topn=6)
        assert [w for w, _ in mine] == [w for w, _ in other]
        np.testing.assert_allclose([p for _, p in mine], [p for _, p in other], rtol=1e-5)
    with pytest.warns(UserWarning, match="outside"):
        assert ours.predict_output_word(["unknown"]) is None


def test_vectors_that_are_not_the_models_words_leave_nothing_to_train(zipf):
    model = Word2Vec(zipf, vector_size=8, min_count=3, workers=1, epochs=1)
    other = KeyedVectors(["a", "b"], np.eye(2))
    model.wv = other
    assert model.wv is other and model.zoo_model is None
    with pytest.raises(ValueError, match="build_vocab"):
        model.train(zipf, total_examples=len(zipf), epochs=1)


def test_reset_from_takes_the_vocabulary_with_fresh_vectors(zipf):
    first = Word2Vec(zipf, vector_size=8, min_count=3, workers=1, epochs=1)
    second = Word2Vec(vector_size=8, seed=7, workers=1)
    second.reset_from(first)
    assert second.wv.index_to_key == first.wv.index_to_key and second.corpus_count == first.corpus_count
    np.testing.assert_array_equal(second.wv.expandos["count"], first.wv.expandos["count"])
    assert not np.allclose(second.wv.vectors, first.wv.vectors)
    second.train(zipf, total_examples=second.corpus_count, epochs=1)


class Hooks(CallbackAny2Vec):
    def __init__(self):
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            return lambda model: object.__getattribute__(self, "calls").append(name[3:])
        return object.__getattribute__(self, name)


def test_every_callback_hook_is_called_in_order(zipf):
    hooks = Hooks()
    model = Word2Vec(zipf, vector_size=8, min_count=3, workers=1, epochs=2, batch_words=1000, callbacks=[hooks])
    words = sum(len(s) for s in zipf)
    batches = hooks.calls.count("batch_begin")
    assert batches == hooks.calls.count("batch_end") >= 2 * (words // 1000)
    assert hooks.calls[:3] == ["train_begin", "epoch_begin", "batch_begin"] and hooks.calls[-1] == "train_end"
    body = [c for c in hooks.calls if c.startswith("batch")]
    assert body == ["batch_begin", "batch_end"] * batches
    assert model.history and len(model.history) == 2


def test_save_takes_gensims_options_and_writes_data(zipf, tmp_path):
    model = Word2Vec(zipf, vector_size=8, min_count=3, workers=1, epochs=1, sorted_vocab=0)
    path = model.save(tmp_path / "m.safetensors", separately=["wv"], sep_limit=0, ignore=frozenset(), pickle_protocol=4)
    loaded = Word2Vec.load(path, mmap="r")
    assert loaded.sorted_vocab == 0 and loaded.wv.index_to_key == model.wv.index_to_key
    np.testing.assert_array_equal(loaded.wv.vectors, model.wv.vectors)
    assert not path.read_bytes().startswith(b"\x80")  # no pickle


def test_fasttext_estimate_memory_as_gensim(gensim_models, zipf):
    ours, theirs = both(gensim_models, "FastText", min_count=3, bucket=1000, sg=1)
    for model in (ours, theirs):
        model.build_vocab(zipf)
    assert ours.estimate_memory() == theirs.estimate_memory()


def test_noise_table_effective_min_count_and_locks_as_gensim(gensim_models, zipf):
    ours, theirs = both(gensim_models, min_count=1, max_final_vocab=12)
    for model in (ours, theirs):
        model.build_vocab(zipf)
    assert ours.effective_min_count == theirs.effective_min_count > 1
    assert ours.cum_table.dtype == theirs.cum_table.dtype
    np.testing.assert_array_equal(ours.cum_table, theirs.cum_table)
    np.testing.assert_array_equal(ours.wv.vectors_lockf, theirs.wv.vectors_lockf)
    # training with lock factors below 1: tests/test_gensim_lockf.py


def test_gensims_errors_for_a_model_without_output_layer_and_load_on_an_instance(zipf, tmp_path):
    model = Word2Vec(zipf, vector_size=8, min_count=3, workers=1, epochs=1)
    path = model.save(tmp_path / "m.safetensors")
    with pytest.raises(AttributeError, match=r"Word2Vec.load\(path\)"):
        Word2Vec().load(path)  # gensim's load is the class's, not the instance's
    assert Word2Vec.load(path).wv.index_to_key == model.wv.index_to_key
    queries_only = Word2Vec()
    queries_only.wv = KeyedVectors(model.wv.index_to_key, model.wv.vectors)
    with pytest.raises(RuntimeError, match="output layer"):
        queries_only.predict_output_word(["w2", "w3"])
    with pytest.raises(DataError):
        queries_only.predict_output_word(["w2", "w3"])


def test_train_needs_epochs_and_a_count_as_gensims(zipf):
    model = Word2Vec(min_count=1, vector_size=8)
    model.build_vocab(zipf)
    with pytest.raises(ValueError, match="total_examples or total_words"):
        model.train(zipf, epochs=1)
    with pytest.raises(ValueError, match="explicit epochs"):
        model.train(zipf, total_examples=model.corpus_count)
    with pytest.raises(InvalidParameterError, match="explicit epochs"):
        model.train(zipf, total_words=model.corpus_total_words, epochs=0)
    model.train(zipf, total_examples=model.corpus_count, epochs=1)
    assert model.history[-1]["epoch"] >= 0


def test_string_sentences_warn_and_read_as_characters_as_gensim(gensim_models, caplog):
    sentences = ["human", "machine"]
    with caplog.at_level("WARNING"):
        ours = Word2Vec(min_count=1, vector_size=8)
        ours.build_vocab(sentences)
    assert "Each 'sentences' item should be a list of words" in caplog.text
    theirs = gensim_models.Word2Vec(min_count=1, vector_size=8)
    theirs.build_vocab(sentences)
    assert sorted(ours.wv.key_to_index) == sorted(theirs.wv.key_to_index) == sorted(set("humanmachine"))
    assert {w: ours.wv.get_vecattr(w, "count") for w in ours.wv.key_to_index} == {
        w: theirs.wv.get_vecattr(w, "count") for w in theirs.wv.key_to_index
    }


def test_gensims_training_warnings_are_logged(zipf, caplog):
    with caplog.at_level("WARNING"):
        Word2Vec(zipf, min_count=1, vector_size=8, hs=1, negative=5, epochs=1)
    assert "Both hierarchical softmax and negative sampling are activated." in caplog.text
    model = Word2Vec(zipf, min_count=1, vector_size=8, epochs=1)
    caplog.clear()
    with caplog.at_level("WARNING"):
        model.train(zipf, total_examples=model.corpus_count, epochs=1, start_alpha=0.02, end_alpha=0.02)
    assert "Effective 'alpha' higher than previous training cycles" in caplog.text  # 0.02 > the 1e-4 reached
    caplog.clear()
    with caplog.at_level("WARNING"):
        model.train(zipf, total_examples=model.corpus_count, epochs=1, start_alpha=0.01, end_alpha=0.01)
    assert "Effective 'alpha'" not in caplog.text  # 0.01 < the 0.02 reached


def _path_log_prob(keyed, syn1, word, hidden):
    """gensim's hs formula: sum over the word's path of log sigmoid((-1)**code * syn1[point] . hidden)."""
    code, point = keyed.get_vecattr(word, "code"), keyed.get_vecattr(word, "point")
    return float(-np.logaddexp(0.0, -((-1.0) ** code) * (syn1[point] @ hidden)).sum())


@pytest.mark.parametrize("sg", [1, 0])
def test_hs_code_point_and_score_follow_gensims_formulas(zipf, sg):
    model = Word2Vec(zipf, min_count=1, vector_size=12, window=2, hs=1, negative=0, sg=sg, epochs=2, seed=3)
    keyed, syn1 = model.wv, np.asarray(model.syn1, dtype=np.float64)
    vectors = np.asarray(keyed.vectors, dtype=np.float64)
    code = keyed.get_vecattr(keyed.index_to_key[0], "code")
    assert code.dtype == np.uint8 and keyed.get_vecattr(keyed.index_to_key[0], "point").dtype == np.uint32
    # every root-to-leaf path starts at the root (the last inner node) and the leaves' probabilities sum to 1
    assert {int(keyed.get_vecattr(w, "point")[0]) for w in keyed.index_to_key} == {len(keyed) - 2}
    hidden = np.random.default_rng(0).normal(size=12)
    total = sum(np.exp(_path_log_prob(keyed, syn1, w, hidden)) for w in keyed.index_to_key)
    assert total == pytest.approx(1.0, abs=1e-6)
    a, b, c = keyed.index_to_key[:3]
    scores = model.score([[a, b, "unseen"], [c], [a, b]], total_sentences=2)
    assert scores.dtype == np.float32 and scores.shape == (2,)
    va, vb = vectors[keyed.get_index(a)], vectors[keyed.get_index(b)]
    if sg:
        expected = _path_log_prob(keyed, syn1, a, vb) + _path_log_prob(keyed, syn1, b, va)
        lone = 0.0  # a one-word sentence has no pair to score
    else:
        expected = _path_log_prob(keyed, syn1, a, vb) + _path_log_prob(keyed, syn1, b, va)  # one-word windows
        lone = _path_log_prob(keyed, syn1, c, np.zeros(12))
    assert scores[0] == pytest.approx(expected, rel=1e-4)
    assert scores[1] == pytest.approx(lone, rel=1e-4, abs=1e-6)
    with pytest.raises(RuntimeError, match="hierarchical softmax"):
        Word2Vec(zipf, min_count=1, vector_size=8, epochs=1).score([[a, b]])


def test_hs_scores_agree_with_gensims(gensim_models, zipf):
    """Trained alike, zoo's and gensim's sentence log probabilities agree (they differ in the tree's
    tie-breaking and the random draws, so per sentence only closely)."""
    scores = []
    for cls in (Word2Vec, gensim_models.Word2Vec):
        model = cls(zipf, min_count=1, vector_size=16, hs=1, negative=0, sg=1, epochs=5, seed=1, workers=1)
        scores.append(model.score(zipf, total_sentences=len(zipf)))
    ours, theirs = scores
    assert ours.shape == theirs.shape == (len(zipf),) and np.all(ours <= 0)
    assert np.corrcoef(ours, theirs)[0, 1] > 0.95
    assert float(ours.mean()) == pytest.approx(float(theirs.mean()), rel=0.15)


def test_an_empty_vocabulary_warns_and_training_it_is_a_runtime_error(caplog):
    with caplog.at_level("WARNING"):
        model = Word2Vec(min_count=5)
        model.build_vocab([["a", "b"], ["a"]])
    assert "no word is kept" in caplog.text
    with pytest.raises(RuntimeError, match="build the vocabulary"):
        model.train([["a", "b"]], total_examples=1, epochs=1)
    with pytest.raises(DataError, match="build the vocabulary"):
        Word2Vec([])


@pytest.mark.parametrize("cls", [Word2Vec, FastText])
def test_misgiven_corpora_are_type_errors_as_gensims(zipf, tmp_path, cls):
    model = cls(min_count=1, vector_size=8)
    model.build_vocab(zipf)
    text = tmp_path / "text.txt"
    text.write_text("w1 w2\n")
    for given in ({"corpus_iterable": zipf, "corpus_file": str(text)}, {}, {"corpus_file": zipf}):
        with pytest.raises(TypeError, match="corpus_"):
            model.train(**given, total_examples=1, epochs=1)
    with pytest.raises(DataError, match="exactly one"):
        model.build_vocab()


def test_loading_a_vectors_file_as_a_model_is_an_attribute_error_as_gensims(zipf, tmp_path):
    model = Word2Vec(zipf, min_count=1, vector_size=8, epochs=1)
    path = tmp_path / "vectors.safetensors"
    model.wv.save(path)
    with pytest.raises(AttributeError, match="not a model"):
        Word2Vec.load(path)
    assert KeyedVectors.load(path).index_to_key == model.wv.index_to_key
    model.save(tmp_path / "model.safetensors")
    assert Word2Vec.load(tmp_path / "model.safetensors").wv.index_to_key == model.wv.index_to_key
