"""Checks for causal models: every `zoo.LanguageModel` the selected plugins build.

A causal model's output at position t may depend on tokens ``<= t`` only; its
state, carried from one chunk of a sequence to the next, must give exactly
what one pass over the whole sequence gives (that is what truncated
backpropagation through time and token-by-token generation rely on).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.building.builder import build
from zoo.interfaces import LanguageModel
from zoo.testing.base import ConformanceTests, assert_dtype, assert_trees_close, declared_dtype
from zoo.testing.cases import build_case, case_params, case_subject

__all__ = ["CausalModelTests"]

LENGTH = 9


@eqx.filter_jit
def _run(model, ids, mask, state, key=None):
    return model(ids, mask, state, key=key)


@eqx.filter_jit
def _run_each(model, batch_ids, key=None):
    """Logits of every row of ``[n, seq]`` from the initial state."""
    ones = jnp.ones(batch_ids.shape[1], bool)
    return jax.vmap(lambda ids: model(ids, ones, model.init_state(), key=key)[0])(batch_ids)


@eqx.filter_jit
def _run_steps(model, ids):
    def body(state, token):
        logits, state = model.step(token, state)
        return state, logits

    final, logits = jax.lax.scan(body, model.init_state(), ids)
    return logits, final


class CausalModelTests(ConformanceTests):
    """Causality, carried state, step-by-step and padding checks for causal models."""

    zoo_model_interface = LanguageModel

    @staticmethod
    def subject(zoo_model: str) -> str:
        return case_subject(zoo_model, "language model")

    @pytest.fixture(scope="class")
    @classmethod
    def model(cls, registry, zoo_model):
        params = case_params(registry, zoo_model)
        make = lambda: build(zoo_model, key=jax.random.key(0), registry=registry, **params)
        built = build_case(registry, zoo_model, params, make)
        if not isinstance(built, LanguageModel):
            pytest.skip(f"{zoo_model} is not a causal model (zoo.LanguageModel)")
        return built

    @pytest.fixture(scope="class")
    @classmethod
    def ids(cls, model):
        return jax.random.randint(jax.random.key(21), (LENGTH,), 0, model.vocab_size)

    def _variants(self, model, ids):
        """Row t: `ids` with the token at t + 1 replaced (rows 0 .. LENGTH-2)."""
        positions = jnp.arange(LENGTH - 1) + 1
        changed = (ids[positions] + 1 + jnp.arange(LENGTH - 1)) % model.vocab_size
        return jnp.tile(ids, (LENGTH - 1, 1)).at[jnp.arange(LENGTH - 1), positions].set(changed)

    @pytest.mark.parametrize("training", [False, True], ids=["inference", "dropout"])
    def test_later_tokens_never_change_earlier_outputs(self, zoo_model, model, ids, training):
        key = jax.random.key(5) if training else None
        base = _run_each(model, ids[None], key)[0]
        varied = _run_each(model, self._variants(model, ids), key)
        moved = False
        for t in range(LENGTH - 1):
            np.testing.assert_allclose(
                np.asarray(varied[t, : t + 1]),
                np.asarray(base[: t + 1]),
                atol=1e-5,
                rtol=1e-5,
                err_msg=f"causality of {self.subject(zoo_model)}: changing the token at {t + 1} changed an output "
                f"at or before {t}",
            )
            moved |= not np.allclose(np.asarray(varied[t, t + 1]), np.asarray(base[t + 1]), atol=1e-6)
        assert moved, f"causality of {self.subject(zoo_model)}: the outputs never depend on the current token"

    def test_carried_state_equals_one_pass(self, zoo_model, model, ids):
        what = f"carried state equals one pass, {self.subject(zoo_model)}"
        ones = jnp.ones(LENGTH, bool)
        whole, final = _run(model, ids, ones, model.init_state())
        cut = 4
        first, state = _run(model, ids[:cut], ones[:cut], model.init_state())
        second, carried = _run(model, ids[cut:], ones[cut:], state)
        assert whole.shape == (LENGTH, model.vocab_size), f"{what}: logits of shape {whole.shape}"
        assert_trees_close(jnp.concatenate([first, second]), whole, atol=1e-5, what=f"{what} (logits)")
        assert_trees_close(carried, final, atol=1e-5, what=f"{what} (final state)")

    def test_logits_are_float32(self, zoo_model, model, ids):
        """float32 logits, unless the model declares a `dtype`."""
        want = declared_dtype(model, model.spec.params)
        logits, _ = _run(model, ids, jnp.ones(LENGTH, bool), model.init_state())
        assert_dtype(logits, want, what=f"{want} outputs of {self.subject(zoo_model)}", role="logits")

    def test_step_by_step_equals_one_pass(self, zoo_model, model, ids):
        what = f"step by step equals one pass, {self.subject(zoo_model)}"
        whole, final = _run(model, ids, jnp.ones(LENGTH, bool), model.init_state())
        stepped, stepped_final = _run_steps(model, ids)
        assert_trees_close(stepped, whole, atol=1e-5, what=f"{what} (logits)")
        assert_trees_close(stepped_final, final, atol=1e-5, what=f"{what} (final state)")

    def test_padding_holds_the_state(self, zoo_model, model, ids):
        what = f"padding holds the state, {self.subject(zoo_model)}"
        real = 5
        mask = jnp.arange(LENGTH) < real
        padded, held = _run(model, ids, mask, model.init_state())
        short, final = _run(model, ids[:real], jnp.ones(real, bool), model.init_state())
        assert_trees_close(padded[:real], short, atol=1e-5, what=f"{what} (logits at real positions)")
        assert_trees_close(held, final, atol=1e-5, what=f"{what} (the state after the last real token)")
        assert bool(jnp.all(jnp.isfinite(padded))), f"{what}: logits at padded positions must be finite"

    def test_reset_rows_ignore_the_carry(self, zoo_model, model):
        what = f"reset rows ignore the carry, {self.subject(zoo_model)}"
        batch = model.example_batch(key=jax.random.key(3), batch_size=3, length=8)
        fresh = model.loss(batch)
        noise = jax.tree.map(
            lambda a: (
                a + jax.random.normal(jax.random.key(4), a.shape, a.dtype)
                if jnp.issubdtype(a.dtype, jnp.floating)
                else a
            ),
            model.initial_carry(3),
        )
        reset = dict(batch, reset=jnp.ones(3, bool))
        np.testing.assert_allclose(
            float(model.carried_loss(reset, noise)[0]), float(fresh), rtol=1e-5, err_msg=f"{what}: the loss differs"
        )
        if any(jnp.issubdtype(a.dtype, jnp.floating) for a in jax.tree.leaves(noise)):
            kept = dict(batch, reset=jnp.zeros(3, bool))
            assert float(model.carried_loss(kept, noise)[0]) != float(fresh), f"{what}: the carried state is ignored"

    @pytest.mark.parametrize("training", [False, True], ids=["inference", "dropout"])
    def test_loss_and_gradients_equal_the_logits(self, zoo_model, model, training):
        """`carried_loss` (however a model computes it: a chunked softmax, say) gives the mean of
        `token_nll`, the NLL of the logits `__call__` gives, and the same gradients."""
        batch = model.example_batch(key=jax.random.key(6), batch_size=3, length=8)
        key = jax.random.key(7) if training else None
        carry = model.initial_carry(3)

        def from_logits(m):
            nll, _ = m.token_nll(batch, carry, key=key)
            return jnp.sum(nll) / jnp.sum(batch["mask"])

        def carried(m):
            return m.carried_loss(batch, carry, key=key)[0]

        value, grads = eqx.filter_jit(eqx.filter_value_and_grad(carried))(model)
        expected, expected_grads = eqx.filter_jit(eqx.filter_value_and_grad(from_logits))(model)
        what = f"loss and gradients equal the logits, {self.subject(zoo_model)}"
        np.testing.assert_allclose(float(value), float(expected), rtol=1e-5, err_msg=f"{what}: the loss differs")
        assert_trees_close(grads, expected_grads, atol=1e-5, what=f"{what} (gradients)")
