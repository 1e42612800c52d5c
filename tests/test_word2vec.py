"""Skip-gram and CBOW: learning, sampling, window, learning rate, determinism, both backends."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np
import pytest

import zoo
from zoo.errors import DataError, TrainingDiverged
from zoo.vectors import KeyedVectors
from zoo_word2vec.backends import SamplingTables, numba_available
from zoo_word2vec.fit import all_finite, build_vocab, fit
from zoo_word2vec.jax_step import draw_noise, window_blocks
from zoo_word2vec.sampling import alias_table, keep_probabilities, noise_distribution
from zoo_word2vec.stream import EncodedCorpus
from zoo_word2vec.training import job_seed, run_epochs, schedule

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")

CLASSES = {
    "animal": ["cat", "dog", "horse", "cow", "sheep", "goat"],
    "verb": ["eats", "sees", "likes", "finds", "wants", "pulls"],
    "color": ["red", "blue", "green", "yellow", "white", "black"],
    "food": ["apple", "bread", "grass", "corn", "rice", "hay"],
    "place": ["farm", "field", "barn", "yard", "house", "garden"],
}


def toy_sentences(n: int = 1500, seed: int = 0) -> list[list[str]]:
    """``the <animal> <verb> the <color> <food> in the <place>``: words of a class share contexts."""
    rng = np.random.default_rng(seed)
    pick = lambda cls: CLASSES[cls][rng.integers(6)]
    return [
        ["the", pick("animal"), pick("verb"), "the", pick("color"), pick("food"), "in", "the", pick("place")]
        for _ in range(n)
    ]


def class_neighbour_accuracy(model) -> float:
    """Fraction of class words whose 3 nearest neighbours all belong to the same class."""
    kv = KeyedVectors.from_model(model)
    hits = total = 0
    for members in CLASSES.values():
        for word in members:
            total += 1
            hits += all(w in members for w, _ in kv.most_similar(word, topn=3))
    return hits / total


@pytest.fixture(scope="module")
def toy():
    sentences = toy_sentences()
    return sentences, build_vocab(sentences, min_count=1)


def train_toy(toy, arch="word2vec-skipgram", backend="numba", seed=0, threads=1, **params):
    sentences, vocab = toy
    params = {"embedding_size": 16, "epochs": 6, "sample": 0.0, **params}
    model = zoo.build(arch, vocab=vocab, key=jax.random.key(seed), **params)
    return fit(model, sentences, backend=backend, threads=threads, seed=seed, progress=False, job_words=2000)


# -- learning ---------------------------------------------------------------------------


@needs_numba
@pytest.mark.parametrize("arch", ["word2vec-skipgram", "word2vec-cbow"])
def test_words_of_a_class_become_neighbours(toy, arch):
    untrained = zoo.build(arch, vocab=toy[1], key=jax.random.key(0), embedding_size=16)
    assert class_neighbour_accuracy(untrained) < 0.3
    model, stats = train_toy(toy, arch)
    assert class_neighbour_accuracy(model) >= 0.9
    losses = [h["loss"] for h in stats.history]
    untrained_loss = 6 * np.log(2.0)  # 1 + negative=5 terms of -log σ(0)
    assert losses[-1] < 0.6 * untrained_loss and losses[-1] < losses[0], losses


@needs_numba
@pytest.mark.parametrize("arch", ["word2vec-skipgram", "word2vec-cbow"])
def test_jax_path_learns_as_well_as_the_compiled_kernels(toy, arch):
    fast, fast_stats = train_toy(toy, arch, backend="numba")
    slow, slow_stats = train_toy(toy, arch, backend="jax")
    assert class_neighbour_accuracy(slow) >= 0.9
    assert class_neighbour_accuracy(fast) >= 0.9
    fast_loss, slow_loss = fast_stats.history[-1]["loss"], slow_stats.history[-1]["loss"]
    assert abs(fast_loss - slow_loss) < 0.05 * fast_loss, (fast_loss, slow_loss)


# -- determinism ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_same_seed_same_vectors_other_seed_other_vectors(toy, backend):
    first, _ = train_toy(toy, backend=backend, epochs=1)
    again, _ = train_toy(toy, backend=backend, epochs=1)
    other, _ = train_toy(toy, backend=backend, epochs=1, seed=1)
    np.testing.assert_array_equal(np.asarray(first.input), np.asarray(again.input))
    np.testing.assert_array_equal(np.asarray(first.output), np.asarray(again.output))
    assert not np.array_equal(np.asarray(first.input), np.asarray(other.input))


def test_job_seeds_differ_by_job_and_run():
    seeds = {job_seed(s, i) for s in range(3) for i in range(100)}
    assert len(seeds) == 300 and all(0 <= s < 2**64 for s in seeds)


# -- subsampling ------------------------------------------------------------------------


def test_subsampling_follows_word2vec_c():
    counts = np.array([0, 1, 10, 1000, 100_000])
    sample = 1e-3
    keep = keep_probabilities(counts, sample)
    f = counts[1:] / counts.sum()
    expected = np.minimum(1.0, (np.sqrt(f / sample) + 1) * sample / f)
    np.testing.assert_allclose(keep[1:], expected)
    assert keep[0] == 1.0 and keep[-1] < 0.2 and keep[1] == 1.0
    np.testing.assert_array_equal(keep_probabilities(counts, 0.0), np.ones(5))
    with pytest.raises(DataError, match="sample"):
        keep_probabilities(counts, -1.0)


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_subsampling_drops_frequent_words_at_the_stated_rate(backend):
    counts = np.array([900_000, 100_000])  # word 0 is kept with p = 0.0344, word 1 with p = 0.1
    tables = SamplingTables(counts, 1e-3, 0.75)
    words = np.tile(np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1], dtype=np.int32), 20_000)
    keep = keep_probabilities(counts, 1e-3)
    kept = _kept_counts(backend, words, tables)
    expected = np.array([180_000 * keep[0], 20_000 * keep[1]])
    np.testing.assert_allclose(kept, expected, rtol=0.05)


def _kept_counts(backend: str, words: np.ndarray, tables: SamplingTables) -> np.ndarray:
    if backend == "numba":
        from zoo_word2vec import kernels

        kept = np.empty(words.size + 1, dtype=np.int64)
        _, n_kept, _, _ = kernels.next_sentence(np.append(words, -1), 0, tables.keep, np.uint64(7), kept)
        return np.bincount(kept[:n_kept], minlength=2)
    bits = jax.random.bits(jax.random.key(7), words.shape, np.uint32)
    keep = np.asarray(bits < tables.keep[words])
    return np.bincount(words[keep], minlength=2)


# -- noise ------------------------------------------------------------------------------


def test_alias_table_is_the_unigram_to_the_three_quarters():
    counts = np.array([5, 1, 0, 300, 42, 7, 7])
    noise = noise_distribution(counts)
    np.testing.assert_allclose(noise, counts**0.75 / np.sum(counts**0.75))
    np.testing.assert_allclose(alias_table(noise).probabilities(), noise, atol=1e-9)
    assert noise[2] == 0.0
    uniform = noise_distribution(counts, 0.0)
    assert np.allclose(uniform[counts > 0], 1 / 6)


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_drawn_negatives_follow_the_noise_distribution(backend):
    counts = np.array([1000, 200, 50, 10, 1, 0, 3000])
    table = alias_table(noise_distribution(counts))
    n = 200_000
    if backend == "numba":
        from zoo_word2vec import kernels

        draws = np.empty(n, dtype=np.int64)
        state = np.uint64(3)
        for i in range(n):
            state, draws[i] = kernels.draw_noise(state, table.threshold, table.alias)
            state = np.uint64(state)  # numba hands back a Python int
    else:
        draws = np.asarray(draw_noise(jax.random.key(3), (n,), table.threshold, table.alias))
    observed = np.bincount(draws, minlength=len(counts)) / n
    np.testing.assert_allclose(observed, noise_distribution(counts), atol=4e-3)
    assert observed[5] == 0.0


# -- dynamic window ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_dynamic_window_averages_window_plus_one_contexts(backend):
    # One long sentence, no subsampling: a center at reach r has 2r contexts,
    # r uniform in 1..window, so 2 * (window + 1) / 2 = window + 1 on average.
    window = 5
    words = np.arange(4000, dtype=np.int32) % 50
    counts = np.ones(50)
    tables = SamplingTables(counts, 0.0, 0.75)
    if backend == "numba":
        from zoo_word2vec import kernels

        syn = np.zeros((50, 4), dtype=np.float32)
        job = np.append(words, -1).astype(np.int32)
        no_tree = (np.zeros((0, 4), np.float32), np.full((1, 1), -1, np.int32), np.zeros((1, 1), np.int32))
        _, pairs, raw, _ = kernels.skipgram_job(
            syn,
            np.zeros(0, np.float32),
            syn.copy(),
            *no_tree,
            True,
            False,
            job,
            tables.keep,
            tables.alias_threshold,
            tables.alias_index,
            window,
            2,
            0.0,
            0.0,
            1,
        )
    else:
        bits = jax.random.bits(jax.random.key(1), words.shape, np.uint32)
        _, _, mask, _ = window_blocks(words, np.ones(words.size, bool), bits, window)
        pairs, raw = int(np.sum(mask)), words.size
    assert abs(pairs / raw - (window + 1)) < 0.1


@needs_numba
def test_the_skipgram_kernel_is_the_window_block_of_negative_sampling():
    """Whole windows, no subsampling, every noise draw the same word: the kernel's updates
    against the window block written out in NumPy (each context against the center and the
    noise words, a noise word equal to the center skipped, one listed twice updated twice, the
    rows written at the window's end)."""
    from zoo_word2vec import kernels

    rng = np.random.default_rng(1)
    vocab, dim, window, negative, alpha, noise = 7, 5, 2, 3, 0.1, 4
    syn0 = rng.uniform(-0.5, 0.5, (vocab, dim)).astype(np.float32)
    syn1 = rng.uniform(-0.5, 0.5, (vocab, dim)).astype(np.float32)
    sentence = rng.integers(0, vocab, 25).astype(np.int32)
    sentence[[3, 11]] = noise  # centers that are the noise word
    keep = np.full(vocab, np.iinfo(np.uint32).max, np.uint32)
    threshold, index = np.zeros(8, np.uint32), np.full(8, noise, np.int64)  # every draw: `noise`
    ours0, ours1 = syn0.copy(), syn1.copy()
    no_tree = (np.zeros((0, dim), np.float32), np.full((1, 1), -1, np.int32), np.zeros((1, 1), np.int32))
    rest = (np.append(sentence, -1), keep, threshold, index, window, negative, alpha, alpha, np.uint64(5))
    loss, pairs, _, _ = kernels.skipgram_job(ours0, np.zeros(0, np.float32), ours1, *no_tree, False, False, *rest)
    expected = 0.0
    for i, center in enumerate(sentence):
        outputs = [(center, 1.0)] + [(noise, 0.0)] * (negative if center != noise else 0)
        contexts = [sentence[j] for j in range(max(0, i - window), min(len(sentence), i + window + 1)) if j != i]
        grad_in, grad_out = np.zeros((len(contexts), dim)), np.zeros((len(outputs), dim))
        for a, context in enumerate(contexts):
            for d, (word, label) in enumerate(outputs):
                f = float(syn0[context] @ syn1[word])
                g = (label - 1 / (1 + np.exp(-f))) * alpha
                expected -= np.log(1 / (1 + np.exp(-f if label else f)))
                grad_in[a] += g * syn1[word]
                grad_out[d] += g * syn0[context]
        for d, (word, _) in enumerate(outputs):
            syn1[word] += grad_out[d]
        for a, context in enumerate(contexts):
            syn0[context] += grad_in[a]
    assert pairs == sum(min(25, i + 3) - max(0, i - 2) - 1 for i in range(25))
    assert np.abs(ours0 - syn0).max() < 1e-3 and np.abs(ours1 - syn1).max() < 1e-3  # σ from 2048 bins
    assert np.abs(ours0 - rng.uniform(-0.5, 0.5, syn0.shape)).max() > 0.1
    assert loss == pytest.approx(expected, rel=1e-2)


def test_window_blocks_stay_inside_sentences_and_skip_dropped_words():
    tokens = np.array([10, 11, 12, -1, 13, 14, -1, -1], dtype=np.int32)
    keep = np.array([True, False, True, False, True, True, False, False])
    wide = np.zeros(8, dtype=np.uint32)  # reach = window for every center
    centers, contexts, mask, origin = window_blocks(tokens, keep, wide, 2)
    real = {
        int(c): sorted(int(x) for x, m in zip(ctx, row, strict=True) if m)
        for c, ctx, row in zip(centers[:4], contexts[:4], mask[:4], strict=True)
    }
    assert real == {10: [12], 12: [10], 13: [14], 14: [13]}
    assert list(np.asarray(origin[:4])) == [0, 2, 4, 5]
    assert not np.any(np.asarray(mask[4:]))


# -- learning rate ----------------------------------------------------------------------


class _RecordingRunner:
    parallel = False

    def __init__(self):
        self.calls = []

    def run(self, job, alpha_start, alpha_end, seed):
        words = int(np.sum(job >= 0))
        self.calls.append((alpha_start, alpha_end, words, seed))
        return 0.0, 1, words, words

    def finish(self):
        return None


def test_learning_rate_decays_linearly_to_min_alpha_over_all_epochs():
    sentences = [np.arange(7, dtype=np.int32)] * 100  # 700 words, jobs of <= 70
    runner = _RecordingRunner()
    with EncodedCorpus.write(sentences) as corpus:
        stats = run_epochs(runner, corpus, epochs=3, alpha=0.025, min_alpha=0.0001, job_words=70, progress=False)
    assert stats.words == 2100 and len(stats.history) == 3
    starts = np.array([c[0] for c in runner.calls])
    ends = np.array([c[1] for c in runner.calls])
    done = np.cumsum([0] + [c[2] for c in runner.calls])
    np.testing.assert_allclose(starts, 0.025 - (0.025 - 0.0001) * done[:-1] / 2100)
    np.testing.assert_allclose(ends, 0.025 - (0.025 - 0.0001) * done[1:] / 2100)
    assert starts[0] == 0.025 and ends[-1] == pytest.approx(0.0001)
    assert np.all(np.diff(starts) < 0)
    assert len({c[3] for c in runner.calls}) == len(runner.calls)
    assert schedule(0.05, 0.0, 5, 10) == pytest.approx(0.025)


@needs_numba
def test_a_learning_rate_of_zero_changes_nothing(toy):
    before = zoo.build("word2vec-skipgram", vocab=toy[1], key=jax.random.key(0), embedding_size=16, output_init=1.0)
    after, _ = fit(
        zoo.build(
            "word2vec-skipgram",
            vocab=toy[1],
            key=jax.random.key(0),
            embedding_size=16,
            output_init=1.0,
            alpha=0.0,
            min_alpha=0.0,
            epochs=1,
        ),
        toy[0],
        backend="numba",
        threads=1,
        progress=False,
    )
    np.testing.assert_array_equal(np.asarray(before.input), np.asarray(after.input))


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_fit_leaves_the_given_model_as_it_was(toy, backend):
    model = zoo.build("word2vec-skipgram", vocab=toy[1], key=jax.random.key(0), embedding_size=16, epochs=1)
    before = np.array(model.input)
    trained, _ = fit(model, toy[0], backend=backend, threads=1, progress=False)
    np.testing.assert_array_equal(np.asarray(model.input), before)  # the JAX step donates: fit must copy
    assert not np.allclose(np.asarray(trained.input), before)


# -- the corpus as jobs ------------------------------------------------------------------


def test_jobs_cover_the_corpus_in_order_and_cut_long_sentences(monkeypatch):
    import zoo_word2vec.stream as stream

    monkeypatch.setattr(stream, "_READ_IDS", 7)  # many small reads: sentences straddle them
    rng = np.random.default_rng(0)
    sentences = [rng.integers(0, 50, size=rng.integers(1, 12)) for _ in range(200)]
    for job_words in (2, 5, 13, 1000):
        with EncodedCorpus.write(sentences) as corpus:
            jobs = list(corpus.jobs(job_words))
            assert corpus.words == sum(s.size for s in sentences)
        assert all(job.size <= job_words and job[-1] == -1 for job in jobs)
        flat = np.concatenate(jobs)
        np.testing.assert_array_equal(flat[flat >= 0], np.concatenate(sentences))
        if job_words >= 12:  # no sentence is cut: one separator per sentence
            assert int(np.sum(flat < 0)) == len(sentences)


def test_an_empty_corpus_is_an_error(toy):
    model = zoo.build("word2vec-skipgram", vocab=toy[1], key=jax.random.key(0), embedding_size=8)
    with pytest.raises(DataError, match="no in-vocabulary words"):
        fit(model, [["unknown", "words"]], backend="jax", progress=False)
    untrained = zoo.build("word2vec-skipgram", key=jax.random.key(0), vocab_size=10, embedding_size=8)
    with pytest.raises(DataError, match="vocab="):
        fit(untrained, [["a"]], progress=False)


# -- the recipe -------------------------------------------------------------------------


def test_zoo_train_writes_a_model_that_loads_and_answers(tmp_path, capsys):
    from zoo.cli.main import main

    corpus = tmp_path / "toy.txt"
    corpus.write_text("\n".join(" ".join(s) for s in toy_sentences(600)) + "\n")
    out = tmp_path / "cbow.safetensors"
    args = ["train", "word2vec-cbow", "--data", str(corpus), "--out", str(out), "--dim", "12", "--epochs", "2"]
    assert main([*args, "--min-count", "1", "--window", "3", "--quiet"]) == 0
    assert "words/s" in capsys.readouterr().err
    model = zoo.load(out)
    assert model.spec.name == "word2vec-cbow" and model.spec["window"] == 3 and model.spec["epochs"] == 2
    assert model.vectors().shape == (len(model.vocabs["words"]), 12)
    assert len(KeyedVectors.load(out).most_similar("cat", topn=3)) == 3


# -- divergence ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["word2vec-skipgram", "word2vec-cbow"])
@pytest.mark.parametrize(
    ("backend", "threads"),
    [pytest.param("numba", 1, marks=needs_numba), pytest.param("numba", 2, marks=needs_numba), ("jax", 1)],
)
def test_a_diverging_run_stops_with_training_diverged(toy, arch, backend, threads):
    with pytest.raises(TrainingDiverged, match=r"the loss became NaN or infinite in epoch 1 .*alpha=1e\+30"):
        train_toy(toy, arch, backend, threads=threads, alpha=1e30, epochs=2)
    model, _ = train_toy(toy, arch, backend, threads=threads, alpha=0.025, epochs=1)  # the same run, tamed
    assert all_finite(model)


def test_all_finite_sees_one_bad_value(toy):
    model = zoo.build("word2vec-skipgram", vocab=toy[1], key=jax.random.key(0), embedding_size=4)
    assert all_finite(model)
    assert not all_finite(eqx.tree_at(lambda m: m.output, model, model.output.at[3, 1].set(np.inf)))


def test_zoo_train_writes_nothing_when_training_diverges(tmp_path, capsys):
    from zoo.cli.main import main

    corpus = tmp_path / "toy.txt"
    corpus.write_text("\n".join(" ".join(s) for s in toy_sentences(300)) + "\n")
    out = tmp_path / "diverged.safetensors"
    args = ["train", "word2vec-skipgram", "--data", str(corpus), "--out", str(out), "--dim", "8", "--min-count", "1"]
    assert main([*args, "--lr", "1e30", "--epochs", "1", "--quiet"]) == 2
    assert "the loss became NaN or infinite" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [corpus]
