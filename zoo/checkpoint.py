"""Training checkpoints: weights + optimiser state + step + data position, one file.

A checkpoint is an ordinary zoo weights file (`zoo.load` reads its model) with
the optimiser state under ``__zoo__.opt.``, the carried training state (if
any, e.g. a language model's hidden state) under ``__zoo__.carry.``, and the
progress in the metadata key ``zoo.checkpoint``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

from zoo.errors import WeightsError
from zoo.registry import Registry
from zoo.weights import RESERVED_PREFIX, array_paths, fill, load, read_file, save

__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]

_OPT = RESERVED_PREFIX + "opt."
_CARRY = RESERVED_PREFIX + "carry."


class Checkpoint(NamedTuple):
    model: Any
    opt_state: Any
    step: int
    position: dict[str, Any] | None
    carry: Any = None


def save_checkpoint(
    path: str | os.PathLike,
    model: Any,
    opt_state: Any,
    *,
    step: int,
    position: Mapping[str, Any] | None,
    carry: Any = None,
    registry: Registry | None = None,
) -> Path:
    """Write the training state atomically (the previous checkpoint stays whole until the rename)."""
    tensors = {f"{_OPT}{key}": np.asarray(leaf) for key, leaf in array_paths(opt_state)}
    tensors.update({f"{_CARRY}{key}": np.asarray(leaf) for key, leaf in array_paths(carry)})
    progress = json.dumps({"step": int(step), "position": dict(position or {})})
    return save(model, path, metadata={"zoo.checkpoint": progress}, tensors=tensors, registry=registry)


def load_checkpoint(
    path: str | os.PathLike, opt_state_like: Any, *, carry_like: Any = None, registry: Registry | None = None
) -> Checkpoint:
    """Read a checkpoint; `opt_state_like` is a fresh ``optimizer.init(params)`` giving the
    structure, `carry_like` the initial carry of a carried run (None: no carry)."""
    metadata, tensors = read_file(path)
    if "zoo.checkpoint" not in metadata:
        raise WeightsError(f"{path} holds weights but no training state; it was not written by zoo.train")
    progress = json.loads(metadata["zoo.checkpoint"])
    model = load(path, registry=registry)
    opt_state = _restore(path, tensors, _OPT, opt_state_like, "optimiser state")
    carry = None if carry_like is None else _restore(path, tensors, _CARRY, carry_like, "carried state")
    return Checkpoint(model, opt_state, int(progress["step"]), progress.get("position") or None, carry)


def _restore(path: str | os.PathLike, tensors: Mapping[str, np.ndarray], prefix: str, like: Any, what: str) -> Any:
    """The tree shaped like `like` from the tensors stored under `prefix`."""
    stored = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
    expected = dict(array_paths(jax.eval_shape(lambda: like)))
    if set(stored) != set(expected):
        raise WeightsError(
            f"{path}: {what} does not match this run: missing "
            f"{sorted(set(expected) - set(stored))[:5]}, unexpected {sorted(set(stored) - set(expected))[:5]}"
        )
    for key, want in expected.items():
        if stored[key].shape != want.shape:
            raise WeightsError(f"{path}: {what} tensor {key!r} has shape {stored[key].shape}, expected {want.shape}")
    return fill(jax.eval_shape(lambda: like), stored)
