"""Train word2vec-family models from Python: vocabulary, then epochs over the corpus.

import jax, zoo
from zoo_word2vec.fit import build_vocab, fit

vocab = build_vocab("corpus.txt.gz", min_count=5)
model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=100)
model, stats = fit(model, "corpus.txt.gz", threads=2, checkpoint="run.ckpt.safetensors", resume=True)
print(stats.words_per_s, stats.history[-1]["loss"])

`fit` chooses what trains each algorithm (`make_runner`): the models themselves
only hold parameters and score batches.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from jax.sharding import Mesh

from zoo.plugin_api import (
    CorpusPart,
    DataError,
    InvalidParameterError,
    Vocab,
    build_word_vocab,
    count_tokens,
    load_checkpoint,
    parts_and_workers,
)
from zoo_word2vec import fasttext_step, jax_step
from zoo_word2vec.backends import JaxRunner, NumbaRunner, SamplingTables, choose_backend
from zoo_word2vec.fasttext_model import FastText, FastTextCBOW
from zoo_word2vec.model import CBOW, SkipGram
from zoo_word2vec.stream import EncodedCorpus, encode_parts
from zoo_word2vec.training import (
    Checkpointing,
    Corpus,
    Position,
    Resume,
    Runner,
    TrainStats,
    all_finite,
    diverged,
    encode_corpus,
    run_epochs,
)

__all__ = ["all_finite", "build_vocab", "default_threads", "fit", "make_runner"]


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
    workers: int | None = None,
) -> Vocab:
    """Count the words of `corpus` (files, folders, glob patterns, or token lists) and keep the frequent
    ones, most frequent first. Files are counted by up to `workers` processes (None: one per core;
    `zoo.plugin_api.count_tokens`), with the same result for any number."""
    counts = count_tokens(corpus, tokenizer, encoding=encoding, errors=errors, workers=workers)
    return build_word_vocab(counts, min_count=min_count, max_vocab=max_vocab)


def _is_files(corpus: Any) -> bool:
    """Whether `corpus` names files (a path, folder, pattern or part, or a list of them), not token lists."""
    if isinstance(corpus, str | os.PathLike | CorpusPart):
        return True
    kinds = str | os.PathLike | CorpusPart
    return isinstance(corpus, list | tuple) and bool(corpus) and all(isinstance(p, kinds) for p in corpus)


def _encode(corpus: Corpus, vocab: Vocab, tokenizer: Any, text: dict[str, str], workers: int | None) -> EncodedCorpus:
    """`corpus` as ids: files by up to `workers` processes (`encode_parts`), token lists in this one."""
    if not _is_files(corpus):
        return encode_corpus(corpus, vocab, tokenizer, **text)
    parts, pool = parts_and_workers(corpus, workers, tokenizer=tokenizer, encoding=text["encoding"])
    return encode_parts(parts, vocab, tokenizer, workers=pool, **text)


class _Algorithm(NamedTuple):
    """How one model class trains: its kernel in `zoo_word2vec.kernels`, its JAX step builder
    (``make_step(window=, negative=, hs=, shrink=, job_words=, batch_windows=, ...)``), the
    settings and arrays the kernel reads after the tree (`kernel_extra`) and the arrays the
    step reads after it (`step_extra`)."""

    kernel: str
    make_step: Callable[..., Any]
    kernel_extra: Callable[[Any], tuple]
    step_extra: Callable[[Any], tuple]
    streams: int  # the places its corpus is read from at once unless `fit` is told (see `fit`'s `streams`)
    cbow: bool = False


# fastText's threads (12 by default) each read their own share of the file; gensim's
# iterable input, which zoo's word2vec is checked against, is read in order
FASTTEXT_STREAMS = 12


def _shrink(model: Any) -> bool:
    return bool(model.spec.params.get("shrink_windows", True))


def _cbow_mean(model: Any) -> bool:
    return bool(model.spec.params.get("cbow_mean", 1))


def _subword_tables(model: Any) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(model.subwords), np.asarray(model.subword_counts)


def _own_rows(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """word2vec CBOW's context words as rows of themselves (the CBOW kernel reads rows per word)."""
    size = model.num_embeddings
    return np.arange(size, dtype=np.int32)[:, None], np.ones(size, dtype=np.int32)


# the kernels' `saturated_skip`: word2vec's tree nodes follow word2vec.c's and gensim's rule (a
# saturated logit updates nothing, kernels.SATURATED_LOGIT), fastText's follow fastText's (clipped)
WORD2VEC_SKIPS_SATURATED, FASTTEXT_SKIPS_SATURATED = True, False


