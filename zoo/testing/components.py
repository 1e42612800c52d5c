"""Checks for embedders, recurrent cells and encoders (and what every built component passes).

Every assertion starts with the contract it enforces and the component it is about, then
names the leaf or position at fault; each check asserts that the situation it tests occurred.
"""

from __future__ import annotations

from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from zoo.building.builder import component_spec
from zoo.building.weights import array_paths
from zoo.interfaces import ContextualEmbedder, Embedder, Encoder, EncoderOutput, RecurrentCell
from zoo.nn import run_cell
from zoo.testing.base import (
    ConformanceTests,
    assert_dtype,
    assert_gradients_reach_every_parameter,
    assert_parameters_from_key,
    assert_same_arrays,
    assert_trees_close,
    declared_dtype,
    traced_shapes,
)

__all__ = ["CellTests", "EmbedderTests", "EncoderTests"]

BATCH, LENGTH = 3, 7


def _mask(lengths: list[int], width: int) -> jax.Array:
    return jnp.arange(width)[None, :] < jnp.asarray(lengths)[:, None]


class _Built(ConformanceTests):
    """Builds the component under test with its registry `test` params; what every built component passes.

    A concrete class names its kind's wired arguments (`wired`), an `example` fixture of inputs
    and `outputs(module, example)`: the component's outputs on them, computed eagerly, no key.
    """

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    @classmethod
    def wired(cls, registry) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def make(cls, registry, entry, key, **params):
        """The component built with its `test` values (and `params` over them) and the wired arguments."""
        return component_spec(entry.name, kind=cls.zoo_kind, registry=registry, **{**entry.test, **params}).build(
            **cls.wired(registry), key=key
        )

    called_with_key: ClassVar[bool] = False  # whether its call takes ``key=`` (dropout, noise)

    @classmethod
    def keyed_outputs(cls, module: Any, example: Any, key: Any) -> Any:
        """The outputs on `example` with `key` (None: inference), for kinds whose call takes a key."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def module(cls, registry, entry):
        return cls.make(registry, entry, jax.random.key(0))

    @classmethod
    def outputs(cls, module: Any, example: Any) -> Any:
        """The component's outputs on `example` (a PyTree of arrays), eagerly and without a key."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def example_outputs(cls, module, example):
        """`outputs` on the `example` inputs, once per component."""
        return cls.outputs(module, example)

    def subject(self, entry) -> str:
        return f"{self.zoo_kind} {entry.name!r}"

    def test_init_traces_under_eval_shape(self, registry, entry, module):
        """`zoo.load` builds a module under `eqx.filter_eval_shape` before it reads the file."""
        what = self.subject(entry)
        shapes = dict(array_paths(traced_shapes(lambda key: self.make(registry, entry, key), what=what)))
        built = dict(array_paths(module))
        assert list(shapes) == list(built), (
            f"traceable __init__ of {what}: under eval_shape it has leaves {list(shapes)}, built {list(built)}"
        )
        for path, array in built.items():
            traced = shapes[path]
            assert (traced.shape, traced.dtype) == (array.shape, array.dtype), (
                f"traceable __init__ of {what}: parameter {path} is {traced.dtype}{list(traced.shape)} under "
                f"eval_shape but {array.dtype}{list(array.shape)} when built: shapes must follow from the "
                "hyperparameters, never from the key's values"
            )

    def test_every_parameter_depends_on_the_key(self, registry, entry, module):
        what = self.subject(entry)
        again = self.make(registry, entry, jax.random.key(0))
        assert_trees_close(module, again, exact=True, what=f"same key, same parameters of {what}")
        assert_parameters_from_key(module, self.make(registry, entry, jax.random.key(1)), what=what)

    def test_parameters_are_float32(self, entry, module):
        want = declared_dtype(module, entry.test, entry.params)
        assert_dtype(module, want, what=f"float32 parameters of {self.subject(entry)}")

    def test_same_inputs_same_outputs(self, entry, module, example, example_outputs):
        what = f"determinism of {self.subject(entry)} (the same inputs twice, no key, must give the same outputs)"
        assert array_paths(example_outputs), f"{what}: its outputs hold no array"
        assert_trees_close(self.outputs(module, example), example_outputs, exact=True, what=what)

    def test_outputs_are_float32(self, entry, module, example_outputs):
        want = declared_dtype(module, entry.test, entry.params)
        what = f"float32 outputs of {self.subject(entry)}"
        assert assert_dtype(example_outputs, want, what=what, role="output"), (
            f"{what}: it returns no floating-point array"
        )

    FIXED_KEYS = (0, 1, 42)
    """The seeds a component might put in place of a missing key (``jax.random.key(0)``, ...)."""

    def _key_none_is_not_a_fixed_key(self, entry, module, example):
        """Without a declared rate, behaviourally: when a key changes the outputs (the component draws
        something at its test values), the outputs with ``key=None`` are the same every call and equal
        none of the draws from the keys a component might put in place of a missing one."""
        what = f"key=None is inference of {self.subject(entry)}"
        bare = self.keyed_outputs(module, example, None)
        assert_trees_close(self.keyed_outputs(module, example, None), bare, exact=True, what=f"{what}: two calls")
        drawn = [self.keyed_outputs(module, example, jax.random.key(seed)) for seed in self.FIXED_KEYS]

        def same(a, b):
            return all(bool(jnp.all(x == y)) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))

        if all(same(d, bare) for d in drawn):
            pytest.skip(
                f"{entry.name!r} declares no dropout role and a key changes none of its outputs at its test values "
                f"{dict(entry.test)}: nothing tells inference from training (if one of its hyperparameters is a "
                f'dropout rate, say so in its table: roles = {{ dropout = "'
                f'{next((p for p in entry.params if "drop" in p), "PARAM")}" }})'
            )
        for seed, outputs in zip(self.FIXED_KEYS, drawn, strict=True):
            assert not same(outputs, bare), (
                f"{what}: the outputs with key=None are those drawn with jax.random.key({seed}): it draws its noise "
                "from a fixed key when none is given (apply dropout and noise only when a key is passed)"
            )

    def test_key_none_is_inference(self, registry, entry, module, example):
        """``key=None`` means inference: with the parameter playing the ``dropout`` role at 0.5 the
        outputs without a key equal those at 0 (no dropout drawn from a key of its own), while with
        a key they differ (the rate is used)."""
        if not self.called_with_key:
            pytest.skip(f"a {self.zoo_kind} is called without a key")
        rate = entry.roles.get("dropout")
        if rate is None:
            self._key_none_is_not_a_fixed_key(entry, module, example)
            return
        what = f"key=None is inference of {self.subject(entry)}"
        dropped = self.make(registry, entry, jax.random.key(0), **{rate: 0.5})
        clean = self.make(registry, entry, jax.random.key(0), **{rate: 0.0})
        assert_same_arrays(dropped, clean, what=f"{what}: the parameters at {rate}=0.5 and {rate}=0")
        want = self.keyed_outputs(clean, example, None)
        assert_trees_close(
            self.keyed_outputs(dropped, example, None),
            want,
            what=f"{what}: {rate}=0.5 against {rate}=0, both with key=None (dropout drawn without the key given: "
            "apply dropout only when a key is passed)",
        )
        keyed = self.keyed_outputs(dropped, example, jax.random.key(1))
        changed = any(bool(jnp.any(a != b)) for a, b in zip(jax.tree.leaves(keyed), jax.tree.leaves(want), strict=True))
        if not changed:
            pytest.skip(
                f"with a key, {rate}=0.5 changes nothing at its test values {dict(entry.test)} (dropout between "
                "layers of one layer, say), so key=None could not be told from a key: give test values where it acts"
            )


