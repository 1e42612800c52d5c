"""Data parallelism with `jax.sharding`: batches split over devices, parameters replicated.

The same training code runs on one CPU, several accelerators, or several hosts
(after `zoo.training.distributed.start`): pass ``mesh=zoo.training.parallel.data_mesh()``
to `zoo.train` (with several processes it is the default). XLA inserts the gradient
all-reduce.

With several processes, ``jax.devices()`` spans all of them: each process holds
the rows of a global batch that its own devices hold (`process_rows`), and
`global_batch` joins them into global arrays; `local_copy` and `gather` bring a
replicated or row-sharded result back to this process, whole.

Vocabulary tables (an embedding table, a softmax's output matrix and bias: one row per
token) can be split by rows over the ``data`` axis instead of replicated
(``zoo.train(..., shard_tables=True)``): `table_layout` names them (a model declares
them with `VocabularyTables`), `split_tables` pads them to a multiple of the devices and
places them, `join_tables` brings them back whole without the padding. The compiler
partitions the lookups into them and their updates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from zoo.errors import DataError, DistributedError

__all__ = [
    "DATA_AXIS",
    "TableLayout",
    "VocabularyTables",
    "agree",
    "any_process",
    "data_mesh",
    "digest",
    "gather",
    "global_batch",
    "join_tables",
    "local_copy",
    "process_rows",
    "replicate",
    "shard_batch",
    "shard_rows",
    "spans_processes",
    "split_tables",
    "table_layout",
]

DATA_AXIS = "data"


def data_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh named ``"data"`` over `devices` (default: all of them)."""
    devices = list(devices) if devices is not None else jax.devices()
    return Mesh(devices, (DATA_AXIS,))


def replicate(tree: Any, mesh: Mesh) -> Any:
    """Place every array of `tree` whole on every device of `mesh`."""
    arrays, static = eqx.partition(tree, eqx.is_array)
    return eqx.combine(jax.device_put(arrays, NamedSharding(mesh, PartitionSpec())), static)


def shard_batch(batch: Mapping[str, Any], mesh: Mesh) -> dict[str, jax.Array]:
    """Split every array of `batch` along its first (example) axis over the ``data`` axis."""
    devices = mesh.shape[DATA_AXIS]
    sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
    placed = {}
    for name, array in batch.items():
        _check_divisible(name, array.shape[0], devices)
        placed[name] = jax.device_put(array, sharding)
    return placed


def _check_divisible(name: str, rows: int, devices: int) -> None:
    if rows % devices:
        raise DataError(
            f"batch field {name!r} has {rows} rows, not divisible by the {devices} devices of "
            f"the mesh; choose a batch size that is a multiple of {devices}"
        )


def spans_processes(mesh: Mesh | None) -> bool:
    """Whether `mesh` holds devices of other processes than this one."""
    return mesh is not None and mesh.is_multi_process


def process_rows(mesh: Mesh, rows: int) -> slice:
    """The block of a `rows`-row global batch that this process's devices hold on the ``data`` axis."""
    _check_divisible("batch", rows, mesh.shape[DATA_AXIS])
    sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
    spans = sorted({index[0].indices(rows)[:2] for index in sharding.addressable_devices_indices_map((rows,)).values()})
    start, stop = spans[0][0], spans[-1][1]
    if sum(b - a for a, b in spans) != stop - start:
        raise DistributedError(
            "this process's devices are not next to each other on the mesh's 'data' axis, so its rows of a "
            "batch are not one block; order the mesh's devices by process (data_mesh() over jax.devices() does)"
        )
    return slice(start, stop)


def global_batch(local: Mapping[str, Any], mesh: Mesh) -> dict[str, jax.Array]:
    """Global arrays sharded on the ``data`` axis from this process's block of rows of each
    field (`local`, as `process_rows` delimits it: ``[n_local, ...]`` of a global ``[n, ...]``,
    n = n_local x devices of the mesh / this process's devices of the mesh); every process calls it."""
    sharding = NamedSharding(mesh, PartitionSpec(DATA_AXIS))
    mine = sum(d.process_index == jax.process_index() for d in mesh.devices.flat)
    placed = {}
    for name, array in local.items():
        array = np.asarray(array)
        rows = array.shape[0] * mesh.devices.size // mine
        placed[name] = jax.make_array_from_process_local_data(sharding, array, (rows, *array.shape[1:]))
    return placed


