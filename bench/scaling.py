"""Data parallelism over devices and processes: step time, what the compiler communicates, the input pipeline.

For 1, 2 and 4 CPU devices in one process (``--xla_force_host_platform_device_count``, one
subprocess per configuration) and 2 and 4 devices over 2 processes (127.0.0.1), it trains

- ``lm``: lstm-lm with every parameter replicated (data parallelism: the batch split over the
  devices, the gradients all-reduced);
- ``lm-sharded``: the same with its vocabulary tables (embedding, output matrix and bias) split by
  rows over the devices (``zoo.train(..., shard_tables=True)``);
- ``w2v`` / ``w2v-sharded``: word2vec's JAX runner (skip-gram) with its two matrices replicated,
  then split by rows (``fit(..., mesh=)``; one process: the runner feeds one process's devices),

and reports, per step: the time of a step run alone (``step ms``), the time a batch takes to
make and place (``input ms``, the host's part), the time per step of a loop that prepares the
next batch while the devices run (``loop ms``, as ``zoo.train`` does) and from these how busy the
devices were (``busy`` = step / loop); and the collectives of the compiled step, read from its HLO
(``jitted.lower(...).compile().as_text()``): how many all-reduce, all-gather, reduce-scatter,
all-to-all and collective-permute ops run per step (loops counted by their trip counts), the
bytes of their buffers (from the shapes: the reduced buffer of an all-reduce, the gathered result
of an all-gather, each device's part of a reduce-scatter), and the bytes a device sends per step
under ring algorithms (all-reduce 2(n-1)/n of the buffer, all-gather (n-1)/n, reduce-scatter
(n-1) parts). The HLO figures are exact; the times depend on the machine and its load.
``--compile-only`` configurations (8 devices, larger sizes) compile and count without running.

    python bench/scaling.py                  # every configuration, one table
    python bench/scaling.py --quick          # tiny sizes: does it run
    python bench/scaling.py --worker          # this process's devices only, JSON lines on stdout
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from conditions import run_reporting_conditions

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
_ITEM_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4}
_ITEM_BYTES |= {"s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_OP = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = (.*?) (" + "|".join(KINDS) + r")(-start)?\(")
_SHAPE = re.compile(r"\b(pred|bf16|[subfc]\d+)\[([\d,]*)\]")
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+) \(")
_WHILE = re.compile(r" while\(.*?body=%?([\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_CALL = re.compile(r" (?:call|async-start)\(.*?(?:to_apply|calls)=%?([\w.\-]+)")
_BRANCHES = re.compile(r" conditional\(.*?branch_computations=\{([^}]*)\}")

SIZES = {
    # lstm-lm: vocabulary, hidden = embedding size, layers, global batch rows, unroll
    # word2vec: vocabulary (about), embedding size, words per job
    "quick": dict(vocab=61, hidden=8, layers=1, batch=8, unroll=4, w2v_vocab=60, w2v_dim=8, job=256),
    "small": dict(vocab=10000, hidden=200, layers=2, batch=32, unroll=20, w2v_vocab=10000, w2v_dim=100, job=8192),
    "medium": dict(vocab=10000, hidden=650, layers=2, batch=64, unroll=35, w2v_vocab=100000, w2v_dim=300, job=8192),
}


# --- the compiled step's collectives ------------------------------------------------------------


def _buffer_bytes(result_type: str, kind: str, started: bool) -> int:
    shapes = _SHAPE.findall(result_type)
    if started and kind != "all-reduce" and len(shapes) >= 2:
        shapes = shapes[len(shapes) // 2 :]  # an async start's result holds (operands, results)
    return sum(_ITEM_BYTES[t] * math.prod(int(d) for d in dims.split(",") if d) for t, dims in shapes)


def _group_size(line: str, devices: int) -> int:
    """How many devices take part in one group of a collective (its replica groups)."""
    if match := re.search(r"replica_groups=\{\{([\d,]*)\}", line):
        return len(match.group(1).split(","))
    if match := re.search(r"replica_groups=mesh\[([^\]]*)\] \{([^}]*)\}", line):
        sizes = {name: int(size) for name, size in re.findall(r"'(\w+)'=(\d+)", match.group(1))}
        return math.prod(sizes[name] for name in re.findall(r"'(\w+)'", match.group(2)))
    if match := re.search(r"replica_groups=\[([\d,]+)\]<=", line):
        return int(match.group(1).split(",")[-1])
    return devices


def wire_bytes(kind: str, buffer: int, group: int) -> float:
    """Bytes one device sends for a collective under ring algorithms, `buffer` as `collectives` counts it."""
    if group <= 1:
        return 0.0
    factor = {
        "all-reduce": 2 * (group - 1) / group,
        "all-gather": (group - 1) / group,
        "all-to-all": (group - 1) / group,
    }
    return buffer * {"reduce-scatter": group - 1, "collective-permute": 1.0}.get(kind, factor.get(kind, 1.0))


def collectives(hlo: str, devices: int) -> dict:
    """Per step: ``ops`` {kind: count}, ``bytes`` {kind: buffer bytes}, ``wire`` (bytes a device sends)
    and ``dynamic`` (collectives inside a loop whose trip count is unknown: counted once)."""
    bodies: dict[str, list[str]] = {}
    entry, current = None, None
    for line in hlo.splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith("{") and (header := _HEADER.match(line)):
            current = header.group(1)
            bodies[current] = []
            entry = current if line.startswith("ENTRY") else entry
        elif line.startswith("}"):
            current = None
        elif current is not None:
            bodies[current].append(line)
    ops, sizes, dynamic, wire = Counter(), Counter(), False, 0.0

    def walk(name: str, times: int, depth: int = 0) -> None:
        nonlocal dynamic, wire
        for line in bodies.get(name, []) if depth < 32 else []:
            if (op := _OP.match(line)) and "-done(" not in line:
                kind, size = op.group(2), _buffer_bytes(op.group(1), op.group(2), bool(op.group(3)))
                group = _group_size(line, devices)
                if group > 1:
                    ops[kind] += times
                    sizes[kind] += times * size
                    wire += times * wire_bytes(kind, size, group)
            elif loop := _WHILE.search(line):
                trip = _TRIP.search(line)
                dynamic |= trip is None and _has_collectives(loop.group(1))
                walk(loop.group(1), times * (int(trip.group(1)) if trip else 1), depth + 1)
            elif call := _CALL.search(line):
                walk(call.group(1), times, depth + 1)
            elif branches := _BRANCHES.search(line):
                for branch in re.findall(r"%?([\w.\-]+)", branches.group(1)):  # every branch: an upper bound
                    walk(branch, times, depth + 1)

    def _has_collectives(name: str) -> bool:
        return any(_OP.match(line) for line in bodies.get(name, []))

    if entry is not None:
        walk(entry, 1)
    return {"ops": dict(ops), "bytes": dict(sizes), "wire": wire, "dynamic": dynamic}


# --- one configuration (a worker process) ------------------------------------------------------


def _place_batch(batch: dict, mesh, many: bool) -> dict:
    from zoo.training.parallel import global_batch, process_rows, shard_batch

    if not many:
        return shard_batch(batch, mesh)
    rows = process_rows(mesh, len(next(iter(batch.values()))))
    return global_batch({k: v[rows] for k, v in batch.items()}, mesh)


def _timings(run_step, next_batch, block, steps: int) -> dict:
    """``step_ms`` (a step alone, blocked), ``input_ms`` (making and placing a batch) and ``loop_ms``
    (per step, the next batch prepared while the devices run, as in ``zoo.train``)."""
    block(run_step(next_batch()))  # compiles
    block(run_step(next_batch()))
    alone = []
    for _ in range(steps):
        batch = next_batch()
        start = time.perf_counter()
        block(run_step(batch))
        alone.append(time.perf_counter() - start)
    waiting, start = 0.0, time.perf_counter()
    out = None
    for _ in range(steps):
        before = time.perf_counter()
        batch = next_batch()
        waiting += time.perf_counter() - before
        out = run_step(batch)
    block(out)
    loop = (time.perf_counter() - start) / steps
    step = float(np.median(alone))
    return {
        "step_ms": 1e3 * step,
        "input_ms": 1e3 * waiting / steps,
        "loop_ms": 1e3 * loop,
        "busy": min(1.0, step / loop),
    }


def lm_workload(sizes: dict, mesh, *, shard: bool, steps: int, compile_only: bool) -> dict:
    import equinox as eqx
    import jax
    import optax

    import zoo
    from zoo.training.parallel import replicate, shard_rows, spans_processes, split_tables, table_layout
    from zoo.training.trainer import make_step
    from zoo_lm.recipe import build_vocab
    from zoo_lm.stream import StreamBatches

    vocab = build_vocab([f"w{i}" for i in range(sizes["vocab"] - 4)], "word")  # + pad, unk, bos, eos
    ranks = np.random.default_rng(0).zipf(1.2, 200_000)
    ids = (ranks[ranks < len(vocab)]).astype(np.int32)
    model = zoo.build(
        "lstm-lm",
        key=jax.random.key(0),
        vocab={"tokens": vocab},
        hidden_size=sizes["hidden"],
        embedding_size=sizes["hidden"],
        num_layers=sizes["layers"],
        dropout=0.0,
    )
    optimizer = optax.chain(optax.clip_by_global_norm(5.0), optax.sgd(1.0))
    opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))
    if shard:
        layout = table_layout(model, True, mesh)
        model, opt_state = split_tables(model, mesh, layout), split_tables(opt_state, mesh, layout, mirror=True)
    else:
        model, opt_state = replicate(model, mesh), replicate(opt_state, mesh)
    data = StreamBatches(ids, batch_size=sizes["batch"], unroll=sizes["unroll"])
    stream, many = data.iterate(), spans_processes(mesh)
    state = {"model": model, "opt": opt_state, "carry": shard_rows(model.initial_carry(sizes["batch"]), mesh)}
    state["bad"], key = replicate(jax.numpy.int32(-1), mesh), jax.random.key(1)
    step = make_step(type(model).carried_loss, optimizer, [0], carried=True)
    next_batch = lambda: _place_batch(next(stream)[0], mesh, many)
    args = lambda batch: (state["model"], state["opt"], batch, state["carry"], key, state["bad"], np.int32(0))
    hlo = step.lower(*args(next_batch())).compile().compiled.as_text()
    report = {"comm": collectives(hlo, mesh.devices.size)}
    if compile_only:
        return report

    def run_step(batch):
        state["model"], state["opt"], loss, state["carry"], state["bad"] = step(*args(batch))
        return loss

    report |= _timings(run_step, next_batch, lambda loss: loss.block_until_ready(), steps)
    report["tokens_per_step"] = sizes["batch"] * sizes["unroll"]
    return report


def w2v_workload(sizes: dict, mesh, *, shard: bool, steps: int, compile_only: bool) -> dict:
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    import zoo
    from zoo_word2vec.backends import SamplingTables
    from zoo_word2vec.fit import build_vocab, make_runner

    rng = np.random.default_rng(0)
    words = rng.zipf(1.1, 400_000)
    words = words[words <= sizes["w2v_vocab"]]
    sentences = [[f"w{w}" for w in chunk] for chunk in np.array_split(words, len(words) // 20)]
    vocab = build_vocab(sentences, min_count=1)
    model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=sizes["w2v_dim"])
    tables = SamplingTables(vocab.counts, 1e-3, 0.75)
    runner = make_runner(model, "jax", tables, job_words=sizes["job"], mesh=mesh if shard else None)
    if not shard:  # the same matrices whole on every device
        runner._params = tuple(jax.device_put(p, NamedSharding(mesh, PartitionSpec())) for p in runner._params)
    stream = np.concatenate([np.append(vocab.encode(s), -1) for s in sentences]).astype(np.int32)
    jobs = [stream[i : i + sizes["job"]] for i in range(0, len(stream) - sizes["job"], sizes["job"])]
    tokens = np.full(runner._job_words, -1, np.int32)
    tokens[: jobs[0].size] = jobs[0]
    lowered = runner._step.lower(
        runner._params, runner._tables, runner._extra, jnp.asarray(tokens), jax.random.key(0), 0.025, 0.024
    )
    report = {"comm": collectives(lowered.compile().as_text(), mesh.devices.size)}
    report["batches_per_job"] = runner._job_words // 128  # the loop's trip count at most (kept words / 128)
    report["rows"] = len(vocab)
    if compile_only:
        return report
    count = iter(range(10**9))
    run_step = lambda job: runner.run(job, 0.025, 0.024, next(count))[0]
    report |= _timings(run_step, lambda: jobs[next(count) % len(jobs)], lambda loss: loss.block_until_ready(), steps)
    report["tokens_per_step"] = sizes["job"]
    return report


def worker(options: argparse.Namespace) -> None:
    if options.processes > 1:
        from zoo.training.distributed import start

        start(f"127.0.0.1:{options.port}", options.processes, options.process_id, timeout=300)
    import jax

    from zoo.training.parallel import data_mesh

    sizes, mesh = SIZES[options.sizes], data_mesh()
    workloads = [("lm", lm_workload, False), ("lm-sharded", lm_workload, True)]
    if options.processes == 1:
        workloads += [("w2v", w2v_workload, False), ("w2v-sharded", w2v_workload, True)]
    for name, workload, shard in workloads:
        if options.only and name not in options.only:
            continue
        report = workload(sizes, mesh, shard=shard, steps=options.steps, compile_only=options.compile_only)
        record = {"devices": jax.device_count(), "processes": jax.process_count(), "workload": name, **report}
        if jax.process_index() == 0:
            print(json.dumps(record), flush=True)


# --- the driver -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_configuration(devices: int, processes: int, options: argparse.Namespace, *extra: str) -> list[dict]:
    """One configuration in fresh processes (each ``devices / processes`` CPU devices); process 0's records."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_", "ZOO_DISTRIBUTED"))}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices // processes}")
    port = str(_free_port())
    flags = ["--worker", "--processes", str(processes), "--port", port, "--steps", str(options.steps)]
    flags += ["--sizes", options.sizes, *(["--only", *options.only] if options.only else []), *extra]
    children = [
        subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *flags, "--process-id", str(i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    outputs = [child.communicate(timeout=1800) for child in children]
    for child, (_, err) in zip(children, outputs, strict=True):
        if child.returncode != 0:
            raise SystemExit(f"{devices} devices on {processes} processes failed:\n{err[-3000:]}")
    return [json.loads(line) for line in outputs[0][0].splitlines() if line.startswith("{")]


def _kib(n: float) -> str:
    return f"{n / 1024:,.1f}"


def table(records: list[dict]) -> str:
    columns = ["devices", "processes", "workload", "step ms", "input ms", "loop ms", "busy"]
    columns += ["collectives per step", "buffers KiB", "sent KiB/device"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in records:
        comm = r["comm"]
        ops = ", ".join(f"{n} {k}" for k, n in sorted(comm["ops"].items())) or "none"
        if comm["dynamic"]:
            ops += f" (loop bodies once; x{r['batches_per_job']} at most)"
        times = [f"{r[k]:.1f}" if k in r else "-" for k in ("step_ms", "input_ms", "loop_ms")]
        busy = f"{r['busy']:.2f}" if "busy" in r else "-"
        buffers = _kib(sum(comm["bytes"].values()))
        cells = [str(r["devices"]), str(r["processes"]), r["workload"], *times, busy, ops, buffers, _kib(comm["wire"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help="run one configuration here, JSON lines on stdout")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per measurement")
    parser.add_argument("--sizes", choices=sorted(SIZES), default="small")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 steps, 1 and 2 devices")
    parser.add_argument("--compile-only", action="store_true", help="count the collectives, time nothing")
    parser.add_argument("--only", nargs="+", choices=["lm", "lm-sharded", "w2v", "w2v-sharded"])
    parser.add_argument("--no-8", dest="eight", action="store_false", help="skip the 8-device compile-only figures")
    options = parser.parse_args()
    if options.worker:
        worker(options)
        return
    if options.quick:
        options.sizes, options.steps, options.eight = "quick", 2, False
    configurations = [(1, 1), (2, 1), (4, 1), (2, 2), (4, 2)] if not options.quick else [(1, 1), (2, 1)]
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs; sizes {SIZES[options.sizes]}")
    records = []
    for devices, processes in configurations:
        records += run_configuration(devices, processes, options)
    print(table(records))
    if options.eight:
        print(f"\n8 devices, compile only, sizes {SIZES['medium']}:")
        compiled = run_configuration(8, 1, argparse.Namespace(**{**vars(options), "sizes": "medium"}), "--compile-only")
        print(table(compiled))
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    run_reporting_conditions(main)
