"""Training checkpoints: weights + optimiser state + step + data position, one file.

A checkpoint is an ordinary zoo weights file (`zoo.load` reads its model) with
the optimiser state under ``__zoo__.opt.``, the carried training state (if
any, e.g. a language model's hidden state) under ``__zoo__.carry.``, and the
progress in the metadata key ``zoo.checkpoint``: the step, the data
position and (for loops that keep them) running totals such as a loss sum.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

from zoo.building.weights import RESERVED_PREFIX, array_paths, fill, load, read_file, save
from zoo.errors import WeightsError
from zoo.naming.registry import Registry

__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]

_OPT = RESERVED_PREFIX + "opt."
_CARRY = RESERVED_PREFIX + "carry."


class Checkpoint(NamedTuple):
    model: Any
    opt_state: Any
    step: int
    position: dict[str, Any] | None
    carry: Any = None
    totals: dict[str, float] | None = None


def save_checkpoint(
    path: str | os.PathLike,
    model: Any,
    opt_state: Any,
    *,
    step: int,
    position: Mapping[str, Any] | None,
    carry: Any = None,
    totals: Mapping[str, float] | None = None,
    registry: Registry | None = None,
) -> Path:
    """Write the training state atomically (the previous checkpoint stays whole until the rename).

    `totals`: finite numbers a loop accumulates between checkpoints (a loss sum), read back exactly."""
    tensors = {f"{_OPT}{key}": np.asarray(leaf) for key, leaf in array_paths(opt_state)}
    tensors.update({f"{_CARRY}{key}": np.asarray(leaf) for key, leaf in array_paths(carry)})
    record: dict[str, Any] = {"step": int(step), "position": dict(position or {})}
    if totals:
        record["totals"] = {name: float(value) for name, value in totals.items()}
    progress = json.dumps(record)
    return save(model, path, metadata={"zoo.checkpoint": progress}, tensors=tensors, registry=registry)


def load_checkpoint(
    path: str | os.PathLike,
    opt_state_like: Any,
    *,
    carry_like: Any = None,
    model_like: Any = None,
    registry: Registry | None = None,
) -> Checkpoint:
    """Read a checkpoint; `opt_state_like` is a fresh ``optimizer.init(params)`` giving the
    structure, `carry_like` the initial carry of a carried run (None: no carry), and
    `model_like` (if given) the run's model: a checkpoint of a model with other
    hyperparameters or vocabularies is refused, naming the difference."""
    metadata, tensors = read_file(path)
    if "zoo.checkpoint" not in metadata:
        raise WeightsError(f"{path} holds weights but no training state; it was not written by zoo.train")
    step, position, totals = _progress(metadata["zoo.checkpoint"], path)
    model = load(path, registry=registry)
    if model_like is not None:
        _check_same_run(model, model_like, path)
    opt_state = _restore(path, tensors, _OPT, opt_state_like, "optimiser state")
    carry = None if carry_like is None else _restore(path, tensors, _CARRY, carry_like, "carried state")
    return Checkpoint(model, opt_state, step, position, carry, totals)


def _progress(text: str, path: str | os.PathLike) -> tuple[int, dict[str, int] | None, dict[str, float] | None]:
    """``(step, position, totals)`` from the ``zoo.checkpoint`` metadata, checked."""
    try:
        progress = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise WeightsError(f"{path}: its training progress ('zoo.checkpoint') is not valid JSON: {error}") from None
    if not isinstance(progress, dict) or set(progress) - {"step", "position", "totals"}:
        raise WeightsError(f"{path}: its training progress must be {{'step': N, 'position': {{...}}}}, got {text:.80}")
    step, position = progress.get("step"), progress.get("position") or {}
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise WeightsError(f"{path}: its training step must be a non-negative integer, got {step!r:.40}")
    valid = isinstance(position, dict) and len(position) <= 16
    valid = valid and all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in position.items())
    if not valid:
        raise WeightsError(f"{path}: its data position must map names to non-negative integers, got {position!r:.80}")
    totals = progress.get("totals") or {}
    valid = isinstance(totals, dict) and len(totals) <= 16
    numbers = all(isinstance(k, str) and type(v) in (int, float) and math.isfinite(v) for k, v in totals.items())
    valid = valid and numbers
    if not valid:
        raise WeightsError(f"{path}: its running totals must map names to finite numbers, got {totals!r:.80}")
    return step, position or None, totals or None


def _check_same_run(found: Any, expected: Any, path: str | os.PathLike) -> None:
    """Refuse to resume `expected`'s run from a checkpoint of another model."""
    mine, theirs = expected.spec, found.spec
    differences = []
    if mine.name != theirs.name:
        differences.append(f"model {theirs.name!r} (this run: {mine.name!r})")
    flat_mine, flat_theirs = _flat_params(mine), _flat_params(theirs)
    for key in sorted(set(flat_mine) | set(flat_theirs)):
        if flat_mine.get(key) != flat_theirs.get(key):
            differences.append(f"{key}={flat_theirs.get(key)!r} (this run: {flat_mine.get(key)!r})")
    if getattr(found, "vocabs", None) != getattr(expected, "vocabs", None):
        differences.append("other vocabularies")
    if differences:
        raise WeightsError(
            f"{path} is a checkpoint of another run: it has {', '.join(differences[:6])}. "
            "Resume with the same settings, or start afresh with another --checkpoint file"
        )


def _flat_params(spec: Any) -> dict[str, Any]:
    flat = dict(spec.params)
    for slot in spec.slots:
        flat.update({f"{slot.slot}.{k}": v for k, v in slot.params.items()})
    return flat


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
        got = stored[key]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise WeightsError(
                f"{path}: {what} tensor {key!r} has shape {got.shape} and dtype {got.dtype}, "
                f"expected {want.shape} and {want.dtype}"
            )
    return fill(jax.eval_shape(lambda: like), stored)
