"""Train word-embedding models on a corpus: epochs of jobs, a decaying learning rate, threads.

The loop is shared by skip-gram, CBOW and FastText; what trains on one job is a
*runner* (`zoo_word2vec.backends`): a compiled CPU kernel (numba, several
threads at once, Hogwild like word2vec.c and gensim) or a jit-compiled JAX step
(the accelerator path, and the CPU fallback without numba).

The learning rate decays linearly from ``alpha`` to ``min_alpha`` over all words
of all epochs, by each job's position in the corpus (not by wall-clock order),
and every job draws its randomness from a seed derived from ``(seed, job
index)``: with one thread, or with the JAX runner, a run is exactly repeatable.

The loop has the features of `zoo.train`, between jobs (the kernels run
untouched):

- **checkpoints** in zoo's atomic checkpoint format (`zoo.plugin_api.save_checkpoint`):
  the model's matrices, the `Position` (epoch, job, the job index that seeds the
  next job's randomness, the words done that set the learning rate) and the
  epoch's running loss, every so many jobs or seconds and at the end. In-flight
  jobs finish first, so a checkpoint holds exactly the jobs before its position.
- **resume**: a run started from a checkpoint skips the jobs it holds and goes
  on; with one thread (or JAX) it ends with exactly the vectors of a run that
  was never stopped.
- **a NaN guard**: the loss is checked wherever it is reported (every half
  second and at each epoch's end) and before every checkpoint, which is written
  only when the loss and every vector are finite; a NaN or infinite value stops
  training with `TrainingDiverged`, naming the last checkpoint.
- **progress** (`zoo.plugin_api.Progress`, the behaviour of `zoo.train`): on a
  terminal a bar with words/s, the loss and the learning rate; elsewhere one plain
  line every `log_seconds` and at each epoch's end; the same intervals as JSON
  records in a metrics log (``log_file``, or ``zoo train --log-file``); one history
  record per epoch.
- **a time budget** (``deadline``, ``zoo train --minutes``): past it, training stops at the
  next job boundary (the jobs in flight finish), writes its checkpoint there (a resumed
  run goes on from it) and says so; the vectors trained so far are the result.
- **epoch hooks**: a call before each epoch and one after it with the epoch's
  record and the vectors trained so far (gensim's callbacks ride on them,
  `zoo.vectors.CallbackAny2Vec`).
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from zoo.plugin_api import (
    Checkpoint,
    DataError,
    Progress,
    TrainingDiverged,
    Vocab,
    WeightsError,
    iter_ids,
    open_log,
    save_checkpoint,
)
from zoo_word2vec.stream import EncodedCorpus

__all__ = [
    "Checkpointing",
    "Position",
    "Resume",
    "Runner",
    "TrainStats",
    "all_finite",
    "copy_matrices",
    "diverged",
    "encode_corpus",
    "job_seed",
    "run_epochs",
    "schedule",
]

Corpus = str | os.PathLike | Sequence[str | os.PathLike] | Iterable[Sequence[str]]

_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


class Runner(Protocol):
    """Trains on one job at a time and yields the trained model at the end."""

    parallel: bool
    """Whether `run` may be called from several threads at once."""

    def run(self, job: np.ndarray, alpha_start: float, alpha_end: float, seed: int) -> tuple[Any, Any, int, Any]:
        """Train on `job` (ids, -1 between sentences); return ``(loss_sum, loss_count, words,
        kept_words)``: `kept_words` are those subsampling kept (a device value may be lazy)."""
        ...

    def snapshot(self) -> Any:
        """The model with the parameters trained so far, while no job runs (for a checkpoint)."""
        ...

    def finish(self) -> Any:
        """The model with the trained parameters."""
        ...


@dataclass(frozen=True)
class Position:
    """Where a run stands between two jobs.

    - `epoch`: the epoch under way, from 0 (`epochs` once training is done).
    - `job`: the jobs of that epoch already trained.
    - `jobs`: the jobs trained over all epochs; job ``i`` draws its randomness from ``job_seed(seed, i)``.
    - `words`: the corpus words trained over all epochs; the learning rate follows them.
    """

    epoch: int = 0
    job: int = 0
    jobs: int = 0
    words: int = 0


@dataclass(frozen=True)
class Checkpointing:
    """Where and how often `run_epochs` writes the training state.

    - `path`: the checkpoint file (zoo's checkpoint format; `zoo.load` reads its model).
    - `every`: jobs between checkpoints, counted from the start of training (None: off).
    - `seconds`: wall-clock seconds between checkpoints (None: off).

    A checkpoint is also written at the end of training.
    """

    path: Path
    every: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("every", "seconds"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise DataError(f"checkpoint_{name} must be positive (or None to turn it off), got {value!r}")


# what a checkpoint's position holds besides the `Position`: the run it belongs to, and the epoch's tally
_RUN_KEYS = ("seed", "job_words", "corpus_words", "streams")
_TALLY_KEYS = ("epoch_pairs", "epoch_words")


@dataclass(frozen=True)
class Resume:
    """A checkpoint to go on from: where it stands, the run that wrote it, and its epoch's tally so far."""

    path: Path
    position: Position
    run: dict[str, int]
    loss: float
    pairs: int
    words: int

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike, saved: Checkpoint) -> Resume:
        """Read the progress of `saved` (`zoo.plugin_api.load_checkpoint` of `path`); refuse one
        that this loop did not write."""
        stored = dict(saved.position or {})
        stored.setdefault("streams", 1)  # written before the corpus could be read as several streams
        keys = ("epoch", "job", "jobs", "words", *_RUN_KEYS, *_TALLY_KEYS)
        if set(stored) != set(keys) or set(saved.totals or {}) != {"loss"}:
            raise WeightsError(
                f"{path} is a checkpoint, but not of a word2vec-family run (its position has "
                f"{sorted(stored)}): resume it with the loop that wrote it, or start afresh with another file"
            )
        position = Position(*(stored[k] for k in ("epoch", "job", "jobs", "words")))
        run = {k: stored[k] for k in _RUN_KEYS}
        loss = float(saved.totals["loss"])
        return cls(Path(path), position, run, loss, stored["epoch_pairs"], stored["epoch_words"])

    def check_run(self, run: dict[str, int]) -> None:
        """Refuse to go on with settings other than those of the run that wrote the checkpoint."""
        differences = [f"{k}={self.run[k]} (this run: {run[k]})" for k in _RUN_KEYS if self.run[k] != run[k]]
        if differences:
            what = ", ".join(differences).replace("corpus_words", "a corpus of words")
            raise DataError(
                f"{self.path} is a checkpoint of another run: it has {what}. Resume with the same corpus, "
                "seed and job size, or start afresh with another checkpoint file"
            )


