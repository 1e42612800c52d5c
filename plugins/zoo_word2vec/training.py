"""Train word-embedding models on a corpus: epochs of jobs, a decaying learning rate, threads.

The loop is shared by skip-gram, CBOW and FastText; what trains on one job is a
*runner* (`zoo_word2vec.backends`): a compiled CPU kernel (numba, several
threads at once, Hogwild like word2vec.c and gensim) or a jit-compiled JAX step
(the accelerator path, and the CPU fallback without numba).

The learning rate decays linearly from ``alpha`` to ``min_alpha`` over all words
of all epochs, by each job's position in the corpus (not by wall-clock order),
and every job draws its randomness from a seed derived from ``(seed, job
index)``: with one thread, or with the JAX runner, a run is exactly repeatable.

The loss is checked wherever it is reported (every half second and at each
epoch's end): a NaN or infinite loss stops training with `TrainingDiverged`.
"""

from __future__ import annotations

import collections
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from tqdm.auto import tqdm

from zoo.data.corpus import iter_ids
from zoo.data.vocab import Vocab
from zoo.errors import DataError, TrainingDiverged
from zoo_word2vec.stream import EncodedCorpus

__all__ = ["Runner", "TrainStats", "diverged", "encode_corpus", "job_seed", "run_epochs", "schedule"]

Corpus = str | os.PathLike | Sequence[str | os.PathLike] | Iterable[Sequence[str]]

_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


class Runner(Protocol):
    """Trains on one job at a time and yields the trained model at the end."""

    parallel: bool
    """Whether `run` may be called from several threads at once."""

    def run(self, job: np.ndarray, alpha_start: float, alpha_end: float, seed: int) -> tuple[Any, Any, int]:
        """Train on `job` (ids, -1 between sentences); return ``(loss_sum, loss_count, words)``."""
        ...

    def finish(self) -> Any:
        """The model with the trained parameters."""
        ...


@dataclass
class TrainStats:
    """What a training run did.

    - `words`: in-vocabulary corpus words processed over all epochs (before subsampling).
    - `seconds`: wall time of the epochs (corpus encoding not included).
    - `history`: one dict per epoch: ``epoch``, ``loss`` (mean per positive pair),
      ``words_per_s``, ``alpha`` (at the epoch's end).
    - `backend`: the runner that trained (``"numba"`` or ``"jax"``); `threads`: the
      numba kernels' threads (0 for JAX).
    """

    words: int = 0
    seconds: float = 0.0
    history: list[dict[str, float]] = field(default_factory=list)
    backend: str = ""
    threads: int = 0

    @property
    def words_per_s(self) -> float:
        return self.words / self.seconds if self.seconds > 0 else 0.0


