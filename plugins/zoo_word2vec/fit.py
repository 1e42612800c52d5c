"""Train word2vec-family models from Python: vocabulary, then epochs over the corpus.

import jax, zoo
from zoo_word2vec.fit import build_vocab, fit

vocab = build_vocab("corpus.txt.gz", min_count=5)
model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=100)
model, stats = fit(model, "corpus.txt.gz", threads=2)
print(stats.words_per_s, stats.history[-1]["loss"])
"""

from __future__ import annotations

import os
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.data.vocab import Vocab
from zoo.errors import DataError
from zoo_word2vec.backends import SamplingTables, choose_backend
from zoo_word2vec.training import Corpus, TrainStats, diverged, encode_corpus, run_epochs

__all__ = ["all_finite", "build_vocab", "default_threads", "fit"]


def default_threads() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def build_vocab(
    corpus: Corpus,
    *,
    min_count: int = 5,
    max_vocab: int | None = None,
    tokenizer: Any = None,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> Vocab:
    """Count the words of `corpus` (paths or token lists) and keep the frequent ones, most frequent first."""
    counts = count_tokens(corpus, tokenizer, encoding=encoding, errors=errors)
    return build_word_vocab(counts, min_count=min_count, max_vocab=max_vocab)


def fit(
    model: Any,
    corpus: Corpus,
    *,
    backend: str = "auto",
    threads: int | None = None,
    seed: int = 0,
    tokenizer: Any = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    job_words: int = 10_000,
    progress: bool = True,
    description: str | None = None,
) -> tuple[Any, TrainStats]:
    """Train `model` (built with a ``words`` vocabulary that has counts) on `corpus`.

    **Arguments:**

    - `model`: a word2vec-family model (``word2vec-skipgram``, ``word2vec-cbow``,
      ``fasttext``); its spec holds the training settings (window, negative,
      sample, alpha, min_alpha, epochs).
    - `corpus`: a text file (plain or .gz), several files, or token lists; it is
      tokenised once with `tokenizer` into a temporary file of ids (files decoded
      with `encoding` and `errors`, see `zoo.data.corpus.iter_lines`).
    - `backend`: ``"numba"`` (compiled CPU kernels), ``"jax"`` (compiled JAX
      steps, the accelerator path) or ``"auto"``.
    - `threads`: CPU threads for the numba backend (default: all cores). With
      more than one, updates race as in word2vec.c (Hogwild) and a run is not
      bit-for-bit repeatable; with one, or with JAX, it is, for a given `seed`.
    - `job_words`: words per job (one kernel call or one compiled step).

    **Returns:** ``(trained model, TrainStats)``; `model` itself is left as it was.

    Raises `TrainingDiverged` if the loss, or any trained parameter, becomes NaN or infinite.
    """
    vocabs = getattr(model, "vocabs", None) or {}
    if "words" not in vocabs or vocabs["words"].counts is None:
        raise DataError(
            "fit needs a model built with vocab=<Vocab with counts> (see build_vocab): "
            "the counts drive subsampling and the noise distribution"
        )
    p, name = model.spec.params, model.spec.name
    vocab = vocabs["words"]
    tables = SamplingTables(vocab.counts, p["sample"], p["ns_exponent"])
    backend = choose_backend(backend)
    threads = default_threads() if threads is None else threads
    runner = model.make_runner(backend, tables, job_words=job_words)
    del model  # the runner trains its own copies: a caller that keeps no reference frees the initial ones
    with encode_corpus(corpus, vocab, tokenizer, encoding=encoding, errors=errors) as encoded:
        stats = run_epochs(
            runner,
            encoded,
            epochs=p["epochs"],
            alpha=p["alpha"],
            min_alpha=p["min_alpha"],
            seed=seed,
            threads=threads,
            job_words=job_words,
            progress=progress,
            description=description or name,
        )
    stats.backend, stats.threads = backend, threads if backend == "numba" else 0
    trained = runner.finish()
    if not all_finite(trained):
        raise diverged("the trained vectors", f"after {len(stats.history)} epoch(s)", p["alpha"])
    return trained, stats


def all_finite(model: Any) -> bool:
    """Whether every floating-point array of `model` holds only finite values (one reduction per array)."""
    arrays = jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array))
    return all(bool(jnp.all(jnp.isfinite(a))) for a in arrays)
