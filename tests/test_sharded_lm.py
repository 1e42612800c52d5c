"""A language model's vocabulary tables split by rows over a mesh (``zoo.train(..., shard_tables=True)``).

The input embedding, the output matrix and the output bias are padded to a multiple of
the devices (19 tokens become 20 rows on 4 devices) and split over the mesh's ``data``
axis; the compiler partitions their lookups and updates. Training that way must give the
parameters replicated training gives, and the saved file must hold the tables whole and
unpadded, loadable on one device. Four CPU devices in a subprocess
(``--xla_force_host_platform_device_count=4``), then four devices over two processes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import pytest

import zoo
from zoo.errors import DistributedError
from zoo.training.parallel import data_mesh, join_tables, split_tables, table_layout

# shared by the runs: a 19-token vocabulary, batches of 4 rows, Adam (moments split with the tables)
SETUP = textwrap.dedent(
    """
    import json, sys
    import jax, numpy as np, optax, zoo
    from zoo_lm.recipe import build_vocab, train_language_model

    tokens = ("the cat sat on the mat </s> a dog ran in the park and the cat ran too </s> a red fox </s>" * 3).split()
    vocab = build_vocab(tokens, "word")
    assert len(vocab) == 19, len(vocab)
    model = zoo.build("lstm-lm", key=jax.random.key(0), vocab={"tokens": vocab}, hidden_size=8,
                      embedding_size=6, num_layers=1, dropout=0.1)
    ids = vocab.encode(tokens)
    seen = {}

    def loss(m, batch, carry, *, key):  # the model's loss, noting how the tables are placed inside the step
        for name, table in (("embedder.weight", m.embedder.weight), ("output_bias", m.output_bias)):
            note = lambda s, name=name, shape=table.shape: seen.setdefault(name, [list(s.spec), s.shard_shape(shape)])
            jax.debug.inspect_array_sharding(table, callback=note)
        return type(m).carried_loss(m, batch, carry, key=key)

    optimizer = optax.adam(1e-2)  # one object: calls with the same placement share a compiled step
    args = dict(key=jax.random.key(1), batch_size=4, unroll=3, optimizer=optimizer, loss=loss, progress=False)
    """
)

FOUR_DEVICES = SETUP + textwrap.dedent(
    """
    from zoo.training.parallel import data_mesh
    out = sys.argv[1]
    assert jax.device_count() == 4
    replicated = train_language_model(model, ids, steps=4, mesh=data_mesh(), **args).model
    placed_replicated, seen = seen, {}
    sharded = train_language_model(model, ids, steps=4, shard_tables=True, **args).model
    zoo.save(replicated, f"{out}/replicated.safetensors")
    zoo.save(sharded, f"{out}/sharded.safetensors")
    pairs = zip(jax.tree.leaves(replicated), jax.tree.leaves(sharded), strict=True)
    difference = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in pairs)
    # the chunked softmax alone, positions split over the devices, the output layer whole on each
    from jax.sharding import NamedSharding, PartitionSpec
    from zoo_lm.softmax_loss import linear_softmax_nll
    rows = NamedSharding(data_mesh(), PartitionSpec("data"))
    x, targets = jax.device_put(np.ones((64, 8), np.float32), rows), jax.device_put(np.zeros(64, np.int32), rows)
    loss = lambda x, w, b: linear_softmax_nll(x, w, b, targets, jax.numpy.ones(64), chunk_bytes=16 * 50 * 4)
    softmax = jax.jit(jax.grad(loss, (0, 1, 2))).lower(x, np.ones((50, 8), np.float32), np.zeros(50, np.float32))
    gathers = softmax.compile().as_text().count("all-gather")  # 4 chunks: each device scores only its own rows
    print(json.dumps({"difference": difference, "replicated": placed_replicated, "sharded": seen, "gathers": gathers}))
    """
)

TWO_PROCESSES = (
    textwrap.dedent(
        """
    import sys
    from zoo.training.distributed import start
    index, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    start(f"127.0.0.1:{port}", 2, index, timeout=120)  # before JAX computes anything
    """
    )
    + SETUP
    + textwrap.dedent(
        """
    assert (jax.device_count(), jax.local_device_count()) == (4, 2)
    checkpoint = f"{out}/lm.ckpt"  # 2 steps, a checkpoint of the whole tables, 2 more resumed from it
    train_language_model(model, ids, steps=2, shard_tables=True, checkpoint=checkpoint, **args)
    result = train_language_model(model, ids, steps=4, shard_tables=True, checkpoint=checkpoint, resume=True, **args)
    if index == 0:
        zoo.save(result.model, f"{out}/two-processes.safetensors")
    print(json.dumps({"sharded": seen, "step": result.step}))
    """
    )
)


def run_script(script: str, *args: str, devices: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_", "ZOO_DISTRIBUTED"))}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def report(process: subprocess.Popen, timeout: float = 300) -> dict:
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def arrays(model) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(eqx.filter(model, eqx.is_array))]


def max_difference(a, b) -> float:
    return max(float(np.max(np.abs(x - y))) for x, y in zip(arrays(a), arrays(b), strict=True))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict, list[dict]]:
    """The four-device run and the two-process one, started together (a folder for their files,
    the first's report, each process's report)."""
    out = tmp_path_factory.mktemp("sharded-lm")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    four = run_script(FOUR_DEVICES, str(out), devices=4)
    two = [run_script(TWO_PROCESSES, str(i), port, str(out), devices=2) for i in range(2)]
    return out, report(four), [report(p) for p in two]


@pytest.mark.slow  # three real processes (the runs fixture)
def test_split_tables_train_as_replicated_ones_and_save_whole(runs):
    out, seen, _ = runs
    assert seen["difference"] < 1e-5
    # inside the step: 20 rows split 5 per device (19 padded by one); replicated without shard_tables
    assert seen["sharded"] == {"embedder.weight": [["data"], [5, 6]], "output_bias": [["data"], [5]]}, seen
    assert seen["replicated"] == {"embedder.weight": [[], [19, 6]], "output_bias": [[], [19]]}, seen
    sharded, replicated = zoo.load(out / "sharded.safetensors"), zoo.load(out / "replicated.safetensors")
    assert sharded.embedder.weight.shape == (19, 6) and sharded.output_bias.shape == (19,)
    assert max_difference(sharded, replicated) < 1e-5
    untrained = zoo.build(
        "lstm-lm", key=jax.random.key(0), vocab=sharded.vocabs, hidden_size=8, embedding_size=6, num_layers=1
    )
    assert max_difference(sharded, untrained) > 1e-3  # it did train


@pytest.mark.slow  # three real processes (the runs fixture)
def test_data_parallel_softmax_chunks_take_rows_of_every_device(runs):
    """A chunk of the softmax takes every chunks-th position: split over devices, every device holds
    rows of every chunk and computes them (contiguous chunks gathered the batch onto every device)."""
    assert runs[1]["gathers"] == 0
    from zoo_lm.softmax_loss import chunk_rows

    assert chunk_rows(64 * 35, 10_000) == 160  # 11 chunks would do; 14 divide the 2,240 positions
    assert chunk_rows(23, 50, 4 * 50 * 4) == 4  # no count from 6 to 12 divides 23: 6 chunks, padded


@pytest.mark.slow  # three real processes (the runs fixture)
def test_four_devices_on_two_processes_equal_one_process(runs):
    """2 processes x 2 CPU devices: 2 steps, a checkpoint (the tables gathered whole), 2 more
    resumed from it (split again); process 0's file equals the one-process run's."""
    out, _, reports = runs
    assert all(r["step"] == 4 and r["sharded"]["embedder.weight"] == [["data"], [5, 6]] for r in reports), reports
    two, one = zoo.load(out / "two-processes.safetensors"), zoo.load(out / "sharded.safetensors")
    assert max_difference(two, one) < 1e-5


# -- which leaves are tables (one device) --------------------------------------------------------


@pytest.fixture(scope="module")
def lm():
    from zoo_lm.recipe import build_vocab

    vocab = build_vocab(["a", "b", "c", "d", "e", "f", "g"], "word")  # 11 tokens with the specials
    build = lambda **tie: zoo.build(
        "lstm-lm", key=jax.random.key(0), vocab={"tokens": vocab}, hidden_size=4, embedding_size=4, **tie
    )
    return build(), build(tie_embeddings=True)


def test_a_language_model_declares_its_embedding_and_output_layer(lm):
    untied, tied = lm
    mesh = data_mesh(jax.devices()[:1])
    layout = table_layout(untied, True, mesh)
    assert {p: rows for p, (rows, _) in layout.tables.items()} == {
        "embedder.weight": 11,
        "output_weight": 11,
        "output_bias": 11,
    }
    assert layout.tables["output_bias"][1] < -1e29 and layout.tables["output_weight"][1] == 0.0
    assert set(table_layout(tied, True, mesh).tables) == {"embedder.weight", "output_bias"}  # one table, tied
    assert table_layout(untied, {"embedder.weight": 0.0}, mesh).tables == {"embedder.weight": (11, 0.0)}
    placed = split_tables(untied, mesh, layout)
    assert max_difference(join_tables(placed, layout), untied) == 0.0


def test_padding_rows_take_their_fill_and_leave_again(lm):
    from zoo.training.parallel import TableLayout

    untied, _ = lm
    layout = TableLayout({"output_bias": (11, -1e30), "output_weight": (11, 0.0)}, devices=4)  # as 4 devices pad
    padded = split_tables(untied, data_mesh(jax.devices()[:1]), layout)
    assert padded.output_weight.shape == (12, 4) and float(padded.output_bias[-1]) == pytest.approx(-1e30)
    assert not np.any(np.asarray(padded.output_weight[-1]))
    assert max_difference(join_tables(padded, layout), untied) == 0.0


def test_tables_that_cannot_be_found_are_refused(lm):
    untied, _ = lm
    mesh = data_mesh(jax.devices()[:1])
    with pytest.raises(DistributedError, match=r"shard_tables names \['embedder.table'\], not arrays of the model"):
        table_layout(untied, {"embedder.table": 0.0}, mesh)
    with pytest.raises(DistributedError, match="Linear declares no vocabulary tables"):
        table_layout(eqx.nn.Linear(2, 3, key=jax.random.key(0)), True, mesh)
