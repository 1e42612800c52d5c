"""Data parallelism with `jax.sharding`: batches split over devices, parameters replicated.

The same training code runs on one CPU, several accelerators, or several hosts
(after ``jax.distributed.initialize()``): pass ``mesh=zoo.training.parallel.data_mesh()``
to `zoo.train`. XLA inserts the gradient all-reduce.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from zoo.errors import DataError

__all__ = ["DATA_AXIS", "data_mesh", "replicate", "shard_batch", "shard_rows"]

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
        if array.shape[0] % devices:
            raise DataError(
                f"batch field {name!r} has {array.shape[0]} rows, not divisible by the {devices} devices of "
                f"the mesh; choose a batch size that is a multiple of {devices}"
            )
        placed[name] = jax.device_put(array, sharding)
    return placed


def shard_rows(tree: Any, mesh: Mesh) -> Any:
    """Split every array of `tree` along its first (row) axis over the ``data`` axis,
    like the batch it belongs to (e.g. a language model's carried state)."""
    arrays, static = eqx.partition(tree, eqx.is_array)
    return eqx.combine(jax.device_put(arrays, NamedSharding(mesh, PartitionSpec(DATA_AXIS))), static)
