"""FastText: n-grams and hashes as fastText computes them, vectors for unseen words, both backends."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import zoo
from zoo.errors import DataError, TrainingDiverged
from zoo.vectors import KeyedVectors
from zoo_word2vec.backends import numba_available
from zoo_word2vec.fasttext_model import padded_subwords
from zoo_word2vec.fit import FASTTEXT_STREAMS, build_vocab, fit
from zoo_word2vec.ngrams import fnv1a, fnv1a_many, ngram_buckets, ngrams, subword_table

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")


def test_ngrams_of_where_as_in_the_paper():
    assert ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert len(ngrams("where", 3, 6)) == 5 + 4 + 3 + 2  # 7 characters with the boundaries
    assert ngrams("naïve", 3, 3)[:2] == ["<na", "naï"]  # characters, not bytes
    assert ngrams("a", 3, 6) == ["<a>"]


def test_hash_is_fasttexts_fnv1a():
    # Values as the fastText package (0.9.3) computes them, including the sign
    # extension of UTF-8 bytes >= 0x80.
    assert [fnv1a(g) for g in ["<wh", "whe", "her", "ere", "re>"]] == [
        1048167652, 888420941, 4105473420, 2073529033, 2062867498
    ]  # fmt: skip
    assert fnv1a("café") == 1970454601 and fnv1a("日本") == 4164387409
    grams = ["<wh", "café", "日本", "", "a"]
    assert list(fnv1a_many(grams)) == [fnv1a(g) for g in grams]
    assert ngram_buckets("where", 3, 3, 2_000_000) == [167652, 420941, 1473420, 1529033, 867498]


def test_subword_table_lists_the_word_then_its_buckets():
    words = ["where", "a", "naïve"]
    offsets, rows = subword_table(words, 3, 6, 1000)
    for i, word in enumerate(words):
        assert list(rows[offsets[i] : offsets[i + 1]]) == [i] + [3 + b for b in ngram_buckets(word, 3, 6, 1000)]
    offsets, rows = subword_table(words, 3, 6, 0)  # no buckets: words alone
    assert list(offsets) == [0, 1, 2, 3] and list(rows) == [0, 1, 2]


STEMS = ["walk", "jump", "paint", "clean", "climb", "watch", "cook", "fish"]
PLACES = ["river", "garden", "field", "forest", "market", "school", "kitchen", "lake"]


def morphology_sentences(n: int = 2000, seed: int = 0) -> list[list[str]]:
    """``<name> <stem><suffix> in the <place>``, each stem mostly at its own place:
    the forms of a stem share n-grams and contexts."""
    rng = np.random.default_rng(seed)
    names = ["anna", "bob", "carl", "dina"]
    sentences = []
    for _ in range(n):
        k = rng.integers(len(STEMS))
        suffix = ["", "s", "ed", "ing"][rng.integers(4)]
        place = PLACES[k] if rng.random() < 0.8 else PLACES[rng.integers(len(PLACES))]
        sentences.append([names[rng.integers(4)], STEMS[k] + suffix, "in", "the", place])
    return sentences


@pytest.fixture(scope="module")
def corpus():
    sentences = morphology_sentences()
    return sentences, build_vocab(sentences, min_count=1)


@pytest.fixture(scope="module", params=[pytest.param("numba", marks=needs_numba), "jax"])
def trained(request, corpus):
    sentences, vocab = corpus
    model = zoo.build(
        "fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=24, buckets=5000, epochs=5, sample=0.0
    )
    return fit(model, sentences, backend=request.param, threads=1, progress=False, job_words=2000)


def test_a_made_up_word_lands_next_to_its_stem(trained):
    model, stats = trained
    kv = KeyedVectors.from_model(model)
    assert not kv.has_index_for("walkers") and "walkers" in kv  # gensim's: any word has a vector
    for stem in STEMS:
        made_up = stem + "ers"  # never in the corpus: only its n-grams know it
        nearest = [w for w, _ in kv.most_similar(made_up, topn=4)]
        assert any(w.startswith(stem) for w in nearest[:2]), (made_up, nearest)
    assert stats.history[-1]["loss"] < 0.6 * 6 * np.log(2.0)


def test_inflected_forms_are_each_others_neighbours(trained):
    model, _ = trained
    kv = KeyedVectors.from_model(model)
    hits = sum(kv.most_similar(stem + "ing", topn=1)[0][0].startswith(stem) for stem in STEMS)
    assert hits >= len(STEMS) - 1


def test_vectors_are_the_mean_of_word_and_ngram_rows(corpus):
    model = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300)
    index = corpus[1].index["walking"]
    rows = [index] + [len(corpus[1]) + b for b in ngram_buckets("walking", 3, 6, 300)]
    np.testing.assert_allclose(model.vectors()[index], np.asarray(model.input)[rows].mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(model(np.array([index]))[0], model.vectors()[index], rtol=1e-6)
    oov_rows = [len(corpus[1]) + b for b in ngram_buckets("walkers", 3, 6, 300)]
    np.testing.assert_allclose(model.oov_vector("walkers"), np.asarray(model.input)[oov_rows].mean(0), rtol=1e-5)
    no_subwords = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300, max_n=0)
    assert not np.any(no_subwords.oov_vector("walkers"))


def test_oov_vectors_survive_save_and_load(corpus, tmp_path):
    model = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300)
    loaded = zoo.load(zoo.save(model, tmp_path / "ft.safetensors"))
    np.testing.assert_array_equal(loaded.oov_vector("walkers"), model.oov_vector("walkers"))
    np.testing.assert_array_equal(np.asarray(loaded.vectors()), np.asarray(model.vectors()))


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_a_diverging_run_stops_with_training_diverged(corpus, backend):
    sentences, vocab = corpus
    model = zoo.build("fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=8, buckets=500, alpha=1e30)
    with pytest.raises(TrainingDiverged, match=r"the loss became NaN or infinite in epoch 1 .*alpha=1e\+30"):
        fit(model, sentences[:300], backend=backend, threads=1, progress=False, job_words=2000)


def literal_fasttext_job(syn0, syn1, subwords, counts, words, keep, alias_threshold, alias_index, window, negative, lr):
    """fastText's ``FastText::skipgram`` and ``Model::update`` word for word, in Python, on the
    kernel's random stream: per (center, context) pair the mean of the center's rows is
    recomputed, and its gradient added to each listed row before the next pair (σ from the
    kernel's table, `_logistic_step`, so that only the order of the updates is compared)."""
    from zoo_word2vec.kernels import _logistic_step, draw_noise, next_sentence, splitmix64

    kept, loss = np.empty(words.size, dtype=np.int64), 0.0
    _, n_kept, state, _ = next_sentence(words, 0, keep, np.uint64(7), kept)
    for i in range(n_kept):
        state, bits = splitmix64(np.uint64(state))
        reach = window - int(bits % np.uint64(window))
        rows = subwords[kept[i], : counts[kept[i]]]
        if min(n_kept, i + reach + 1) - max(0, i - reach) < 2:
            continue
        for j in range(max(0, i - reach), min(n_kept, i + reach + 1)):
            if j == i:
                continue
            hidden = syn0[rows].mean(axis=0)
            grad = np.zeros_like(hidden)
            targets = [(kept[j], 1.0)]
            for _ in range(negative):
                while True:
                    state, other = draw_noise(np.uint64(state), alias_threshold, alias_index)
                    if other != kept[j]:
                        break
                targets.append((other, 0.0))
            for other, label in targets:
                g, pair_loss = _logistic_step(np.float32(hidden @ syn1[other]), label, lr)
                loss += pair_loss
                grad += g * syn1[other]
                syn1[other] += g * hidden
            for r in rows:  # a row listed twice gets the gradient twice, as in fastText
                syn0[r] += grad
    return loss


@needs_numba
def test_the_kernel_updates_after_each_context_word_as_fasttext():
    from zoo_word2vec.backends import SamplingTables
    from zoo_word2vec.kernels import fasttext_job

    rng = np.random.default_rng(3)
    vocab, dim, buckets = 12, 8, 5  # 5 buckets: most words list some row twice
    words = [f"w{i}xyz"[: 2 + i % 5] for i in range(vocab)]
    padded, counts = padded_subwords(*subword_table(words, 2, 3, buckets))
    assert any(len(set(r[:c])) < c for r, c in zip(padded, counts, strict=True))
    syn0 = rng.uniform(-0.5, 0.5, (vocab + buckets, dim)).astype(np.float32)
    syn1 = rng.uniform(-0.5, 0.5, (vocab, dim)).astype(np.float32)
    sentence = np.append(rng.integers(0, vocab, 40), -1).astype(np.int32)
    tables = SamplingTables(rng.integers(1, 50, vocab), 0.0, 0.5)
    args = (tables.keep, tables.alias_threshold, tables.alias_index, 4, 3)
    ours0, ours1 = syn0.copy(), syn1.copy()
    no_tree = (np.zeros((0, dim), np.float32), np.full((1, 1), -1, np.int32), np.zeros((1, 1), np.int32), True)
    loss, pairs, raw, kept = fasttext_job(
        ours0, np.zeros(0, np.float32), ours1, *no_tree, padded, counts, sentence, *args, 0.1, 0.1, np.uint64(7)
    )
    expected = literal_fasttext_job(syn0, syn1, padded, counts, sentence, *args, 0.1)
    assert raw == kept == 40 and pairs > 40
    np.testing.assert_allclose(ours0, syn0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours1, syn1, rtol=1e-5, atol=1e-6)
    assert loss == pytest.approx(expected, rel=1e-5)


def test_the_jax_step_trains_a_window_context_by_context_as_fasttext():
    from zoo_word2vec.fasttext_step import repeat_factors, window_updates
    from zoo_word2vec.output_layer import noise_targets

    rng = np.random.default_rng(4)
    dim, outputs_per_slot = 6, 3
    subwords = np.array([[4, 9, 4, 7, 0]])  # row 4 listed twice; the last entry is padding
    sub_mask = np.arange(5)[None, :] < 4
    syn0 = rng.uniform(-0.5, 0.5, (12, dim)).astype(np.float32)
    syn1 = rng.uniform(-0.5, 0.5, (8, dim)).astype(np.float32)
    outputs = np.array([[1, 2, 3], [5, 5, 6], [2, 7, 1], [3, 4, 0]])  # slot 1 has noise equal to its context
    mask = np.array([True, True, False, True])
    moves = repeat_factors(subwords, sub_mask)
    assert float(moves[0]) == pytest.approx((2**2 + 1 + 1) / 4)  # rows 4, 9, 7 listed 2, 1, 1 times
    targets = noise_targets(outputs)
    got_in, got_out, got_loss = window_updates(
        syn0[subwords[0]], sub_mask[0], moves[0], syn1[outputs], targets.labels, targets.weights, mask, np.float32(0.2)
    )
    rows, out_updates, loss = syn0.copy(), np.zeros((4, outputs_per_slot, dim), np.float32), 0.0
    total = np.zeros(dim, np.float32)
    for slot in np.flatnonzero(mask):  # fastText's Model::update, pair by pair
        hidden = rows[subwords[0, :4]].mean(axis=0)
        grad = np.zeros(dim, np.float32)
        for d, word in enumerate(outputs[slot]):
            if d and word == outputs[slot, 0]:
                continue
            score = float(hidden @ syn1[word])
            g = ((d == 0) - 1.0 / (1.0 + np.exp(-score))) * 0.2
            loss += np.log1p(np.exp(-score if d == 0 else score))
            grad += g * syn1[word]
            out_updates[slot, d] = g * hidden
        for r in subwords[0, :4]:
            rows[r] += grad
        total += grad
    np.testing.assert_allclose(got_in, total, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_out, out_updates, rtol=1e-5, atol=1e-6)
    assert float(got_loss) == pytest.approx(loss, rel=1e-5)


def test_two_streams_read_the_corpus_from_its_start_and_its_middle_taking_turns(corpus, tmp_path):
    from zoo_word2vec.stream import EncodedCorpus

    sentences = [np.full(1 + i % 4, i) for i in range(100)]  # sentence i holds only the id i
    with EncodedCorpus.write(sentences, tmp_path) as encoded:
        (start, middle), (_, end) = encoded.with_streams(2).parts()
        assert start == 0 and end == encoded.words + encoded.sentences
        assert abs(middle - end / 2) <= 5  # the first sentence start from half the ids on
        jobs = list(encoded.with_streams(2).jobs(20))
        firsts = [int(job[0]) for job in jobs]
        assert firsts[0] == 0 and firsts[1] > 40 and firsts[2] < 40 < firsts[3]  # turns: start, middle, ...
        seen = sorted(int(w) for job in jobs for w in job if w >= 0)
        assert seen == sorted(int(w) for s in sentences for w in s)  # every sentence once
        assert [list(j) for j in encoded.jobs(20)] == [list(j) for j in encoded.with_streams(1).jobs(20)]

    sentences, vocab = corpus
    model = zoo.build("fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=8, buckets=300, epochs=1)
    options = dict(threads=1, progress=False, job_words=2000, checkpoint=tmp_path / "run.ckpt.safetensors")
    fit(model, sentences[:400], streams=2, **options)
    with pytest.raises(DataError, match=r"streams=2 \(this run: 1\)"):
        fit(model, sentences[:400], resume=True, streams=1, **options)
    # unless told, FastText reads its corpus as fastText's default 12 threads do
    with pytest.raises(DataError, match=rf"streams=2 \(this run: {FASTTEXT_STREAMS}\)"):
        fit(model, sentences[:400], resume=True, **options)