def local_copy(tree: Any) -> Any:
    """`tree` with every replicated array that spans several processes replaced by this
    process's own copy (on its first device), so code that is not collective can use it."""

    def own(leaf: Any) -> Any:
        if not isinstance(leaf, jax.Array) or leaf.is_fully_addressable:
            return leaf
        if not leaf.is_fully_replicated:
            raise DistributedError(f"an array of shape {leaf.shape} is sharded over processes; gather it instead")
        return leaf.addressable_data(0)

    return jax.tree.map(own, tree)


def gather(tree: Any) -> Any:
    """Every array of `tree` whole on this host, as NumPy (a collective: every process calls it)."""
    from jax.experimental import multihost_utils

    def whole(leaf: Any) -> Any:
        if not isinstance(leaf, jax.Array):
            return leaf
        if leaf.is_fully_addressable or leaf.is_fully_replicated:
            return np.asarray(leaf)
        return np.asarray(multihost_utils.process_allgather(leaf, tiled=True))

    return jax.tree.map(whole, tree)


def digest(tree: Any) -> int:
    """A 31-bit fingerprint of the shapes, dtypes and bytes of `tree`'s arrays (this process's view)."""
    hasher = hashlib.blake2b(digest_size=4)
    for leaf in jax.tree.leaves(eqx.filter(tree, eqx.is_array)):
        array = np.asarray(leaf)
        hasher.update(f"{array.shape}{array.dtype}".encode())
        hasher.update(np.ascontiguousarray(array).tobytes())
    return int.from_bytes(hasher.digest(), "little") >> 1  # fits the int32 that `agree` exchanges


def any_process(flag: bool) -> bool:
    """Whether `flag` is true on any process (a collective: every process calls it)."""
    from jax.experimental import multihost_utils

    return bool(np.any(multihost_utils.process_allgather(np.asarray([bool(flag)], dtype=np.int32))))


def agree(values: Mapping[str, int]) -> None:
    """Check that every process holds the same `values` (name -> integer in int32's range); a `DistributedError`
    naming the first that differs and each process's value. A collective: every process calls it."""
    from jax.experimental import multihost_utils

    names = list(values)
    mine = np.asarray([int(values[n]) for n in names], dtype=np.int32)
    everyone = np.asarray(multihost_utils.process_allgather(mine)).reshape(-1, len(names))
    for column, name in enumerate(names):
        seen = everyone[:, column]
        if np.any(seen != seen[0]):
            listed = ", ".join(f"process {p}: {v}" for p, v in enumerate(seen.tolist()))
            raise DistributedError(f"the processes disagree on {name} ({listed})")


def shard_rows(tree: Any, mesh: Mesh) -> Any:
    """Split every array of `tree` along its first (row) axis over the ``data`` axis,
    like the batch it belongs to (e.g. a language model's carried state)."""
    arrays, static = eqx.partition(tree, eqx.is_array)
    return eqx.combine(jax.device_put(arrays, NamedSharding(mesh, PartitionSpec(DATA_AXIS))), static)


# --- vocabulary tables split by rows ----------------------------------------------------------


@runtime_checkable
class VocabularyTables(Protocol):
    """A model that names its vocabulary tables: ``vocabulary_tables() -> ((leaf, fill), ...)``,
    each an array leaf of the model whose first axis has one row per token, with the value the
    rows padded onto it hold (0 for an embedding or output matrix; for an output bias a logit so
    low that a softmax gives it no weight). ``zoo.train(..., shard_tables=True)`` reads it."""

    def vocabulary_tables(self) -> Sequence[tuple[Any, float]]: ...