def encode_corpus(
    corpus: Corpus | EncodedCorpus,
    vocab: Vocab,
    tokenizer: Any = None,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> EncodedCorpus:
    """Tokenise and look up `corpus` once (a path, several paths, or token lists) into an `EncodedCorpus`;
    files are decoded with `encoding` and `errors` (see `zoo.data.corpus.iter_lines`)."""
    if isinstance(corpus, EncodedCorpus):
        return corpus
    text = {"encoding": encoding, "errors": errors}
    if _is_path_list(corpus):
        return EncodedCorpus.write(ids for path in corpus for ids in iter_ids(path, vocab, tokenizer, **text))
    return EncodedCorpus.write(iter_ids(corpus, vocab, tokenizer, **text))


def _is_path_list(corpus: Any) -> bool:
    """True for a list of files; a list of strings that are not all files is a mistake worth naming."""
    if not isinstance(corpus, list | tuple) or not corpus or not all(isinstance(p, str | os.PathLike) for p in corpus):
        return False
    if not all(os.path.isfile(p) for p in corpus):
        missing = next(p for p in corpus if not os.path.isfile(p))
        raise DataError(f"no corpus file at {missing}; pass sentences as lists of tokens, files as paths")
    return True


def schedule(alpha: float, min_alpha: float, done: int, total: int) -> float:
    """The learning rate after `done` of `total` words: linear from `alpha` to `min_alpha`."""
    return alpha - (alpha - min_alpha) * min(done / max(total, 1), 1.0)


def job_seed(seed: int, index: int) -> int:
    """The 64-bit seed of job `index` of a run seeded `seed`."""
    return ((seed & _MASK64) * _GOLDEN + index + 1) & _MASK64


def run_epochs(
    runner: Runner,
    corpus: EncodedCorpus,
    *,
    epochs: int,
    alpha: float,
    min_alpha: float,
    seed: int = 0,
    threads: int = 1,
    job_words: int = 10_000,
    progress: bool = True,
    description: str | None = None,
    on_epoch: Callable[[dict[str, float]], None] | None = None,
) -> TrainStats:
    """Train `runner` for `epochs` passes over `corpus`; return the statistics."""
    if epochs < 1:
        raise DataError(f"epochs must be at least 1, got {epochs}")
    total = epochs * corpus.words
    threads = max(1, threads) if runner.parallel else 1
    stats = TrainStats()
    bar = tqdm(total=total, disable=not progress, desc=description, unit="word", unit_scale=True, dynamic_ncols=True)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    done = index = 0
    start_time = time.perf_counter()
    try:
        for epoch in range(epochs):
            epoch_start = time.perf_counter()
            tally = _Tally(epoch + 1, alpha)
            pending: collections.deque[Future | tuple] = collections.deque()
            for job in corpus.jobs(job_words):
                words = int(np.count_nonzero(job >= 0))
                a0 = schedule(alpha, min_alpha, done, total)
                a1 = schedule(alpha, min_alpha, done + words, total)
                done += words
                if pool is None:
                    tally.add(runner.run(job, a0, a1, job_seed(seed, index)), bar, a1)
                else:
                    pending.append(pool.submit(runner.run, job, a0, a1, job_seed(seed, index)))
                    while len(pending) > 2 * threads:
                        tally.add(pending.popleft().result(), bar, a1)
                index += 1
            while pending:
                tally.add(pending.popleft().result(), bar, schedule(alpha, min_alpha, done, total))
            tally.show(bar, schedule(alpha, min_alpha, done, total))
            seconds = time.perf_counter() - epoch_start
            record = {
                "epoch": epoch + 1,
                "loss": tally.mean_loss(),
                "words_per_s": tally.words / max(seconds, 1e-9),
                "alpha": schedule(alpha, min_alpha, done, total),
            }
            stats.history.append(record)
            if on_epoch is not None:
                on_epoch(record)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        bar.close()
    stats.words = done
    stats.seconds = time.perf_counter() - start_time
    return stats


def diverged(what: str, where: str, alpha: float) -> TrainingDiverged:
    """The error that stops an embedder whose `what` became NaN or infinite `where`."""
    return TrainingDiverged(
        f"{what} became NaN or infinite {where}; training stopped and nothing was returned or saved. "
        f"Lower the learning rate (alpha={alpha:g}: alpha=... in zoo.build, --alpha in zoo train), "
        "or check the data for bad values."
    )


class _Tally:
    """Loss and word counts of an epoch; device values are summed lazily (no sync per job).

    Each time it is shown (every half second, and at the epoch's end) the mean loss is
    checked: a NaN or infinite loss raises `TrainingDiverged`.
    """

    def __init__(self, epoch: int, alpha: float) -> None:
        self.epoch, self.alpha = epoch, alpha
        self.loss: Any = 0.0
        self.count: Any = 0
        self.words = 0
        self._unshown = 0
        self._shown_at = time.perf_counter()

    def add(self, result: tuple[Any, Any, int], bar: tqdm, alpha: float) -> None:
        loss, count, words = result
        self.loss, self.count = self.loss + loss, self.count + count
        self.words += int(words)
        self._unshown += int(words)
        if time.perf_counter() - self._shown_at > 0.5:
            self.show(bar, alpha)

    def show(self, bar: tqdm, alpha: float) -> None:
        """Move the progress bar, with loss and learning rate in its postfix; stop on a non-finite loss."""
        bar.update(self._unshown)
        self._unshown = 0
        self._shown_at = time.perf_counter()
        loss = self.mean_loss()
        if not math.isfinite(loss):
            where = f"in epoch {self.epoch} (after {self.words:,} of its words)"
            raise diverged("the loss", where, self.alpha)
        if not bar.disable:
            bar.set_postfix(loss=f"{loss:.4f}", lr=f"{alpha:.5f}", refresh=False)

    def mean_loss(self) -> float:
        return float(self.loss) / max(float(self.count), 1.0)