class EmbedderTests(_Built):
    """Embedders: shapes, dtypes, determinism, jit, vmap, gradients, padding."""

    zoo_kind: ClassVar[str] = "embedder"
    vocab_size: ClassVar[int] = 17

    @classmethod
    def wired(cls, registry):
        return {"num_embeddings": cls.vocab_size}

    @pytest.fixture(scope="class")
    @classmethod
    def ids(cls):
        return jax.random.randint(jax.random.key(7), (BATCH, LENGTH), 0, cls.vocab_size)

    @pytest.fixture(scope="class")
    @classmethod
    def example(cls, ids):
        return ids[0], _mask([4], LENGTH)[0]

    @classmethod
    def outputs(cls, module, example):
        return module(*example), module.vectors()

    called_with_key: ClassVar[bool] = True

    @classmethod
    def keyed_outputs(cls, module, example, key):
        return module(*example, key=key)

    def test_is_an_embedder(self, module):
        assert isinstance(module, Embedder), f"{type(module).__name__} is not a zoo.Embedder"
        assert module.num_embeddings == self.vocab_size, (
            f"num_embeddings is {module.num_embeddings}, wired {self.vocab_size}"
        )

    def test_shapes_and_dtype(self, entry, module, ids):
        what = f"shapes of {self.subject(entry)}"
        out = module(ids[0])
        assert out.shape == (LENGTH, module.embedding_size), f"{what}: output {out.shape}"
        assert jnp.issubdtype(out.dtype, jnp.floating), f"{what}: output dtype {out.dtype}"
        assert bool(jnp.all(jnp.isfinite(out))), f"{what}: output is not finite"
        vectors = module.vectors().shape
        assert vectors == (self.vocab_size, module.embedding_size), f"{what}: vectors() {vectors}"

    def test_jit_matches_eager(self, entry, module, ids):
        assert_trees_close(
            eqx.filter_jit(lambda m, x: m(x))(module, ids[0]), module(ids[0]), what=f"jit of {self.subject(entry)}"
        )

    def test_a_static_embedder_gives_its_vectors(self, entry, module, ids):
        # Decoders build tables from `vectors()` in place of looking every token up.
        if isinstance(module, ContextualEmbedder):
            pytest.skip("a contextual embedder's vectors depend on the sentence")
        assert_trees_close(
            module(ids[0]),
            module.vectors()[ids[0]],
            rtol=1e-6,
            atol=1e-6,
            what=f"vectors() of static {self.subject(entry)} (embedding row t is vectors()[ids[t]])",
        )

    def test_vmap_equals_loop(self, entry, module, ids):
        batched = jax.vmap(lambda x: module(x))(ids)
        assert_trees_close(batched, jnp.stack([module(x) for x in ids]), what=f"vmap of {self.subject(entry)}")

    def test_padding_does_not_change_real_positions(self, entry, module, ids):
        mask = _mask([4, 2, 7], LENGTH)
        padded = jnp.concatenate([ids, jnp.zeros((BATCH, 5), ids.dtype)], axis=1)
        padded_mask = jnp.concatenate([mask, jnp.zeros((BATCH, 5), bool)], axis=1)
        for row, length in enumerate([4, 2, 7]):
            short = module(ids[row], mask[row])[:length]
            long = module(padded[row], padded_mask[row])[:length]
            what = f"padding invariance of {self.subject(entry)} (row {row}, {length} real tokens)"
            assert_trees_close(long, short, what=what)

    def test_gradients_reach_every_parameter(self, entry, module, ids):
        weights = jax.random.normal(jax.random.key(3), (LENGTH, module.embedding_size))
        grads = eqx.filter_grad(
            lambda m: jnp.sum(m(jnp.arange(self.vocab_size) % self.vocab_size) ** 2) + jnp.sum(m(ids[0]) * weights)
        )(module)
        assert_gradients_reach_every_parameter(grads, self.subject(entry))