_ALGORITHMS: dict[type, _Algorithm] = {
    SkipGram: _Algorithm(
        "skipgram_job",
        partial(jax_step.make_step, cbow=False),
        lambda m: (_shrink(m), WORD2VEC_SKIPS_SATURATED),
        lambda m: (),
        1,
    ),
    CBOW: _Algorithm(
        "cbow_job",
        partial(jax_step.make_step, cbow=True),
        lambda m: (_shrink(m), _cbow_mean(m), WORD2VEC_SKIPS_SATURATED, *_own_rows(m)),
        lambda m: (),
        1,
        cbow=True,
    ),
    FastText: _Algorithm(
        "fasttext_job",
        fasttext_step.make_step,
        lambda m: (_shrink(m), *_subword_tables(m)),
        _subword_tables,
        FASTTEXT_STREAMS,
    ),
    FastTextCBOW: _Algorithm(
        "cbow_job",
        partial(jax_step.make_step, cbow=True, subwords=True),
        lambda m: (_shrink(m), _cbow_mean(m), FASTTEXT_SKIPS_SATURATED, *_subword_tables(m)),
        _subword_tables,
        FASTTEXT_STREAMS,
        cbow=True,
    ),
}


def _algorithm(model: Any) -> _Algorithm:
    algorithm = _ALGORITHMS.get(type(model))
    if algorithm is None:
        names = ", ".join(sorted(cls.__name__ for cls in _ALGORITHMS))
        raise DataError(
            f"fit trains {names} models (word2vec-skipgram, word2vec-cbow, fasttext, fasttext-cbow), "
            f"not a {type(model).__name__}"
        )
    return algorithm


