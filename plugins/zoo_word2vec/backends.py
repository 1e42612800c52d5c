"""Runners: what trains a word2vec-family model on one job (see `zoo_word2vec.training`).

- `NumbaRunner`: the compiled CPU kernels (`zoo_word2vec.kernels`), updating
  NumPy copies of the matrices in place from several threads (numba, a regular
  dependency of zoo).
- `JaxRunner`: one jit-compiled step per job (`zoo_word2vec.jax_step`), for
  accelerators and as the CPU fallback; given a mesh, the matrices' rows are
  split over its devices (each holds a share of the tables, gathers and
  scatter-adds reach the rows' owners) with the same result as on one device.

`choose_backend("auto")` takes numba when it is installed and JAX computes on
the CPU, and JAX otherwise.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from zoo.plugin_api import DataError
from zoo_word2vec.sampling import alias_table, keep_thresholds, noise_distribution
from zoo_word2vec.settings import BACKENDS

__all__ = [
    "BACKENDS",
    "JaxRunner",
    "NumbaRunner",
    "SamplingTables",
    "choose_backend",
    "numba_available",
    "row_lock",
    "tree_arrays",
]


def numba_available() -> bool:
    """True when numba is importable (zoo depends on it; an environment may still lack it)."""
    return importlib.util.find_spec("numba") is not None


def choose_backend(backend: str) -> str:
    """Resolve ``"auto"`` to ``"numba"`` or ``"jax"``; check an explicit choice."""
    if backend not in BACKENDS:
        raise DataError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "numba" and not numba_available():
        raise DataError("backend='numba' needs numba, which is missing here: pip install numba (or use backend='jax')")
    if backend == "auto":
        on_cpu = jax.default_backend() == "cpu"
        return "numba" if on_cpu and numba_available() else "jax"
    return backend


class SamplingTables:
    """Subsampling thresholds and the noise alias table of a vocabulary.

    **Arguments:**

    - `counts`: ``[V]`` corpus counts (the vocabulary's).
    - `sample`: subsampling threshold (0: keep every word).
    - `ns_exponent`: noise ∝ count ** ns_exponent.
    """

    def __init__(self, counts: np.ndarray, sample: float, ns_exponent: float) -> None:
        counts = np.asarray(counts)
        self.keep = keep_thresholds(counts, sample)
        table = alias_table(noise_distribution(counts, ns_exponent))
        self.alias_threshold, self.alias_index = table.threshold, table.alias


def _matrices(model: Any) -> tuple[Any, Any, Any]:
    """The trained matrices of `model`: ``input``, ``output``, ``tree_output`` (None where it has none)."""
    return model.input, model.output, model.tree_output


def _without_matrices(model: Any) -> Any:
    """`model` with its trained matrices dropped, so a runner does not keep the initial ones
    alive while it trains its own copies."""
    return eqx.tree_at(_matrices, model, (None, None, None), is_leaf=lambda x: x is None)


def _with_matrices(skeleton: Any, input: Any, output: Any, tree_output: Any) -> Any:
    return eqx.tree_at(_matrices, skeleton, (input, output, tree_output), is_leaf=lambda x: x is None)


def tree_arrays(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The model's paths ``(tree_nodes, tree_codes)`` as int32 arrays; one empty path without hs."""
    if model.tree_nodes is None:
        return np.full((1, 1), -1, dtype=np.int32), np.zeros((1, 1), dtype=np.int32)
    return np.asarray(model.tree_nodes, dtype=np.int32), np.asarray(model.tree_codes, dtype=np.int32)


def row_lock(lock: np.ndarray | None, rows: int) -> np.ndarray:
    """The kernels' `lock`: ``[rows]`` float32 factors, or ``[0]`` for None (every row at 1)."""
    if lock is None:
        return np.zeros(0, dtype=np.float32)
    lock = np.ascontiguousarray(lock, dtype=np.float32)
    if lock.shape != (rows,):
        raise DataError(f"lock must hold one factor per input row, shape ({rows},); got {lock.shape}")
    return lock


def _aligned_copy(array: Any, alignment: int = 64) -> np.ndarray:
    """A writable float32 NumPy copy of `array` whose data starts on an `alignment`-byte
    boundary: XLA can then adopt the buffer without copying (`jnp.from_dlpack`)."""
    shape = tuple(array.shape)
    nbytes = int(np.prod(shape)) * 4
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start : start + nbytes].view(np.float32).reshape(shape)
    out[...] = np.asarray(array, dtype=np.float32)
    return out