def _step_by_step(cell: RecurrentCell, xs: jax.Array, length: int, *, reverse: bool) -> tuple[list, Any]:
    """`cell(x, state)` over the first `length` positions of `xs`, last to first with `reverse`:
    the outputs at those positions (in position order) and the final state."""
    state, outputs = cell.init_state(), {}
    for t in reversed(range(length)) if reverse else range(length):
        state = cell(xs[t], state)
        outputs[t] = cell.output(state)
    return jnp.stack([outputs[t] for t in range(length)]), state


class CellTests(_Built):
    """Recurrent cells: the project/recur split, both directions with padding, scans, gradients."""

    test_key_none_is_inference = None  # a cell is called without a key

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

    @pytest.fixture(scope="class")
    @classmethod
    def example(cls, xs):
        return xs[0], _mask([4], LENGTH)[0]

    @classmethod
    def outputs(cls, module, example):
        return [run_cell(module, *example, reverse=reverse) for reverse in (False, True)]

    def test_is_a_cell(self, module):
        assert isinstance(module, RecurrentCell), f"{type(module).__name__} is not a zoo.RecurrentCell"
        sizes = (module.input_size, module.hidden_size)
        assert sizes == (self.input_size, self.hidden_size), f"(input_size, hidden_size) is {sizes}"

    def test_step_equals_project_then_recur(self, entry, module, xs):
        state = module.init_state()
        assert_trees_close(
            module(xs[0, 0], state),
            module.recur(module.project(xs[0, 0]), state),
            what=f"cell(x, state) == recur(project(x), state) of {self.subject(entry)}",
        )
        shape = module.output(module(xs[0, 0], state)).shape
        assert shape == (self.hidden_size,), f"output() of {self.subject(entry)} has shape {shape}"

    def test_state_is_held_on_padding(self, entry, module, xs):
        """Forward over a right-padded row: the state after the last real position, held over the pads."""
        self._assert_pads_are_skipped(entry, module, xs, reverse=False)

    def test_reverse_with_padding_starts_at_the_last_real_position(self, entry, module, xs):
        """``reverse=True`` over a right-padded row: the scan meets the pads first and must hold the
        initial state over them (a reversed scan flips the mask with the inputs), then read the real
        positions last to first (what a bidirectional encoder's backward pass relies on)."""
        self._assert_pads_are_skipped(entry, module, xs, reverse=True)

    def _assert_pads_are_skipped(self, entry, module, xs, *, reverse: bool) -> None:
        """`run_cell` on right-padded rows equals stepping the cell over their real positions alone."""
        direction = "reverse=True with padding" if reverse else "forward with padding"
        for row, length in enumerate([4, 1]):
            what = f"{direction} of {self.subject(entry)} (row {row}: {length} real of {LENGTH} positions)"
            outputs, final = run_cell(module, xs[row], _mask([length], LENGTH)[0], reverse=reverse)
            want_outputs, want_final = _step_by_step(module, xs[row], length, reverse=reverse)
            if row == 0:  # not vacuous: a scan that read the pads would end elsewhere
                _, reading_pads = _step_by_step(module, xs[row], LENGTH, reverse=reverse)
                leaves = zip(*map(jax.tree.leaves, (reading_pads, want_final)), strict=True)
                assert any(bool(jnp.any(a != b)) for a, b in leaves), (
                    f"{what}: reading the pads would not change the state; the check would prove nothing"
                )
            assert_trees_close(final, want_final, what=f"{what}: final state vs stepping the real positions")
            assert_trees_close(
                outputs[:length], want_outputs, what=f"{what}: outputs [position, unit] at real positions"
            )
            assert_trees_close(
                outputs[length:], jnp.zeros_like(outputs[length:]), exact=True, what=f"{what}: outputs on pads"
            )

    def test_scan_jit_and_vmap(self, entry, module, xs):
        mask = _mask([7, 3, 1], LENGTH)
        eager = [run_cell(module, x, m) for x, m in zip(xs, mask, strict=True)]
        batched = jax.jit(jax.vmap(lambda x, m: run_cell(module, x, m)))(xs, mask)
        for row, (outputs, final) in enumerate(eager):
            assert outputs.shape == (LENGTH, self.hidden_size), f"outputs of {self.subject(entry)}: {outputs.shape}"
            what = f"jit and vmap of the scan of {self.subject(entry)} (row {row})"
            assert_trees_close(jax.tree.map(lambda a, r=row: a[r], batched), (outputs, final), what=what)

    def test_run_equals_project_then_scan(self, entry, module, xs):
        mask = _mask([4], LENGTH)[0]
        state = module.init_state()
        projected = jax.vmap(module.project)(xs[0])
        for reverse in (False, True):
            assert_trees_close(
                module.run(xs[0], mask, state, reverse=reverse),
                module.scan(projected, mask, state, reverse=reverse),
                what=f"run == project then scan (reverse={reverse}) of {self.subject(entry)}",
            )

    def test_gradients_reach_every_parameter(self, entry, module, xs):
        grads = eqx.filter_grad(lambda m: jnp.sum(run_cell(m, xs[0], jnp.ones(LENGTH, bool))[0] ** 2))(module)
        assert_gradients_reach_every_parameter(grads, self.subject(entry))