def make_runner(
    model: Any,
    backend: str,
    tables: SamplingTables,
    *,
    job_words: int,
    mesh: Mesh | None = None,
    lock: np.ndarray | None = None,
) -> Runner:
    """What trains `model` on corpus jobs: its algorithm's numba kernel (``backend="numba"``)
    or its jit-compiled JAX step (``"jax"``, its matrices' rows split over `mesh` if given).
    `lock`: see `fit`."""
    algorithm = _algorithm(model)
    if mesh is not None and backend != "jax":
        raise DataError(f"a mesh needs backend='jax' (the numba kernels train on this host's CPU), got {backend!r}")
    if backend == "numba":
        from zoo_word2vec import kernels

        kernel = getattr(kernels, algorithm.kernel)
        return NumbaRunner(model, tables, kernel, algorithm.kernel_extra(model), lock=lock)
    if lock is not None:
        raise InvalidParameterError(
            "lock (gensim's vectors_lockf, vectors_vocab_lockf, vectors_ngrams_lockf) is honoured by the numba "
            "kernels only, not by the JAX step: train with backend='numba' or leave every factor at 1"
        )
    settings = {
        "window": int(model.spec["window"]),
        "negative": int(model.spec["negative"]),
        "hs": model.tree_output is not None,
        "shrink": _shrink(model),
    }
    if algorithm.cbow:
        settings["cbow_mean"] = _cbow_mean(model)
    build = partial(algorithm.make_step, **settings)
    return JaxRunner(model, tables, build, job_words=job_words, extra=algorithm.step_extra(model), mesh=mesh)


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
    streams: int | None = None,
    workers: int | None = None,
    progress: bool = True,
    description: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    checkpoint_seconds: float | None = None,
    resume: bool = False,
    on_job: Callable[[Position], None] | None = None,
    on_job_begin: Callable[[Position], None] | None = None,
    on_epoch_begin: Callable[[int], None] | None = None,
    on_epoch_end: Callable[[dict[str, float], Callable[[], Any]], None] | None = None,
    epochs: int | None = None,
    alpha: float | None = None,
    min_alpha: float | None = None,
    mesh: Mesh | None = None,
    time_limit: float | None = None,
    log_file: str | os.PathLike | None = None,
    lock: np.ndarray | None = None,
) -> tuple[Any, TrainStats]:
    """Train `model` (built with a ``words`` vocabulary that has counts) on `corpus`.

    **Arguments:**

    - `model`: a word2vec-family model (``word2vec-skipgram``, ``word2vec-cbow``,
      ``fasttext``, ``fasttext-cbow``); its spec holds the training settings (window,
      shrink_windows, negative, hs, cbow_mean, sample, alpha, min_alpha, epochs).
    - `corpus`: a text file (plain or .gz), a folder, a glob pattern (``"corpus/*.txt.gz"``),
      several of them, or token lists; it is tokenised once with `tokenizer` into a
      temporary file of ids (files decoded with `encoding` and `errors`, see
      `zoo.data.corpus.iter_lines`).
    - `backend`: ``"numba"`` (compiled CPU kernels), ``"jax"`` (compiled JAX
      steps, the accelerator path) or ``"auto"``.
    - `threads`: CPU threads for the numba backend (default: all cores). With
      more than one, updates race as in word2vec.c (Hogwild) and a run is not
      bit-for-bit repeatable; with one, or with JAX, it is, for a given `seed`.
    - `job_words`: words per job (one kernel call or one compiled step).
    - `streams`: read the corpus from this many places at once, as fastText's threads
      read their file (each from its own share; `EncodedCorpus.jobs`): 1 is file order;
      on a corpus whose text comes in blocks (one source, then another) more streams
      mix them, as fastText with as many threads does. None: FastText reads
      `FASTTEXT_STREAMS` (fastText's default thread count), skip-gram and CBOW 1
      (gensim's order). It changes what is learnt on such a corpus: on en-mix
      (WikiText, Wikipedia leads, PTB, Tatoeba, dialog, one after the other), FastText's
      WS353 is 0.466 in file order and 0.539 with 2 streams (bench/README.md).
    - `workers`: processes that tokenise the corpus files at the same time (None: one per
      core; a corpus under 4 MiB is read in this process): each writes the ids of its parts
      and the parts are joined in corpus order, so the ids, and the trained vectors, are
      the same for any number of workers.
    - `checkpoint`: a file for the training state (zoo's checkpoint format, its model
      readable with `zoo.load`), written every `checkpoint_every` jobs and every
      `checkpoint_seconds` seconds (either or both), and at the end.
    - `resume`: go on from `checkpoint` if it exists (it must come from the same model
      settings, vocabulary, corpus, `seed`, `job_words` and `streams`); with one thread or JAX the
      result equals a run that was never stopped.
    - `on_job_begin(position)`: called before each job, `on_job(position)` after it;
      `on_epoch_begin(epoch)` before each epoch,
      `on_epoch_end(record, current)` after it, ``current()`` giving the model trained so far
      (see `zoo_word2vec.training.run_epochs`).
    - `epochs`, `alpha`, `min_alpha`: this call's passes and learning-rate schedule, in place
      of the spec's (None: the spec's), as gensim's ``train(epochs=, start_alpha=, end_alpha=)``.
    - `mesh`: a `jax.sharding.Mesh` (JAX backend): the matrices' rows are split over its
      devices, so each holds a share of the tables; the vectors equal a one-device run's.
    - `time_limit`: seconds from this call (as `zoo.train`'s; ``zoo train --minutes``): once
      they have passed, training stops before the next job, writes `checkpoint` there (a run
      with `resume` goes on from it) and says so; ``stats.stopped_on_time`` is then True and
      the model returned is the one trained so far.
    - `log_file`: a JSON-lines metrics log to append to (default: the one of ``zoo train
      --log-file``, if any; see `zoo_word2vec.training.run_epochs`).
    - `lock`: ``[rows of model.input]`` float32, each input row's factor on its updates
      (gensim's ``vectors_lockf``: 0 leaves a row as it is, 1 trains it fully; other values
      just multiply, as in gensim); None: every row at 1. The output layer is never locked.
      Numba backend only (the JAX step refuses it).

    **Returns:** ``(trained model, TrainStats)``; `model` itself is left as it was.

    Raises `TrainingDiverged` if the loss, or any trained parameter, becomes NaN or infinite;
    a checkpoint is only written while every value is finite.
    """
    deadline = _deadline(time_limit)
    vocabs = getattr(model, "vocabs", None) or {}
    if "words" not in vocabs or vocabs["words"].counts is None:
        raise DataError(
            "fit needs a model built with vocab=<Vocab with counts> (see build_vocab): "
            "the counts drive subsampling and the noise distribution"
        )
    p, name = model.spec.params, model.spec.name
    saving = None
    if checkpoint is not None:
        saving = Checkpointing(Path(checkpoint), checkpoint_every, checkpoint_seconds)
    start = None
    if resume and checkpoint is not None and Path(checkpoint).exists():
        saved = load_checkpoint(checkpoint, None, model_like=model)
        start = Resume.from_checkpoint(checkpoint, saved)
        model = saved.model
    vocab = vocabs["words"]
    tables = SamplingTables(vocab.counts, p["sample"], p["ns_exponent"])
    backend = choose_backend("jax" if mesh is not None and backend == "auto" else backend)
    threads = default_threads() if threads is None else threads
    streams = _algorithm(model).streams if streams is None else streams
    runner = make_runner(model, backend, tables, job_words=job_words, mesh=mesh, lock=lock)
    del model  # the runner trains its own copies: a caller that keeps no reference frees the initial ones
    epochs = p["epochs"] if epochs is None else epochs
    alpha = p["alpha"] if alpha is None else alpha
    min_alpha = p["min_alpha"] if min_alpha is None else min_alpha
    with _encode(corpus, vocab, tokenizer, {"encoding": encoding, "errors": errors}, workers) as encoded:
        stats = run_epochs(
            runner,
            encoded.with_streams(streams),
            epochs=epochs,
            alpha=alpha,
            min_alpha=min_alpha,
            seed=seed,
            threads=threads,
            job_words=job_words,
            progress=progress,
            description=description or name,
            on_job=on_job,
            on_job_begin=on_job_begin,
            on_epoch_begin=on_epoch_begin,
            on_epoch_end=on_epoch_end,
            checkpoint=saving,
            resume=start,
            log_file=log_file,
            deadline=deadline,
        )
    stats.backend, stats.threads = backend, threads if backend == "numba" else 0
    trained = runner.finish()
    if not all_finite(trained):
        raise diverged("the trained vectors", f"after {len(stats.history)} epoch(s)", alpha)
    return trained, stats


def _deadline(time_limit: float | None) -> float | None:
    """The `time.monotonic` time `time_limit` seconds from now (None: no budget)."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float) or not 0 < time_limit < float("inf"):
        raise InvalidParameterError(
            f"fit: time_limit={time_limit!r} is out of range: it must be a finite number of seconds > 0"
        )
    return time.monotonic() + time_limit
