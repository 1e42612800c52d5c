"""zoo's seq2seq decoding on one CPU device against the batch split over two (an experiment).

    python bench/decode_split.py --rounds 3      # processes alternating: one device, two devices
    python bench/decode_split.py --one 2         # one process, two devices, prints JSON

The benchmark's model (`bench/seq2seq.py`: 1-layer LSTM encoder and decoder, Luong general
attention, embedding 128, hidden 256, vocabulary 1,000), untrained (every output runs to the
21-token limit, as the trained model's do), decodes 640 random sources in batches of 64,
greedily and with beam search (k=5, alpha=0.6): the median of 5 passes. With two devices
(``--xla_force_host_platform_device_count=2``) each batch is split in halves of 32 by
`jax.shard_map` over a one-axis mesh, each device running the whole compiled search on its half;
the question is whether two single-device searches use this machine's two cores better than
XLA's intra-op threads in one. Each pass also reports the process's CPU seconds per wall
second: below 2, the second core was not there to use. Outputs are compared by checksum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from conditions import add_rounds_argument, median, run_reporting_conditions


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--one", type=int, choices=[1, 2], help="one process with this many devices; prints JSON")
    add_rounds_argument(p)
    return p.parse_args(argv)


def run_one(devices: int) -> dict:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import numpy as np
    from jax.sharding import Mesh

    from zoo.building.builder import build
    from zoo_seq2seq.model import _choose_strategy

    model = build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        src_vocab_size=1000,
        tgt_vocab_size=1000,
        embedding_size=128,
        hidden_size=256,
        **{"strategy.max_length": 21, "embedder.init_scale": None, "cell.init_scale": None},
    )
    test = np.random.default_rng(0).integers(4, 1000, (640, 20), dtype=np.int32)
    mesh = Mesh(np.array(jax.devices()), ("data",))
    result = {"devices": devices}
    for label, params in (("greedy", {}), ("beam", {"beam_size": 5, "alpha": 0.6})):
        decode = _searcher(model, _choose_strategy(model, label, {**params, "max_length": 21}), mesh)
        decode(test[:64])
        seconds, cpu = [], time.process_time()
        for _ in range(5):
            started = time.perf_counter()
            outputs = [decode(test[i : i + 64]) for i in range(0, len(test), 64)]
            seconds.append(time.perf_counter() - started)
        result[f"{label}_cpu_per_wall"] = (time.process_time() - cpu) / sum(seconds)
        result[f"{label}_sentences_per_s"] = len(test) / float(np.median(seconds))
        result[f"{label}_checksum"] = int(sum(int(np.asarray(o.tokens).sum()) for o in outputs))
    return result


def _searcher(model, strategy, mesh):
    """``decode(src [B, 20]) -> Hypotheses``: one compiled search, its batch split over `mesh`'s devices."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec

    from zoo_seq2seq.model import _decode_batch

    arrays, static = eqx.partition((model, strategy), eqx.is_array)

    def search(arrays, src, mask):
        return _decode_batch(*eqx.combine(arrays, static), src, mask, None)

    if mesh.size > 1:
        rows = PartitionSpec("data")
        search = jax.shard_map(
            search, mesh=mesh, in_specs=(PartitionSpec(), rows, rows), out_specs=rows, check_vma=False
        )
    search = jax.jit(search)
    return lambda s: jax.block_until_ready(search(arrays, jnp.asarray(s), jnp.asarray(s) != 0))


def main() -> int:
    args = parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one)))
        return 0
    runs = {1: [], 2: []}
    for i in range(args.rounds):
        for devices in (1, 2) if i % 2 == 0 else (2, 1):
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(devices)], capture_output=True, text=True, check=True
            )
            runs[devices].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{'sentences/s (CPU s per wall s)':34s}{'1 device':>16s}{'2 devices':>16s}{'2/1':>8s}   rounds (1 | 2)")
    for label in ("greedy", "beam"):
        key = f"{label}_sentences_per_s"
        one, two = (median(r[key] for r in runs[d]) for d in (1, 2))
        cpu = [median(r[f"{label}_cpu_per_wall"] for r in runs[d]) for d in (1, 2)]
        same = {r[f"{label}_checksum"] for d in (1, 2) for r in runs[d]}
        rounds = " | ".join(" / ".join(f"{r[key]:,.0f}" for r in runs[d]) for d in (1, 2))
        print(
            f"{label:34s}{one:9,.0f} ({cpu[0]:.2f}){two:9,.0f} ({cpu[1]:.2f}){two / one:7.2f}x   {rounds}"
            + ("" if len(same) == 1 else "   OUTPUTS DIFFER")
        )
    return 0


if __name__ == "__main__":
    run_reporting_conditions(main)