@eqx.filter_jit
def _encode(module, xs, mask, key=None):
    """Encode a batch ``[B, S, I]`` (compiled: eager recurrences are slow)."""
    if key is None:
        return jax.vmap(lambda x, m: module(x, m))(xs, mask)
    return jax.vmap(lambda x, m: module(x, m, key=key))(xs, mask)


def _row(tree, row: int):
    return jax.tree.map(lambda a: a[row], tree)


class EncoderTests(_Built):
    """Encoders: shapes, zero pads, padding invariance, determinism, vmap, gradients."""

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

    @pytest.fixture(scope="class")
    @classmethod
    def example(cls, batch):
        return batch[0][1], batch[1][1]

    @classmethod
    def outputs(cls, module, example):
        return module(*example)

    called_with_key: ClassVar[bool] = True

    @classmethod
    def keyed_outputs(cls, module, example, key):
        return module(*example, key=key)

    def test_is_an_encoder_with_declared_sizes(self, entry, module, batch):
        what = f"declared sizes of {self.subject(entry)}"
        assert isinstance(module, Encoder), f"{type(module).__name__} is not a zoo.Encoder"
        out = module(batch[0][0], batch[1][0])  # once eagerly: the jitted checks below compare with it
        assert isinstance(out, EncoderOutput), f"{what}: it returns a {type(out).__name__}, not an EncoderOutput"
        assert_trees_close(_row(_encode(module, *batch), 0), out, what=f"jit and vmap of {self.subject(entry)}")
        assert out.states.shape == (LENGTH, module.output_size), f"{what}: states {out.states.shape}"
        assert out.final.shape == (module.final_size,), f"{what}: final {out.final.shape}"
        assert bool(jnp.all(jnp.isfinite(out.states))), f"{what}: states are not finite"

    def test_padded_positions_are_zero(self, entry, module, batch):
        out = _row(_encode(module, *batch), 1)
        assert_trees_close(
            out.states[3:],
            jnp.zeros_like(out.states[3:]),
            exact=True,
            what=f"zero states on pads of {self.subject(entry)} (row 1: 3 real of {LENGTH}, pads from position 3)",
        )

    def test_padding_invariance(self, entry, module, batch):
        xs, mask = batch
        noise = jax.random.normal(jax.random.key(9), (BATCH, 4, self.input_size))
        longer = jnp.concatenate([xs, noise], axis=1)
        longer_mask = jnp.concatenate([mask, jnp.zeros((BATCH, 4), bool)], axis=1)
        short, long = _encode(module, xs, mask), _encode(module, longer, longer_mask)
        what = f"padding invariance of {self.subject(entry)} (4 more pads of noise)"
        assert_trees_close(long.states[:, :LENGTH], short.states, what=f"{what}, states [row, position]")
        assert_trees_close(long.final, short.final, what=f"{what}, final [row, unit]")

    def test_vmap_equals_loop(self, entry, module, batch):
        xs, mask = batch
        batched = _encode(module, xs, mask)
        for row in range(BATCH):
            assert_trees_close(
                _row(batched, row),
                _row(_encode(module, xs[row : row + 1], mask[row : row + 1]), 0),
                what=f"vmap of {self.subject(entry)} (row {row})",
            )

    def test_gradients_reach_every_parameter(self, entry, module, batch):
        xs, mask = batch
        grads = eqx.filter_jit(
            eqx.filter_grad(
                lambda m: jnp.sum(_encode(m, xs, mask).states ** 2) + jnp.sum(_encode(m, xs, mask).final ** 2)
            )
        )(module)
        assert_gradients_reach_every_parameter(grads, self.subject(entry))

    def test_dropout_key_is_deterministic(self, entry, module, batch):
        key = jax.random.key(4)
        assert_trees_close(
            _encode(module, *batch, key),
            _encode(module, *batch, key),
            exact=True,
            what=f"determinism of {self.subject(entry)} with a dropout key",
        )