@dataclass(frozen=True)
class TableLayout:
    """Which leaves are split by rows over the ``data`` axis of a mesh of `devices` there:
    `tables` maps each one's dotted path (as in a weights file) to ``(rows, fill)``."""

    tables: Mapping[str, tuple[int, float]]
    devices: int

    def padded(self, rows: int) -> int:
        """`rows` rounded up to a multiple of `devices`."""
        return -(-rows // self.devices) * self.devices


def _dotted(path: tuple) -> str:
    return ".".join(str(getattr(k, "name", getattr(k, "key", getattr(k, "idx", k)))) for k in path)


def table_layout(model: Any, tables: bool | Mapping[str, float], mesh: Mesh) -> TableLayout:
    """The layout of `model`'s vocabulary tables on `mesh`: those it declares (`tables` True,
    `VocabularyTables`) or those `tables` names (dotted path -> fill, e.g.
    ``{"embedder.weight": 0.0}``); a `DistributedError` if none can be found."""
    leaves = {_dotted(path): leaf for path, leaf in jax.tree_util.tree_flatten_with_path(model)[0]}
    if isinstance(tables, Mapping):
        unknown = sorted(set(tables) - {p for p, leaf in leaves.items() if eqx.is_array(leaf)})
        if unknown:
            arrays = ", ".join(p for p, leaf in leaves.items() if eqx.is_array(leaf))
            raise DistributedError(f"shard_tables names {unknown}, not arrays of the model; it has: {arrays}")
        named = dict(tables)
    elif isinstance(model, VocabularyTables):
        fills = {id(leaf): float(fill) for leaf, fill in model.vocabulary_tables()}
        named = {p: fills[id(leaf)] for p, leaf in leaves.items() if id(leaf) in fills}
    else:
        raise DistributedError(
            f"shard_tables=True, but {type(model).__name__} declares no vocabulary tables (a "
            "vocabulary_tables() method, zoo.training.parallel.VocabularyTables); name them instead: "
            "shard_tables={'embedder.weight': 0.0, ...} (dotted path -> the value of padding rows)"
        )
    if not named:
        raise DistributedError(f"{type(model).__name__} has no vocabulary table among its array leaves to split")
    for path in named:
        if leaves[path].ndim < 1:
            raise DistributedError(f"shard_tables: {path} is a scalar; only arrays with rows can be split")
    return TableLayout({p: (int(leaves[p].shape[0]), named[p]) for p in named}, mesh.shape[DATA_AXIS])


def _table_of(path: str, leaf: Any, layout: TableLayout, mirror: bool) -> tuple[int, float] | None:
    """The table `leaf` is (exact path), or mirrors (an optimiser state's copy: the path ends with it)."""
    for name, (rows, fill) in layout.tables.items():
        named = path == name or (mirror and path.endswith("." + name))
        if named and leaf.ndim >= 1 and leaf.shape[0] in (rows, layout.padded(rows)):
            return rows, 0.0 if mirror else fill
    return None


def split_tables(tree: Any, mesh: Mesh, layout: TableLayout, *, mirror: bool = False) -> Any:
    """`tree` placed on `mesh`: its tables (`layout`) padded to a multiple of the devices and split
    by rows over the ``data`` axis, every other array replicated. With `mirror`, `tree` is an
    optimiser state: leaves whose path ends with a table's (Adam's moments of it) are split
    too, padded with zeros."""

    def place(path: tuple, leaf: Any) -> Any:
        if not eqx.is_array(leaf):
            return leaf
        table = _table_of(_dotted(path), leaf, layout, mirror)
        if table is None:
            return jax.device_put(leaf, NamedSharding(mesh, PartitionSpec()))
        rows, fill = table
        if jnp.issubdtype(leaf.dtype, jnp.floating):  # a fill beyond the dtype's range: its nearest finite value
            fill = float(np.clip(fill, jnp.finfo(leaf.dtype).min, jnp.finfo(leaf.dtype).max))
        extra = layout.padded(rows) - leaf.shape[0]
        padded = jnp.pad(leaf, [(0, extra)] + [(0, 0)] * (leaf.ndim - 1), constant_values=fill)
        return jax.device_put(padded, NamedSharding(mesh, PartitionSpec(DATA_AXIS)))

    return jax.tree_util.tree_map_with_path(place, tree)


def join_tables(tree: Any, layout: TableLayout, *, mirror: bool = False) -> Any:
    """`tree` with each table `split_tables` placed brought back whole to this process, its
    padding rows cut off (a collective when the mesh spans processes: every process calls it);
    other leaves as they are."""

    def whole(path: tuple, leaf: Any) -> Any:
        table = _table_of(_dotted(path), leaf, layout, mirror) if eqx.is_array(leaf) else None
        return leaf if table is None else jnp.asarray(gather(leaf)[: table[0]])

    return jax.tree_util.tree_map_with_path(whole, tree)