@dataclass
class TrainStats:
    """What a training run did.

    - `words`: in-vocabulary corpus words trained by this call (before subsampling;
      a resumed run counts only what it trained); `kept_words`: those of them subsampling
      kept (gensim's effective words).
    - `seconds`: wall time of the epochs (corpus encoding not included).
    - `history`: one dict per epoch this call finished: ``epoch``, ``loss`` (mean per
      positive pair over the whole epoch, resumed or not), ``pairs`` (the positive pairs it
      trained, so ``loss * pairs`` is its summed loss), ``words_per_s``, ``alpha``
      (at the epoch's end).
    - `backend`: the runner that trained (``"numba"`` or ``"jax"``); `threads`: the
      numba kernels' threads (0 for JAX).
    - `resumed`: where the run started from a checkpoint (None: from the start).
    - `checkpoints`: checkpoints written.
    - `stopped_on_time`: True when the time budget ended training before its last epoch's end.
    """

    words: int = 0
    kept_words: int = 0
    seconds: float = 0.0
    history: list[dict[str, float]] = field(default_factory=list)
    backend: str = ""
    threads: int = 0
    resumed: Position | None = None
    checkpoints: int = 0
    stopped_on_time: bool = False

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


def _mix64(x: int) -> int:
    """splitmix64's output function of `x` (a bijection of 64-bit integers)."""
    z = (x + _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def job_seed(seed: int, index: int) -> int:
    """The 64-bit seed of job `index` of a run seeded `seed`: a hash of both. The kernels step
    their state by `_GOLDEN`, so seeds that differ by a multiple of it would draw shifted copies
    of one stream (seed ``s + 1`` the draws of ``s`` one word later); hashed, no two are near."""
    return _mix64((_mix64(seed & _MASK64) + index + 1) & _MASK64)


def copy_matrices(model: Any) -> Any:
    """`model` with its own copies of the ``input``, ``output`` and ``tree_output`` matrices (a
    runner's snapshot may share the buffers it goes on training)."""
    matrices = lambda m: (m.input, m.output, m.tree_output)
    copies = tuple(np.array(a) if a is not None else None for a in matrices(model))
    return eqx.tree_at(matrices, model, copies, is_leaf=lambda x: x is None)


def all_finite(model: Any) -> bool:
    """Whether every floating-point array of `model` holds only finite values (one reduction per array)."""
    arrays = jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array))
    return all(bool(jnp.all(jnp.isfinite(a))) for a in arrays)


