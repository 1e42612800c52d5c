"""Checks for embedders, recurrent cells and encoders."""

from __future__ import annotations

from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.builder import component_spec
from zoo.interfaces import ContextualEmbedder, Embedder, Encoder, EncoderOutput, RecurrentCell
from zoo.nn import run_cell
from zoo.testing.base import ConformanceTests, assert_gradients_reach_every_parameter, assert_trees_close

__all__ = ["CellTests", "EmbedderTests", "EncoderTests"]

BATCH, LENGTH = 3, 7


def _mask(lengths: list[int], width: int) -> jax.Array:
    return jnp.arange(width)[None, :] < jnp.asarray(lengths)[:, None]


class _Built(ConformanceTests):
    """Builds the component under test with its registry `test` params."""

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    @classmethod
    def wired(cls, registry) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def make(cls, registry, entry, key):
        return component_spec(entry.name, kind=cls.zoo_kind, registry=registry, **entry.test).build(
            **cls.wired(registry), key=key
        )

    @pytest.fixture(scope="class")
    @classmethod
    def module(cls, registry, entry):
        return cls.make(registry, entry, jax.random.key(0))

    def test_same_key_same_parameters(self, registry, entry, module):
        assert_trees_close(module, self.make(registry, entry, jax.random.key(0)), exact=True)
        other = self.make(registry, entry, jax.random.key(1))
        leaves = [
            (a, b)
            for a, b in zip(
                jax.tree.leaves(eqx.filter(module, eqx.is_inexact_array)),
                jax.tree.leaves(eqx.filter(other, eqx.is_inexact_array)),
                strict=True,
            )
        ]
        if leaves:
            assert any(not np.array_equal(a, b) for a, b in leaves), "different keys gave the same parameters"


class EmbedderTests(_Built):
    """Embedders: shapes, dtypes, jit, vmap, gradients, padding."""

    zoo_kind: ClassVar[str] = "embedder"
    vocab_size: ClassVar[int] = 17

    @classmethod
    def wired(cls, registry):
        return {"num_embeddings": cls.vocab_size}

    @pytest.fixture(scope="class")
    @classmethod
    def ids(cls):
        return jax.random.randint(jax.random.key(7), (BATCH, LENGTH), 0, cls.vocab_size)

    def test_is_an_embedder(self, module):
        assert isinstance(module, Embedder)
        assert module.num_embeddings == self.vocab_size

    def test_shapes_and_dtype(self, module, ids):
        out = module(ids[0])
        assert out.shape == (LENGTH, module.embedding_size)
        assert jnp.issubdtype(out.dtype, jnp.floating)
        assert bool(jnp.all(jnp.isfinite(out)))
        assert module.vectors().shape == (self.vocab_size, module.embedding_size)

    def test_jit_matches_eager(self, module, ids):
        assert_trees_close(eqx.filter_jit(lambda m, x: m(x))(module, ids[0]), module(ids[0]))

    def test_a_static_embedder_gives_its_vectors(self, module, ids):
        # Decoders build tables from `vectors()` in place of looking every token up.
        if isinstance(module, ContextualEmbedder):
            pytest.skip("a contextual embedder's vectors depend on the sentence")
        np.testing.assert_allclose(
            np.asarray(module(ids[0])), np.asarray(module.vectors()[ids[0]]), rtol=1e-6, atol=1e-6
        )

    def test_vmap_equals_loop(self, module, ids):
        batched = jax.vmap(lambda x: module(x))(ids)
        assert_trees_close(batched, jnp.stack([module(x) for x in ids]))

    def test_padding_does_not_change_real_positions(self, module, ids):
        mask = _mask([4, 2, 7], LENGTH)
        padded = jnp.concatenate([ids, jnp.zeros((BATCH, 5), ids.dtype)], axis=1)
        padded_mask = jnp.concatenate([mask, jnp.zeros((BATCH, 5), bool)], axis=1)
        for row in range(BATCH):
            short = module(ids[row], mask[row])
            long = module(padded[row], padded_mask[row])[:LENGTH]
            real = np.asarray(mask[row])
            np.testing.assert_allclose(np.asarray(long)[real], np.asarray(short)[real], atol=1e-5)

    def test_gradients_reach_every_parameter(self, module, ids):
        weights = jax.random.normal(jax.random.key(3), (LENGTH, module.embedding_size))
        grads = eqx.filter_grad(
            lambda m: jnp.sum(m(jnp.arange(self.vocab_size) % self.vocab_size) ** 2) + jnp.sum(m(ids[0]) * weights)
        )(module)
        assert_gradients_reach_every_parameter(grads, "embedder")


