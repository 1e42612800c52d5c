"""One generic training loop for every zoo model.

A jit-compiled step (loss, gradients, optax update) runs on batches of static
shapes; progress (a bar on a terminal, plain lines elsewhere, and a JSON-lines
metrics log: `zoo.training.progress`) shows loss and throughput; evaluation and
checkpoints run every so many steps; a resumed run continues exactly where the checkpoint
stopped (same parameters as an uninterrupted run). A NaN or infinite loss or
gradient stops training with `TrainingDiverged`, keeping the last finite
parameters.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from zoo.building.files import check_writable
from zoo.data.batching import BatchSource
from zoo.data.sharding import ProcessRows
from zoo.errors import DistributedError, TrainingDiverged
from zoo.naming.domains import check_count
from zoo.training.checkpoint import load_checkpoint, save_checkpoint
from zoo.training.deadline import _DEADLINE, _check_time_limit, time_budget
from zoo.training.distributed import barrier, is_writer
from zoo.training.memory import keep_freed_memory
from zoo.training.parallel import (
    TableLayout,
    agree,
    any_process,
    data_mesh,
    digest,
    gather,
    global_batch,
    join_tables,
    local_copy,
    process_rows,
    replicate,
    shard_batch,
    shard_rows,
    spans_processes,
    split_tables,
    table_layout,
)
from zoo.training.progress import Progress, open_log
from zoo.training.selection import StopTraining

__all__ = ["TrainResult", "make_step", "time_budget", "train"]

LossFn = Callable[..., jax.Array]


@dataclass
class TrainResult:
    """What `train` returns.

    - `model`, `opt_state`: the final training state.
    - `step`: steps done in total (including those before a resume).
    - `position`: where the data stream would continue.
    - `history`: one dict per log or evaluation point (``step``, ``loss``, ``units_per_s``, metrics).
    - `compilations`: how many times the step was traced (one per batch shape).
    - `carry`: the state the last step handed on (None unless `train` was given one).
    - `stopped_on_time`: True when the time budget ended training before `steps`.
    """

    model: Any
    opt_state: Any
    step: int
    position: dict[str, Any] | None
    history: list[dict[str, float]] = field(default_factory=list)
    compilations: int = 0
    carry: Any = None
    stopped_on_time: bool = False


def _all_finite(tree: Any) -> jax.Array:
    leaves = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(eqx.filter(tree, eqx.is_inexact_array))]
    return jnp.all(jnp.stack(leaves)) if leaves else jnp.bool_(True)


def make_step(loss_fn: LossFn, optimizer: optax.GradientTransformation, counter: list[int], *, carried: bool = False):
    """Build the jitted step ``(model, opt_state, batch, carry, key, bad_step, step) -> ...``.

    With `carried`, ``loss_fn(model, batch, carry, *, key)`` returns ``(loss,
    carry)`` and the step hands the new carry on; otherwise `carry` passes
    through untouched (None). Once a step produces a non-finite loss or
    gradient, that step and all later ones leave the state unchanged and
    `bad_step` records where it happened. Building a step tunes malloc to keep
    freed memory (`zoo.training.memory`), so the step's buffers are reused, not faulted in
    afresh at every call.
    """
    keep_freed_memory()

    @eqx.filter_jit(donate="all-except-first")
    def step(model, opt_state, batch, carry, key, bad_step, index):
        counter[0] += 1  # runs at trace time only: counts compilations
        if carried:
            (loss, new_carry), grads = eqx.filter_value_and_grad(loss_fn, has_aux=True)(model, batch, carry, key=key)
        else:
            loss, grads = eqx.filter_value_and_grad(loss_fn)(model, batch, key=key)
            new_carry = carry
        params = eqx.filter(model, eqx.is_inexact_array)
        updates, new_opt = optimizer.update(grads, opt_state, params)
        new_model = eqx.apply_updates(model, updates)
        ok = jnp.isfinite(loss) & _all_finite(grads) & (bad_step < 0)
        keep = lambda new, old: jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, old)
        model_arrays, static = eqx.partition(new_model, eqx.is_array)
        old_arrays, _ = eqx.partition(model, eqx.is_array)
        model = eqx.combine(keep(model_arrays, old_arrays), static)
        opt_state = keep(new_opt, opt_state)
        carry = keep(new_carry, carry)
        bad_step = jnp.where((bad_step < 0) & ~ok, index, bad_step)
        return model, opt_state, jnp.where(ok, loss, 0.0), carry, bad_step

    return step


_TRACES = [0]  # compilations of every cached step, ever (train reports its own share)


def _step_for(loss_fn: LossFn, optimizer: optax.GradientTransformation, carried: bool):
    """The jitted step for this loss and optimiser, shared across `train` calls so
    that training again (resuming, another run with the same optimiser object)
    reuses its compilations."""
    try:
        return _cached_step(loss_fn, optimizer, carried)
    except TypeError:  # an unhashable loss or optimiser: no sharing
        return make_step(loss_fn, optimizer, _TRACES, carried=carried)


@functools.lru_cache(maxsize=16)
def _cached_step(loss_fn: LossFn, optimizer: optax.GradientTransformation, carried: bool):
    return make_step(loss_fn, optimizer, _TRACES, carried=carried)


def _count_units(batch: Mapping[str, np.ndarray], units: str | Callable[[Mapping[str, np.ndarray]], int]) -> int:
    if callable(units):
        return int(units(batch))
    if units in batch:
        return int(np.sum(batch[units]))
    return len(next(iter(batch.values())))


def train(
    model: Any,
    data: BatchSource,
    *,
    steps: int,
    key: jax.Array,
    optimizer: optax.GradientTransformation | None = None,
    loss: LossFn | None = None,
    carry: Any = None,
    evaluate: Callable[[Any], Mapping[str, float]] | None = None,
    eval_every: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    resume: bool = False,
    log_every: int = 50,
    units: str | Callable[[Mapping[str, np.ndarray]], int] = "examples",
    progress: bool = True,
    description: str | None = None,
    mesh: Mesh | None = None,
    shard_tables: bool | Mapping[str, float] = False,
    time_limit: float | None = None,
    log_file: str | os.PathLike | None = None,
) -> TrainResult:
    """Train `model` for `steps` optimiser steps in total.

    **Arguments:**

    - `model`: a zoo model (any Equinox module works with an explicit `loss`).
    - `data`: a `BatchSource`; batches are dicts of NumPy arrays of static shapes.
    - `steps`: total steps; a resumed run does only what is left.
    - `key`: training randomness; step i uses ``fold_in(key, i)``, so resuming is exact.
    - `optimizer`: an optax transformation (default Adam 1e-3).
    - `loss`: ``loss(model, batch, *, key) -> scalar`` (default: the model's `loss`).
    - `carry`: a state threaded from step to step (truncated backpropagation
      through time): then `loss` is ``loss(model, batch, carry, *, key) -> (scalar,
      carry)`` (default: the model's `carried_loss`), each step starts from the
      carry the previous one returned, and checkpoints store it. The data decides
      when a row starts afresh (a language model's batches carry a ``reset`` flag).
    - `evaluate`, `eval_every`: ``evaluate(model) -> {metric: value}`` every so many steps and at the end.
      An `evaluate` that keeps state across evaluations (the best model so far) may define
      ``checkpointing(path, step, evaluated_at)``: called (by process 0) just before each
      checkpoint is written, with the steps evaluated since this run started, so that it can
      save its state beside the checkpoint and a resumed run pick it up (the seq2seq recipe's
      `Validation` does).
    - `checkpoint`, `checkpoint_every`: a file for the training state, written every
      so many steps and at the end; with `resume`, training continues from it if it exists.
    - `log_every`: steps between progress updates and log records (each costs one device sync).
    - `progress`, `description`: show progress on standard error (`zoo.training.progress`):
      a bar on a terminal, else one plain line per log interval; evaluation lines as they come.
    - `log_file`: a JSON-lines metrics log to append to (checked before the first step):
      one record per log interval (``step``, ``loss``, ``lr`` where the optimiser holds
      it, ``units_per_s``, ``elapsed``) and per evaluation (``step`` and the scores).
      Without it, the log of an enclosing `zoo.training.progress.metrics_log` (``zoo
      train --log-file``), if any. Process 0 alone writes it.
    - `units`: what throughput counts: a batch key to sum (``"tgt_mask"`` counts
      target tokens), a function of the batch, or ``"examples"`` (rows).
    - `mesh`: data parallelism: batches split over the mesh's ``"data"`` axis,
      parameters and optimiser state replicated (see `zoo.training.parallel.data_mesh`).
      In a run of several processes (`zoo.training.distributed.start`) the default is
      a mesh over every process's devices; each process then feeds its own rows of
      every global batch (`zoo.data.sharding.ProcessRows`; `data` must give every
      process the same batches), `evaluate` sees this process's copy of the model,
      process 0 alone writes the checkpoint while the others wait, and the result
      holds this process's copy of the state (the carry whole). Throughput counts
      this process's rows. A time budget on any process stops all of them after the
      same step (they compare clocks after every step then: one small collective).
    - `shard_tables`: with a mesh (default then: one over every device), split the model's
      vocabulary tables by rows over its ``"data"`` axis instead of replicating them (and their
      optimiser state): True takes those the model declares
      (`zoo.training.parallel.VocabularyTables`: a language model's embedding table, output
      matrix and bias), a mapping names them (dotted path -> the value of padding rows). Each is
      padded to a multiple of the devices; the compiler partitions its lookups and updates.
      Evaluation, checkpoints and the result see them whole, unpadded, on one device.
    - `time_limit`: seconds from this call (or the end of an enclosing `time_budget`,
      whichever comes first): training stops at the first step boundary after it,
      evaluates and checkpoints as at the end, says so, and sets `stopped_on_time`.

    Training tunes glibc's malloc to keep freed memory (`zoo.training.memory`): faster
    steps, and the process holds its peak memory; ``ZOO_KEEP_FREED_MEMORY=0`` opts out.
    """
    _check_settings(steps=steps, eval_every=eval_every, checkpoint_every=checkpoint_every, log_every=log_every)
    if mesh is None and (jax.process_count() > 1 or shard_tables):
        mesh = data_mesh()  # several processes, or tables to split: one mesh over all their devices
    many, writer = spans_processes(mesh), is_writer()
    progress = progress and writer
    if time_limit is not None:
        _check_time_limit(time_limit)
    ambient = _DEADLINE.get()
    deadline = min(time.monotonic() + (time_limit or math.inf), math.inf if ambient is None else ambient)
    if checkpoint is not None and writer:
        check_writable(checkpoint)  # before the first step, not after the first interval
    if log_file is not None and writer:
        check_writable(log_file)
    optimizer = optimizer if optimizer is not None else optax.adam(1e-3)
    carried = carry is not None
    loss_fn = loss if loss is not None else (type(model).carried_loss if carried else type(model).loss)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))
    start, position = 0, None
    checkpoint = Path(checkpoint) if checkpoint is not None else None
    if resume and checkpoint is not None and checkpoint.exists():
        model, opt_state, start, position, carry, _ = load_checkpoint(
            checkpoint, opt_state, carry_like=carry, model_like=model
        )
    if many:
        _check_same_start(model, opt_state, carry, start, data, position, checkpoint)
    timed = many and any_process(deadline < math.inf)  # a budget on any process: all check the time together
    layout = table_layout(model, shard_tables, mesh) if shard_tables else None
    if layout is not None:
        model, opt_state = split_tables(model, mesh, layout), split_tables(opt_state, mesh, layout, mirror=True)
    elif mesh is not None:
        model, opt_state = replicate(model, mesh), replicate(opt_state, mesh)
    if mesh is not None:
        carry = shard_rows(carry, mesh) if carried else None
    traces_before = _TRACES[0]
    step_fn = _step_for(loss_fn, optimizer, carried)
    history: list[dict[str, float]] = []
    evaluated_at: list[int] = []
    bad = jnp.int32(-1) if mesh is None else replicate(jnp.int32(-1), mesh)
    loss_sum, loss_count, units_done, t0 = jnp.float32(0.0), 0, 0, time.perf_counter()
    reporting = contextlib.ExitStack()
    log = reporting.enter_context(open_log(log_file)) if writer else None
    bar = reporting.enter_context(Progress(total=steps, initial=start, show=progress, log=log, description=description))
    per_epoch = data.batches_per_epoch() if callable(getattr(data, "batches_per_epoch", None)) else None
    stream = (ProcessRows(data, functools.partial(process_rows, mesh)) if many else data).iterate(position)
    step, on_time = start, False
    try:
        while step < steps:
            batch, position = next(stream)
            units_done += _count_units(batch, units)
            if mesh is not None:
                batch = global_batch(batch, mesh) if many else shard_batch(batch, mesh)
            model, opt_state, loss_value, carry, bad = step_fn(
                model, opt_state, batch, carry, jax.random.fold_in(key, step), bad, jnp.int32(step)
            )
            loss_sum, loss_count, step = loss_sum + loss_value, loss_count + 1, step + 1
            bar.advance(1)
            on_time = step < steps and time.monotonic() >= deadline
            if timed:
                on_time = any_process(on_time)  # every process stops after the same step
            at_end = step == steps or on_time
            if step % log_every == 0 or at_end:
                failure = _divergence(bad, step, checkpoint)
                if failure is not None:
                    compilations = _TRACES[0] - traces_before
                    kept = _own(model, opt_state, carry, layout, many)
                    failure.result = TrainResult(kept[0], kept[1], step, position, history, compilations, kept[2])
                    raise failure
                elapsed = max(time.perf_counter() - t0, 1e-9)
                record = {"step": step, "loss": float(loss_sum) / loss_count, "units_per_s": units_done / elapsed}
                history.append(record)
                rate, lr = _rate(record["units_per_s"], units), _learning_rate(opt_state)
                known = {} if lr is None else {"lr": lr}
                shown = f"loss {record['loss']:.4f}  {rate}" + (f"  lr {lr:.3g}" if known else "")
                bar.interval({**record, **known, "unit": _unit_name(units)}, shown, f"step {step}/{steps}")
                loss_sum, loss_count, units_done, t0 = jnp.float32(0.0), 0, 0, time.perf_counter()
            if evaluate is not None and ((eval_every and step % eval_every == 0) or at_end):
                seen = _own(model, None, None, layout, many)[0]
                where, epoch = _evaluated_at(step, per_epoch)
                try:
                    metrics = {k: float(v) for k, v in evaluate(seen).items()}
                except StopTraining as stop:  # the evaluation that ends the run is shown like the others
                    if stop.scores:
                        bar.scores({"step": step, **epoch, **stop.scores}, f"{where}: " + _figures(stop.scores))
                    raise
                history.append({"step": step, **metrics})
                evaluated_at.append(step)
                bar.scores({"step": step, **epoch, **metrics}, f"{where}: " + _figures(metrics))
            if checkpoint is not None and ((checkpoint_every and step % checkpoint_every == 0) or at_end):
                if callable(getattr(evaluate, "checkpointing", None)) and is_writer():
                    evaluate.checkpointing(checkpoint, step, list(evaluated_at))
                _save(checkpoint, model, opt_state, carry, step, position, layout, many=many)
            if on_time:
                bar.note(f"stopped on time: the time budget ran out after step {step} of {steps}")
                break
    finally:
        reporting.close()
    compilations = _TRACES[0] - traces_before
    model, opt_state, carry = _own(model, opt_state, carry, layout, many)
    return TrainResult(model, opt_state, step, position, history, compilations, carry, stopped_on_time=on_time)


def _own(model: Any, opt_state: Any, carry: Any, layout: TableLayout | None, many: bool) -> tuple[Any, Any, Any]:
    """This process's copy of the state: split tables joined whole (`layout`), and with several
    processes every replicated array's own copy and the carry gathered whole (collectives:
    every process calls it)."""
    if layout is not None:
        model, opt_state = join_tables(model, layout), join_tables(opt_state, layout, mirror=True)
    if not many:
        return model, opt_state, carry
    return local_copy(model), local_copy(opt_state), jax.tree.map(jnp.asarray, gather(carry))


def _save(
    checkpoint: Path,
    model: Any,
    opt_state: Any,
    carry: Any,
    step: int,
    position: Any,
    layout: TableLayout | None,
    *,
    many: bool,
) -> None:
    """Process 0 writes the checkpoint; with several processes, the others wait until it is written."""
    model, opt_state, carry = _own(model, opt_state, carry, layout, many)
    if is_writer():
        save_checkpoint(checkpoint, model, opt_state, step=step, position=position, carry=carry)
    barrier(f"zoo.train: checkpoint at step {step}")


def _check_same_start(
    model: Any, opt_state: Any, carry: Any, start: int, data: BatchSource, position: Any, checkpoint: Path | None
) -> None:
    """Every process of a run starts from the same step, state and first global batch, or none trains."""
    first, _ = next(iter(data.iterate(position)))
    try:
        agree(
            {
                "the step to start from": start,
                "the initial parameters and optimiser state": digest((model, opt_state, carry)),
                "the first batch": digest(first),
            }
        )
    except DistributedError as error:
        shared = f" ({checkpoint} must be one file every process reads, e.g. on a shared file system)"
        raise DistributedError(
            f"{error}: every process must build the same model (same --seed and hyperparameters), read the "
            f"same data in the same order, and resume from the same checkpoint{shared if checkpoint else ''}"
        ) from None


def _unit_name(units: Any) -> str:
    """What a throughput counts, in the user's words: a mask of the batch (``mask``, ``tgt_mask``,
    ``words_mask``) counts the real tokens it marks, ``tok``; ``examples`` counts rows, ``ex``;
    another key is shown as named, a function of the batch as ``units``."""
    if not isinstance(units, str):
        return "units"
    if units == "mask" or units.endswith("_mask"):
        return "tok"
    return "ex" if units == "examples" else units


def _evaluated_at(step: int, per_epoch: int | None) -> tuple[str, dict[str, int]]:
    """Where an evaluation stands, for its line (``epoch 3 (step 120)`` at the end of an epoch of
    the data, else ``step 130``), and the epoch for its record (none off an epoch's end)."""
    if per_epoch and step % per_epoch == 0:
        return f"epoch {step // per_epoch} (step {step})", {"epoch": step // per_epoch}
    return f"step {step}", {}


def _figures(metrics: Mapping[str, float]) -> str:
    """``dev_accuracy 0.8123, valid_loss 2.301``: scores as an evaluation line shows them."""
    return ", ".join(f"{k} {v:.4g}" for k, v in metrics.items())


def _rate(value: float, units: Any) -> str:
    name = _unit_name(units)
    return f"{value / 1000:.1f}k {name}/s" if value >= 1000 else f"{value:.0f} {name}/s"


def _learning_rate(opt_state: Any) -> float | None:
    """The learning rate an optimiser state holds (``optax.inject_hyperparams``), or None where
    it holds none (a fixed rate or a schedule the state does not record)."""
    is_hyper = lambda x: isinstance(getattr(x, "hyperparams", None), dict)  # optax's Inject*HyperparamsState
    for leaf in jax.tree.leaves(opt_state, is_leaf=is_hyper):
        if is_hyper(leaf) and "learning_rate" in leaf.hyperparams:
            value = leaf.hyperparams["learning_rate"]
            if isinstance(value, jax.Array):  # replicated: any shard holds it whole
                value = value.addressable_data(0)
            return float(value)
    return None


def _check_settings(**settings: int | None) -> None:
    """Counts of steps are integers >= 0 (`steps`) or >= 1 (the intervals; None or 0 turns them off)."""
    for name, value in settings.items():
        if value is not None or name == "steps":
            check_count(value, f"zoo.train: {name}", low=1 if name == "log_every" else 0)


def _divergence(bad: jax.Array, step: int, checkpoint: Path | None) -> TrainingDiverged | None:
    """The error to raise if a step went non-finite (its `.result` holds the kept state)."""
    first = int(bad)
    if first < 0:
        return None
    where = f"; the last checkpoint is {checkpoint}" if checkpoint is not None and checkpoint.exists() else ""
    return TrainingDiverged(
        f"the loss or a gradient became NaN or infinite at step {first}; the parameters from before that "
        f"step are kept (training stopped at step {step}){where}. Lower the learning rate, add gradient "
        "clipping (optax.clip_by_global_norm), or check the data for bad values."
    )