def diverged(what: str, where: str, alpha: float, checkpoint: str = "") -> TrainingDiverged:
    """The error that stops an embedder whose `what` became NaN or infinite `where`; `checkpoint`
    says which checkpoint holds the last finite state, if one does."""
    return TrainingDiverged(
        f"{what} became NaN or infinite {where}; training stopped and nothing was returned or saved{checkpoint}. "
        f"Lower the learning rate (alpha={alpha:g}: alpha=... in zoo.build, --alpha in zoo train), "
        "or check the data for bad values."
    )


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
    on_epoch_begin: Callable[[int], None] | None = None,
    on_epoch_end: Callable[[dict[str, float], Callable[[], Any]], None] | None = None,
    on_job: Callable[[Position], None] | None = None,
    on_job_begin: Callable[[Position], None] | None = None,
    checkpoint: Checkpointing | None = None,
    resume: Resume | None = None,
    log_file: str | os.PathLike | None = None,
    log_seconds: float = 10.0,
    deadline: float | None = None,
) -> TrainStats:
    """Train `runner` for `epochs` passes over `corpus`; return the statistics.

    `on_job_begin(position)` is called in the calling thread before each job is handed to a
    thread (`position`: where the run stands before it, the jobs in flight counted as done).
    `on_job(position)` is called in the calling thread after each job, in job order,
    with the position after it (an exception it raises stops training).
    `on_epoch_begin(epoch)` is called before each epoch this call trains (from 1; a
    resumed run calls it for the epoch it goes on with), `on_epoch_end(record,
    current)` after it, with the epoch's `TrainStats.history` record and ``current()``,
    which gives the model as trained so far (a copy of its matrices; call it during
    the hook, while no job runs). With
    `checkpoint`, the training state is written as it says; with `resume`, training
    goes on from that checkpoint (whose model `runner` holds).

    Progress (`zoo.plugin_api.Progress`): a bar on a terminal, else a plain line every
    `log_seconds` and at each epoch's end; each such interval is also a record of the
    metrics log `log_file` (default: the ambient one of ``zoo train --log-file``):
    ``step`` (jobs trained), ``epoch``, ``words``, ``loss`` (the epoch's running mean),
    ``lr``, ``units_per_s`` (words/s), ``elapsed``.

    `deadline`: a `time.monotonic` time; once it has passed, training stops before the
    next job (at least one job runs), checkpoints there when `checkpoint` is given, notes
    ``stopped on time`` and sets `TrainStats.stopped_on_time`; None: no budget.
    """
    if epochs < 1:
        raise DataError(f"epochs must be at least 1, got {epochs}")
    total = epochs * corpus.words
    run = {"seed": seed & _MASK64, "job_words": job_words, "corpus_words": corpus.words, "streams": corpus.streams}
    if resume is not None:
        resume.check_run(run)
    at = resume.position if resume is not None else Position()
    threads = max(1, threads) if runner.parallel else 1
    stats = TrainStats(resumed=at if resume is not None else None)
    saver = _Saver(checkpoint, runner, run, alpha, resume)
    if not log_seconds > 0:
        raise DataError(f"log_seconds must be positive, got {log_seconds!r}")
    reporting = contextlib.ExitStack()
    log = reporting.enter_context(open_log(log_file))
    bar = reporting.enter_context(
        Progress(
            total=total,
            initial=at.words,
            unit="word",
            unit_scale=True,
            show=progress,
            log=log,
            description=description,
        )
    )
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    done, index = at.words, at.jobs
    start_time = time.perf_counter()

    def out_of_time() -> bool:  # the budget is spent, and this call has trained a job
        return deadline is not None and index > at.jobs and time.monotonic() >= deadline

    try:
        for epoch in range(at.epoch, epochs):
            if out_of_time():  # between epochs: stop before this one begins
                stats.stopped_on_time = True
                tally = _Tally(epoch + 1, alpha, saver, (epochs, total, log_seconds))
                _stop_on_time(saver, bar, tally, Position(epoch, 0, index, done), epochs, corpus.words)
                break
            if on_epoch_begin is not None:
                on_epoch_begin(epoch + 1)
            epoch_start = time.perf_counter()
            tally = _Tally(epoch + 1, alpha, saver, (epochs, total, log_seconds))
            skip = at.job if epoch == at.epoch else 0
            if resume is not None and epoch == at.epoch:
                tally.restore(resume)
            pending: collections.deque[tuple[Future | tuple, Position]] = collections.deque()
            job = skipped = 0
            for ids in corpus.jobs(job_words):
                if job < skip:
                    skipped += int(np.count_nonzero(ids >= 0))
                    job += 1
                    continue
                if job == skip and skip:
                    _check_skipped(resume, epoch * corpus.words + skipped, done)
                if out_of_time():
                    stats.stopped_on_time = True
                    break
                if saver.due(index):
                    _drain(pending, tally, bar, on_job)
                    saver.write(Position(epoch, job, index, done), tally)
                words = int(np.count_nonzero(ids >= 0))
                a0 = schedule(alpha, min_alpha, done, total)
                a1 = schedule(alpha, min_alpha, done + words, total)
                done += words
                after = Position(epoch, job + 1, index + 1, done)
                if on_job_begin is not None:
                    on_job_begin(Position(epoch, job, index, done - words))
                if pool is None:
                    pending.append((runner.run(ids, a0, a1, job_seed(seed, index)), after))
                    _drain(pending, tally, bar, on_job, alpha=a1)
                else:
                    pending.append((pool.submit(runner.run, ids, a0, a1, job_seed(seed, index)), after))
                    while len(pending) > 2 * threads:
                        _drain(pending, tally, bar, on_job, alpha=a1, keep=2 * threads)
                index += 1
                job += 1
            if stats.stopped_on_time:  # the jobs in flight finish; the checkpoint goes before the next one
                lr, stop = schedule(alpha, min_alpha, done, total), Position(epoch, job, index, done)
                _drain(pending, tally, bar, on_job, alpha=lr)
                stats.kept_words += int(tally.kept)
                tally.show(bar, lr)
                tally.report(bar, lr, stop)
                _stop_on_time(saver, bar, tally, stop, epochs, corpus.words)
                break
            if job < skip:
                raise DataError(
                    f"{resume.path} was written before job {skip} of epoch {epoch + 1}, but this corpus has "
                    f"only {job} jobs an epoch: it is not the corpus the checkpoint was trained on"
                )
            _drain(pending, tally, bar, on_job, alpha=schedule(alpha, min_alpha, done, total))
            stats.kept_words += int(tally.kept)
            tally.show(bar, schedule(alpha, min_alpha, done, total))
            seconds = time.perf_counter() - epoch_start
            record = {
                "epoch": epoch + 1,
                "loss": tally.mean_loss(),
                "pairs": int(tally.count),
                "words_per_s": tally.fresh / max(seconds, 1e-9),
                "alpha": schedule(alpha, min_alpha, done, total),
            }
            stats.history.append(record)
            tally.report(bar, record["alpha"], Position(epoch + 1, 0, index, done), rate=record["words_per_s"])
            if on_epoch_end is not None:
                on_epoch_end(record, lambda: copy_matrices(runner.snapshot()))
        if index > at.jobs and not stats.stopped_on_time:
            saver.write(
                Position(epochs, 0, index, done), _Tally(epochs, alpha, saver, (epochs, total, 0.0)), final=True
            )
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        reporting.close()
    stats.words = done - at.words
    stats.seconds = time.perf_counter() - start_time
    stats.checkpoints = saver.written
    return stats