class CellTests(_Built):
    """Recurrent cells: the project/recur split, shapes, scans, gradients."""

    zoo_kind: ClassVar[str] = "cell"
    input_size: ClassVar[int] = 5
    hidden_size: ClassVar[int] = 6

    @classmethod
    def wired(cls, registry):
        return {"input_size": cls.input_size, "hidden_size": cls.hidden_size}

    @pytest.fixture(scope="class")
    @classmethod
    def xs(cls):
        return jax.random.normal(jax.random.key(5), (BATCH, LENGTH, cls.input_size))

    def test_is_a_cell(self, module):
        assert isinstance(module, RecurrentCell)
        assert (module.input_size, module.hidden_size) == (self.input_size, self.hidden_size)

    def test_step_equals_project_then_recur(self, module, xs):
        state = module.init_state()
        assert_trees_close(module(xs[0, 0], state), module.recur(module.project(xs[0, 0]), state))
        assert module.output(module(xs[0, 0], state)).shape == (self.hidden_size,)

    def test_scan_jit_and_vmap(self, module, xs):
        mask = _mask([7, 3, 1], LENGTH)
        eager = [run_cell(module, x, m) for x, m in zip(xs, mask, strict=True)]
        batched = jax.jit(jax.vmap(lambda x, m: run_cell(module, x, m)))(xs, mask)
        for row, (outputs, final) in enumerate(eager):
            assert outputs.shape == (LENGTH, self.hidden_size)
            assert_trees_close(jax.tree.map(lambda a, r=row: a[r], batched), (outputs, final))

    def test_run_equals_project_then_scan(self, module, xs):
        mask = _mask([4], LENGTH)[0]
        state = module.init_state()
        projected = jax.vmap(module.project)(xs[0])
        for reverse in (False, True):
            assert_trees_close(
                module.run(xs[0], mask, state, reverse=reverse), module.scan(projected, mask, state, reverse=reverse)
            )

    def test_state_is_held_on_padding(self, module, xs):
        mask = _mask([3], LENGTH)[0]
        _, final = run_cell(module, xs[0], mask)
        _, short = run_cell(module, xs[0, :3], jnp.ones(3, bool))
        assert_trees_close(final, short)

    def test_gradients_reach_every_parameter(self, module, xs):
        grads = eqx.filter_grad(lambda m: jnp.sum(run_cell(m, xs[0], jnp.ones(LENGTH, bool))[0] ** 2))(module)
        assert_gradients_reach_every_parameter(grads, "cell")


@eqx.filter_jit
def _encode(module, xs, mask, key=None):
    """Encode a batch ``[B, S, I]`` (compiled: eager recurrences are slow)."""
    if key is None:
        return jax.vmap(lambda x, m: module(x, m))(xs, mask)
    return jax.vmap(lambda x, m: module(x, m, key=key))(xs, mask)


def _row(tree, row: int):
    return jax.tree.map(lambda a: a[row], tree)


class EncoderTests(_Built):
    """Encoders: shapes, zero pads, padding invariance, vmap, gradients."""

    zoo_kind: ClassVar[str] = "encoder"
    input_size: ClassVar[int] = 5

    @classmethod
    def wired(cls, registry):
        cells = sorted(n for n, e in registry.components.items() if e.kind == "cell" and registry.plugins[e.plugin].ok)
        cell = component_spec(cells[0], registry=registry).partial() if cells else None
        return {"input_size": cls.input_size, "cell": cell}

    @pytest.fixture(scope="class")
    @classmethod
    def batch(cls):
        xs = jax.random.normal(jax.random.key(5), (BATCH, LENGTH, cls.input_size))
        return xs, _mask([7, 3, 1], LENGTH)

    def test_is_an_encoder_with_declared_sizes(self, module, batch):
        assert isinstance(module, Encoder)
        out = module(batch[0][0], batch[1][0])  # once eagerly: the jitted checks below compare with it
        assert isinstance(out, EncoderOutput)
        assert_trees_close(_row(_encode(module, *batch), 0), out)
        assert out.states.shape == (LENGTH, module.output_size)
        assert out.final.shape == (module.final_size,)
        assert bool(jnp.all(jnp.isfinite(out.states)))

    def test_padded_positions_are_zero(self, module, batch):
        out = _row(_encode(module, *batch), 1)
        assert bool(jnp.all(out.states[3:] == 0)), "states at padded positions must be zero"

    def test_padding_invariance(self, module, batch):
        xs, mask = batch
        noise = jax.random.normal(jax.random.key(9), (BATCH, 4, self.input_size))
        longer = jnp.concatenate([xs, noise], axis=1)
        longer_mask = jnp.concatenate([mask, jnp.zeros((BATCH, 4), bool)], axis=1)
        short, long = _encode(module, xs, mask), _encode(module, longer, longer_mask)
        assert_trees_close(long.states[:, :LENGTH], short.states)
        assert_trees_close(long.final, short.final)

    def test_vmap_equals_loop(self, module, batch):
        xs, mask = batch
        batched = _encode(module, xs, mask)
        for row in range(BATCH):
            assert_trees_close(_row(batched, row), _row(_encode(module, xs[row : row + 1], mask[row : row + 1]), 0))

    def test_gradients_reach_every_parameter(self, module, batch):
        xs, mask = batch
        grads = eqx.filter_jit(
            eqx.filter_grad(
                lambda m: jnp.sum(_encode(m, xs, mask).states ** 2) + jnp.sum(_encode(m, xs, mask).final ** 2)
            )
        )(module)
        assert_gradients_reach_every_parameter(grads, "encoder")

    def test_dropout_key_is_deterministic(self, module, batch):
        key = jax.random.key(4)
        assert_trees_close(_encode(module, *batch, key), _encode(module, *batch, key), exact=True)
