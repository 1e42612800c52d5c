"""The generic training loop: exact resume, no recompiles, NaN guard, evaluation."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import zoo
from zoo.data.batching import ArrayBatches, SequenceBatches
from zoo.errors import TrainingDiverged
from zoo.testing.base import assert_trees_close
from zoo_seq2seq.tasks import digit_vocab, reversal_pairs


@pytest.fixture(scope="module")
def setup(registry):
    vocab = digit_vocab()
    src, tgt = reversal_pairs(200, seed=0)
    fields = {"src": [vocab.encode(s) for s in src], "tgt": [vocab.encode(t, eos=True) for t in tgt]}
    data = SequenceBatches(fields, batch_size=16, buckets=[6, 11], seed=0)
    model = zoo.build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        registry=registry,
        vocab={"src": vocab, "tgt": vocab},
        hidden_size=16,
        embedding_size=8,
        **{"decoder.dropout": 0.1},
    )
    return model, data


def test_resume_equals_an_uninterrupted_run(setup, tmp_path):
    model, data = setup
    common = dict(key=jax.random.key(1), optimizer=optax.adam(1e-2), progress=False, log_every=3)
    straight = zoo.train(model, data, steps=8, **common)
    ckpt = tmp_path / "ckpt.safetensors"
    first = zoo.train(model, data, steps=5, checkpoint=ckpt, **common)
    assert first.step == 5
    resumed = zoo.train(model, data, steps=8, checkpoint=ckpt, resume=True, **common)
    assert resumed.step == 8
    assert resumed.position == straight.position
    assert_trees_close(resumed.model, straight.model, exact=True)
    assert_trees_close(resumed.opt_state, straight.opt_state, exact=True)
    assert zoo.load(ckpt).spec == model.spec  # a checkpoint is a weights file too


def test_one_compilation_per_bucket_and_the_loss_falls(setup):
    model, data = setup
    result = zoo.train(
        model,
        data,
        steps=40,
        key=jax.random.key(2),
        optimizer=optax.adam(1e-2),
        progress=False,
        log_every=10,
        units="tgt_mask",
    )
    assert result.compilations == 2  # two bucket widths, never more
    losses = [h["loss"] for h in result.history]
    assert losses[-1] < losses[0] - 0.15
    assert all(h["units_per_s"] > 0 for h in result.history)


def test_evaluation_runs_periodically_and_at_the_end(setup):
    model, data = setup
    calls = []

    def evaluate(m):
        calls.append(1)
        return {"score": len(calls)}

    result = zoo.train(model, data, steps=5, key=jax.random.key(3), evaluate=evaluate, eval_every=2, progress=False)
    assert [h["score"] for h in result.history if "score" in h] == [1, 2, 3]


class Scale(eqx.Module):
    w: jax.Array

    def loss(self, batch, *, key=None):
        return jnp.mean((self.w * batch["x"] - 1.0) ** 2)


def test_non_finite_loss_stops_with_the_step_and_keeps_finite_parameters():
    x = np.ones((12, 2), np.float32)
    x[6] = np.nan  # the fourth batch of two rows (no shuffling)
    data = ArrayBatches({"x": x}, batch_size=2, shuffle=False)
    with pytest.raises(TrainingDiverged, match="NaN or infinite at step 3") as caught:
        zoo.train(
            Scale(jnp.zeros(2)),
            data,
            steps=6,
            key=jax.random.key(0),
            optimizer=optax.sgd(0.1),
            progress=False,
            log_every=6,
        )
    kept = caught.value.result.model.w
    reference = zoo.train(
        Scale(jnp.zeros(2)), data, steps=3, key=jax.random.key(0), optimizer=optax.sgd(0.1), progress=False
    )
    np.testing.assert_array_equal(kept, reference.model.w)
    assert bool(jnp.all(jnp.isfinite(kept)))


def test_any_equinox_module_trains_with_an_explicit_loss():
    data = ArrayBatches({"x": np.full((8, 2), 2.0, np.float32)}, batch_size=4)
    result = zoo.train(
        Scale(jnp.zeros(2)), data, steps=200, key=jax.random.key(0), optimizer=optax.sgd(0.1), progress=False
    )
    np.testing.assert_allclose(result.model.w, 0.5, atol=1e-3)


PARALLEL = """
import jax, optax, numpy as np, zoo
from zoo.data.batching import SequenceBatches
from zoo_seq2seq.tasks import digit_vocab, reversal_pairs
from zoo.training.parallel import data_mesh
assert jax.device_count() == 4
vocab = digit_vocab()
src, tgt = reversal_pairs(64, seed=0)
data = SequenceBatches({"src": [vocab.encode(s) for s in src], "tgt": [vocab.encode(t, eos=True) for t in tgt]},
                       batch_size=16, buckets=[11])
model = zoo.build("seq2seq", key=jax.random.key(0), vocab={"src": vocab, "tgt": vocab}, hidden_size=8)
args = dict(steps=4, key=jax.random.key(1), optimizer=optax.adam(1e-2), progress=False)
single = zoo.train(model, data, **args).model
sharded = zoo.train(model, data, mesh=data_mesh(), **args).model
pairs = zip(jax.tree.leaves(single), jax.tree.leaves(sharded))
print("MAXDIFF", max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in pairs))
"""


def test_data_parallel_training_matches_one_device():
    import os
    import subprocess
    import sys

    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    out = subprocess.run([sys.executable, "-c", PARALLEL], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    difference = float(out.stdout.split("MAXDIFF")[1])
    assert difference < 1e-5


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"steps": -5}, r"steps=-5 is out of range: it must be an integer >= 0"),
        ({"steps": 2.5}, r"steps=2.5 is out of range"),
        ({"steps": 3, "log_every": 0}, r"log_every=0 is out of range: it must be an integer >= 1"),
        ({"steps": 3, "checkpoint_every": -1}, r"checkpoint_every=-1 is out of range"),
        ({"steps": 3, "eval_every": -2}, r"eval_every=-2 is out of range"),
    ],
)
def test_bad_settings_are_refused_before_training(setup, settings, message):
    from zoo.errors import InvalidParameterError

    model, data = setup
    with pytest.raises(InvalidParameterError, match=message):
        zoo.train(model, data, key=jax.random.key(0), progress=False, **settings)


def test_an_unwritable_checkpoint_is_refused_before_training(setup, tmp_path):
    from zoo.errors import WeightsError

    model, data = setup
    (tmp_path / "dir.safetensors").mkdir()
    with pytest.raises(WeightsError, match="dir.safetensors"):
        zoo.train(model, data, steps=3, key=jax.random.key(0), progress=False, checkpoint=tmp_path / "dir.safetensors")