def _drain(pending, tally, bar, on_job, *, alpha: float | None = None, keep: int = 0) -> None:
    """Tally the finished jobs at the front of `pending` (waiting for them) until `keep` are left."""
    while len(pending) > keep:
        result, after = pending.popleft()
        tally.add(result.result() if isinstance(result, Future) else result, bar, alpha, after)
        if on_job is not None:
            on_job(after)


def _stop_on_time(saver: _Saver, bar: Progress, tally: _Tally, at: Position, epochs: int, words: int) -> None:
    """The time budget ran out at `at` (no job in flight): checkpoint there and say so."""
    saver.write(at, tally)
    where = f"job {at.job} of epoch {at.epoch + 1}" if at.job else f"epoch {at.epoch}"
    kept = f"; {saver.config.path} resumes from there" if saver.config is not None else ""
    bar.note(
        f"stopped on time: the time budget ran out after {where} of {epochs} "
        f"({at.words:,} of {epochs * words:,} words){kept}"
    )


def _check_skipped(resume: Resume, found: int, expected: int) -> None:
    """The jobs a resumed run skips must hold the words its checkpoint counted."""
    if found != expected:
        raise DataError(
            f"{resume.path} was written after {expected:,} words, but its jobs in this corpus hold "
            f"{found:,}: it is not the corpus the checkpoint was trained on (same size, other text)"
        )


