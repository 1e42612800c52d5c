"""Checks for architectures (models), each built by name with its `test` params."""

from __future__ import annotations

import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from zoo.builder import build
from zoo.errors import WeightsError
from zoo.interfaces import Model
from zoo.names import parse_name
from zoo.resolve import architecture_of
from zoo.spec import ModelSpec
from zoo.testing.base import (
    ConformanceTests,
    assert_domains_enforced,
    assert_gradients_reach_every_parameter,
    assert_trees_close,
)
from zoo.weights import load, save, seal

__all__ = ["ModelTests"]


@eqx.filter_jit
def _loss(model, batch, key):
    return model.loss(batch, key=key)


@eqx.filter_jit
def _loss_and_grad(model, batch, key):
    return eqx.filter_value_and_grad(lambda m: m.loss(batch, key=key))(model)


class ModelTests(ConformanceTests):
    """Build by name, spec round trip, keys, loss, gradients, padding, save/load."""

    @pytest.fixture(scope="class")
    @classmethod
    def params(cls, registry, zoo_model):
        return dict(architecture_of(registry, zoo_model).test)

    @classmethod
    def make(cls, registry, name, params, key):
        return build(name, key=key, registry=registry, **params)

    @pytest.fixture(scope="class")
    @classmethod
    def model(cls, registry, zoo_model, params):
        return cls.make(registry, zoo_model, params, jax.random.key(0))

    @pytest.fixture(scope="class")
    @classmethod
    def batch(cls, model):
        return model.example_batch(key=jax.random.key(11), batch_size=3, length=8)

    def test_builds_a_final_model(self, model):
        assert isinstance(model, Model)
        assert not inspect.isabstract(type(model))

    def test_spec_round_trips(self, registry, model, params):
        spec = model.spec
        assert ModelSpec.from_json(spec.to_json()) == spec
        assert str(parse_name(spec.name)) == spec.name
        assert registry.describe(spec.name, **params) == spec, "the canonical name must re-resolve to the spec"

    def test_hyperparameter_domains_are_declared_and_enforced(self, registry, zoo_model):
        arch = architecture_of(registry, zoo_model)
        assert_domains_enforced(arch, lambda **params: registry.describe(arch.name, **params))

    def test_same_key_same_parameters(self, registry, zoo_model, params, model):
        assert_trees_close(model, self.make(registry, zoo_model, params, jax.random.key(0)), exact=True)
        other = self.make(registry, zoo_model, params, jax.random.key(1))
        pairs = zip(
            jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array)),
            jax.tree.leaves(eqx.filter(other, eqx.is_inexact_array)),
            strict=True,
        )
        assert any(not np.array_equal(a, b) for a, b in pairs), "different keys gave the same parameters"

    @pytest.fixture(scope="class")
    @classmethod
    def loss_and_grad(cls, model, batch):
        """Loss and gradients in training mode (with a key), compiled once per model."""
        return _loss_and_grad(model, batch, jax.random.key(3))

    def test_loss_is_a_finite_scalar(self, loss_and_grad):
        value, _ = loss_and_grad
        assert value.shape == () and jnp.issubdtype(value.dtype, jnp.floating)
        assert bool(jnp.isfinite(value)), f"training loss is {value}"

    def test_gradients_reach_every_parameter(self, model, loss_and_grad):
        assert_gradients_reach_every_parameter(loss_and_grad[1], model.spec.name)

    def test_padding_invariance(self, model):
        short = model.example_batch(key=jax.random.key(11), batch_size=3, length=8)
        long = model.example_batch(key=jax.random.key(11), batch_size=3, length=13)
        if all(short[k].shape == long[k].shape for k in short):
            pytest.skip("this model's batches have no padded dimension")
        np.testing.assert_allclose(
            float(_loss(model, long, None)), float(_loss(model, short, None)), rtol=1e-5, atol=1e-6
        )

    def test_save_load_is_exact(self, registry, model, batch, tmp_path):
        path = save(model, tmp_path / "model.safetensors", registry=registry)
        loaded = load(path, registry=registry)
        assert type(loaded) is type(model)
        assert loaded.spec == model.spec and loaded.vocabs == model.vocabs
        assert_trees_close(loaded, model, exact=True)
        assert float(_loss(loaded, batch, None)) == float(_loss(model, batch, None))

    def test_wrong_shape_and_missing_tensor_are_rejected(self, registry, model, tmp_path):
        path = save(model, tmp_path / "model.safetensors", registry=registry)
        with safe_open(str(path), "numpy") as handle:
            metadata = handle.metadata()
        tensors = load_file(str(path))
        name = next(k for k in sorted(tensors) if not k.startswith("__zoo__") and tensors[k].ndim >= 1)
        reshaped = dict(
            tensors, **{name: np.zeros((*tensors[name].shape[:-1], tensors[name].shape[-1] + 1), tensors[name].dtype)}
        )
        save_file(reshaped, str(tmp_path / "wrong.safetensors"), metadata=seal(metadata, reshaped))
        with pytest.raises(WeightsError, match=name.replace(".", r"\.")):
            load(tmp_path / "wrong.safetensors", registry=registry)
        missing = {k: v for k, v in tensors.items() if k != name}
        save_file(missing, str(tmp_path / "missing.safetensors"), metadata=seal(metadata, missing))
        with pytest.raises(WeightsError, match="missing"):
            load(tmp_path / "missing.safetensors", registry=registry)