class NumbaRunner:
    """Trains a model with a compiled job kernel, Hogwild across threads.

    The kernel is called as ``kernel(W, lock, W', W'_tree, tree_nodes, tree_codes, *extra, job,
    keep, alias_threshold, alias_index, window, negative, alpha_start, alpha_end, seed)``
    (`lock`: ``[rows of W]`` float32 factors of each input row's updates, gensim's
    ``vectors_lockf``; None: every row at 1) and updates NumPy copies of the model's ``input``,
    ``output`` and ``tree_output``
    matrices in place (a missing one is ``[0, D]``); the trained model adopts those
    buffers without a further copy, so training holds the matrices twice at most (the
    caller's and the runner's).
    """

    parallel = True

    def __init__(
        self, model: Any, tables: SamplingTables, kernel: Any, extra: tuple = (), lock: np.ndarray | None = None
    ) -> None:
        self._model, self._kernel, self._tables = _without_matrices(model), kernel, tables
        self._extra = (*tree_arrays(model), *extra)
        self._lock = row_lock(lock, model.input.shape[0])
        dim = model.input.shape[1]
        self._present = (model.output is not None, model.tree_output is not None)
        self.syn0 = _aligned_copy(model.input)
        self.syn1, self.syn1hs = (
            _aligned_copy(m) if m is not None else np.zeros((0, dim), np.float32)
            for m in (model.output, model.tree_output)
        )
        self._window, self._negative = int(model.spec["window"]), int(model.spec["negative"])
        self.run(np.full(1, -1, dtype=np.int32), 0.0, 0.0, 0)  # compile (or load from cache) before timing starts

    def run(self, job: np.ndarray, alpha_start: float, alpha_end: float, seed: int) -> tuple[float, int, int, int]:
        t = self._tables
        return self._kernel(
            self.syn0,
            self._lock,
            self.syn1,
            self.syn1hs,
            *self._extra,
            job,
            t.keep,
            t.alias_threshold,
            t.alias_index,
            self._window,
            self._negative,
            alpha_start,
            alpha_end,
            np.uint64(seed),
        )

    def snapshot(self) -> Any:
        """The model with the runner's matrices as they are (not copied: call it while no job runs)."""
        return _with_matrices(self._model, self.syn0, *self._outputs(lambda m: m))

    def _outputs(self, adopt: Any) -> tuple[Any, Any]:
        return tuple(
            adopt(m) if here else None for m, here in zip((self.syn1, self.syn1hs), self._present, strict=True)
        )

    def finish(self) -> Any:
        """The trained model; on the CPU it adopts the runner's buffers, so the runner is done with them."""
        # from_dlpack keeps the arrays on the CPU device: elsewhere they go to the default device
        adopt = jnp.from_dlpack if jax.default_backend() == "cpu" else jnp.asarray
        trained = _with_matrices(self._model, adopt(self.syn0), *self._outputs(adopt))
        self.syn0 = self.syn1 = self.syn1hs = None
        return trained


class JaxRunner:
    """Trains a model with one jit-compiled step per job, padded to `job_words` (one compilation).

    `make_step(job_words=..., batch_windows=...)` builds the step, called as
    ``step((W, W', W'_tree), (keep, alias_threshold, alias_index), (tree_nodes, tree_codes,
    *extra), tokens, key, a0, a1)`` (a matrix or the tree the model lacks is None).

    With `mesh`, the matrices are split by rows over all of its devices (padded
    with untouched rows to a multiple of their number); the job and the tables
    are the same on every device.
    """

    parallel = False

    def __init__(
        self,
        model: Any,
        tables: SamplingTables,
        make_step: Any,
        *,
        job_words: int,
        batch_windows: int = 128,
        extra: tuple = (),
        mesh: Mesh | None = None,
    ) -> None:
        self._model = _without_matrices(model)
        self._job_words = -(-job_words // batch_windows) * batch_windows
        matrices = _matrices(model)
        self._rows = tuple(m.shape[0] if m is not None else 0 for m in matrices)
        # copies: the step donates its matrices, and the caller's model must stay usable
        self._params = tuple(jnp.array(m, copy=True) if m is not None else None for m in matrices)
        if mesh is not None:
            self._params = tuple(_split_rows(p, mesh) if p is not None else None for p in self._params)
        self._tables = tuple(
            jnp.asarray(a) for a in (tables.keep, tables.alias_threshold, tables.alias_index.astype(np.int32))
        )
        tree = (model.tree_nodes, model.tree_codes)
        self._extra = tuple(jnp.asarray(a) if a is not None else None for a in (*tree, *extra))
        self._step = make_step(job_words=self._job_words, batch_windows=batch_windows)

    def run(self, job: np.ndarray, alpha_start: float, alpha_end: float, seed: int) -> tuple[Any, Any, int, Any]:
        padded = np.full(self._job_words, -1, dtype=np.int32)
        padded[: job.size] = job
        key = jax.random.fold_in(jax.random.key(seed >> 32), seed & 0xFFFFFFFF)
        self._params, loss, count, kept = self._step(
            self._params,
            self._tables,
            self._extra,
            jnp.asarray(padded),
            key,
            jnp.float32(alpha_start),
            jnp.float32(alpha_end),
        )
        return loss, count, int(np.count_nonzero(job >= 0)), kept

    def snapshot(self) -> Any:
        """The model with host copies of the matrices trained so far (the next step donates its own)."""
        copies = (
            np.array(p)[:rows] if p is not None else None for p, rows in zip(self._params, self._rows, strict=True)
        )
        return _with_matrices(self._model, *copies)

    def finish(self) -> Any:
        matrices = (
            p if p is None or p.shape[0] == rows else p[:rows] for p, rows in zip(self._params, self._rows, strict=True)
        )
        return _with_matrices(self._model, *matrices)


def _split_rows(matrix: jax.Array, mesh: Mesh) -> jax.Array:
    """`matrix` ``[rows, dim]`` split by rows over every device of `mesh`, padded with zero rows
    to a multiple of their number (no id reaches the padding)."""
    padded = jnp.pad(matrix, ((0, -matrix.shape[0] % mesh.size), (0, 0)))
    return jax.device_put(padded, NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names), None)))