class _Saver:
    """Writes checkpoints when they are due; knows the last one, for the divergence message."""

    def __init__(
        self, config: Checkpointing | None, runner: Runner, run: dict[str, int], alpha: float, resume: Resume | None
    ) -> None:
        self.config, self.runner, self.run, self.alpha = config, runner, run, alpha
        self.last: Position | None = resume.position if resume is not None else None
        self.origin = self.last.jobs if self.last is not None else 0
        self.written = 0
        self._at = time.monotonic()

    def due(self, index: int) -> bool:
        """Whether a checkpoint is due before job `index`."""
        c = self.config
        if c is None or index == self.origin:
            return False
        return bool(c.every and index % c.every == 0) or bool(c.seconds and time.monotonic() - self._at >= c.seconds)

    def write(self, position: Position, tally: _Tally, *, final: bool = False) -> None:
        """Write the state at `position` (no job in flight) if every number in it is finite."""
        if self.config is None:
            return
        where = "at the end of training" if final else f"before job {position.job} of epoch {position.epoch + 1}"
        tally.check()
        model = self.runner.snapshot()
        if not all_finite(model):
            raise diverged("the trained vectors", where, self.alpha, self.note())
        numbers = {"epoch": position.epoch, "job": position.job, "jobs": position.jobs, "words": position.words}
        numbers.update(self.run, epoch_pairs=int(tally.count), epoch_words=tally.words)
        totals = {"loss": float(tally.loss)}
        save_checkpoint(self.config.path, model, None, step=position.jobs, position=numbers, totals=totals)
        self.last, self.written, self._at = position, self.written + 1, time.monotonic()

    def note(self) -> str:
        """Where the last finite state is, for a divergence message."""
        if self.config is None or self.last is None:
            return ""
        p = self.last
        return (
            f"; the last checkpoint, {self.config.path}, holds the finite state before job {p.job} of epoch "
            f"{p.epoch + 1} ({p.words:,} words trained)"
        )


class _Tally:
    """Loss and word counts of an epoch; device values are summed lazily (no sync per job).

    Each time it is shown (every half second, and at the epoch's end) the mean loss is
    checked: a NaN or infinite loss raises `TrainingDiverged`. Every `log_seconds` of
    `run` (``(epochs, total words, log_seconds)``) it reports an interval (`report`).

    - `words`: the epoch's words trained (before a resume included); `fresh`: those this call
      trained; `kept`: those of `fresh` that subsampling kept.
    """

    def __init__(self, epoch: int, alpha: float, saver: _Saver, run: tuple[int, int, float]) -> None:
        self.epoch, self.alpha, self.saver = epoch, alpha, saver
        self.epochs, self.total, self.log_seconds = run
        self.loss: Any = 0.0
        self.count: Any = 0
        self.kept: Any = 0  # words subsampling kept, trained by this call
        self.words = self.fresh = 0
        self._unshown = 0
        self._shown_at = self._reported_at = time.perf_counter()
        self._unreported = 0

    def restore(self, resume: Resume) -> None:
        """Start from the tally a checkpoint holds (its epoch's loss, pairs and words so far)."""
        self.loss, self.count, self.words = resume.loss, resume.pairs, resume.words

    def add(self, result: tuple[Any, Any, int, Any], bar: Progress, alpha: float | None, after: Position) -> None:
        loss, count, words, kept = result
        self.loss, self.count = self.loss + loss, self.count + count
        self.kept = self.kept + kept
        self.words += int(words)
        self.fresh += int(words)
        self._unshown += int(words)
        self._unreported += int(words)
        now = time.perf_counter()
        if now - self._reported_at >= self.log_seconds:
            self.show(bar, alpha)
            self.report(bar, alpha if alpha is not None else self.alpha, after)
        elif now - self._shown_at > 0.5:
            self.show(bar, alpha)

    def show(self, bar: Progress, alpha: float | None) -> None:
        """Move the progress bar, with loss and learning rate in its postfix; stop on a non-finite loss."""
        bar.advance(self._unshown)
        self._unshown = 0
        self._shown_at = time.perf_counter()
        loss = self.check()
        bar.status(f"loss {loss:.4f}  lr {alpha if alpha is not None else self.alpha:.5f}")

    def report(self, bar: Progress, alpha: float, at: Position, *, rate: float | None = None) -> None:
        """One log interval (a plain line off a terminal, a record in the metrics log) after
        `at`; `rate`: the words/s to report (default: since the last interval)."""
        now = time.perf_counter()
        if rate is None:
            rate = self._unreported / max(now - self._reported_at, 1e-9)
        self._unreported, self._reported_at = 0, now
        loss = self.check()
        record = {"step": at.jobs, "epoch": self.epoch, "words": at.words, "loss": loss, "lr": alpha}
        record.update(units_per_s=rate, unit="word")
        shown = f"loss {loss:.4f}  lr {alpha:.5f}  {_words_rate(rate)}"
        where = f"epoch {self.epoch}/{self.epochs}  {_count(at.words)}/{_count(self.total)} words"
        bar.interval(record, shown, where)

    def check(self) -> float:
        """The mean loss; `TrainingDiverged` if it is NaN or infinite."""
        loss = self.mean_loss()
        if not math.isfinite(loss):
            where = f"in epoch {self.epoch} (after {self.words:,} of its words)"
            raise diverged("the loss", where, self.alpha, self.saver.note())
        return loss

    def mean_loss(self) -> float:
        return float(self.loss) / max(float(self.count), 1.0)


def _count(n: float) -> str:
    """``950``, ``12.3k``, ``4.56M``: a word count for a progress line."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.0f}"


def _words_rate(rate: float) -> str:
    return f"{_count(rate)} words/s"
