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

from zoo.building.builder import build
from zoo.building.weights import array_paths, load, save, seal
from zoo.errors import WeightsError
from zoo.interfaces import Model
from zoo.naming.names import parse_name
from zoo.naming.resolve import architecture_of
from zoo.naming.spec import ModelSpec, import_factory
from zoo.testing.base import (
    ConformanceTests,
    assert_configuration_unchanged,
    assert_domains_enforced,
    assert_dtype,
    assert_gradients_reach_every_parameter,
    assert_parameters_from_key,
    assert_same_arrays,
    assert_shapes_follow_the_spec,
    assert_trees_close,
    declared_dtype,
    plugin_modules,
    traced_shapes,
)
from zoo.testing.cases import build_case, case_params, case_subject, host_refusal
from zoo.testing.session import watch_config

__all__ = ["ModelTests"]


@eqx.filter_jit
def _loss(model, batch, key):
    return model.loss(batch, key=key)


@eqx.filter_jit
def _loss_and_grad(model, batch, key):
    return eqx.filter_value_and_grad(lambda m: m.loss(batch, key=key))(model)


def _plugins(spec: ModelSpec) -> list[str]:
    """The plugins a model's spec draws on: its architecture's and its components'."""
    return sorted({p for p in [spec.plugin, *(s.plugin for s in spec.slots)] if p})


def _factories(spec: ModelSpec) -> list:
    return [import_factory(spec.factory, plugin=spec.plugin)] + [
        s.factory_callable() for s in spec.slots if not s.is_empty
    ]


class ModelTests(ConformanceTests):
    """Build by name, configuration, traceable build, spec round trip, keys, dtypes, shapes from the
    spec, loss, gradients, padding, save/load."""

    @pytest.fixture(scope="class")
    @classmethod
    def params(cls, registry, zoo_model):
        return case_params(registry, zoo_model)

    @classmethod
    def make(cls, registry, name, params, key):
        return build(name, key=key, registry=registry, **params)

    @pytest.fixture(scope="class")
    @classmethod
    def spec(cls, registry, zoo_model, params):
        try:
            return registry.describe(zoo_model, **params)
        except Exception as error:  # a host's refusal is a skip; anything else the check's failure
            reason = host_refusal(registry, zoo_model, error)
            if reason is None:
                raise
            pytest.skip(reason)

    @pytest.fixture(scope="class")
    @classmethod
    def model(cls, registry, zoo_model, params, spec):
        """Built from key 0, with changes to JAX's configuration recorded against its plugins."""
        with watch_config(_plugins(spec), f"building {zoo_model!r}"):
            make = lambda: cls.make(registry, zoo_model, params, jax.random.key(0))
            return build_case(registry, zoo_model, params, make)

    @pytest.fixture(scope="class")
    @classmethod
    def other_model(cls, registry, zoo_model, params):
        """The same model built from key 1."""
        return cls.make(registry, zoo_model, params, jax.random.key(1))

    def subject(self, zoo_model: str) -> str:
        return case_subject(zoo_model)

    @pytest.fixture(scope="class")
    @classmethod
    def batch(cls, model):
        return model.example_batch(key=jax.random.key(11), batch_size=3, length=8)

    def test_builds_a_final_model(self, zoo_model, model):
        what = f"a final zoo.Model, {self.subject(zoo_model)}"
        assert isinstance(model, Model), f"{what}: it built a {type(model).__name__}"
        assert not inspect.isabstract(type(model)), f"{what}: {type(model).__name__} leaves abstract methods"

    def test_jax_configuration_is_unchanged(self, zoo_model, spec, model):
        """Importing its plugins and building it leave `jax.config` as it was."""
        assert_configuration_unchanged(_plugins(spec), what=self.subject(zoo_model))

    def test_init_traces_under_eval_shape(self, registry, zoo_model, params, model):
        """`zoo.load` builds the model under `eqx.filter_eval_shape` before reading a file: the same
        leaves, shapes and dtypes as a real build."""
        what = self.subject(zoo_model)
        traced = dict(array_paths(traced_shapes(lambda key: self.make(registry, zoo_model, params, key), what=what)))
        built = dict(array_paths(model))
        assert list(traced) == list(built), (
            f"traceable __init__ of {what}: under eval_shape it has leaves {sorted(set(traced) ^ set(built))} "
            "that a real build has not, or lacks them"
        )
        for path, shape in traced.items():
            array = built[path]
            assert (shape.shape, shape.dtype) == (array.shape, array.dtype), (
                f"traceable __init__ of {what}: leaf {path} is {shape.dtype}{list(shape.shape)} under eval_shape "
                f"but {array.dtype}{list(array.shape)} when built: its shape must follow from the hyperparameters"
            )

    def test_spec_round_trips(self, registry, zoo_model, model, params):
        what = f"spec round trip of {self.subject(zoo_model)}"
        spec = model.spec
        assert ModelSpec.from_json(spec.to_json()) == spec, f"{what}: its JSON does not read back equal"
        assert str(parse_name(spec.name)) == spec.name, f"{what}: its name {spec.name!r} does not parse back"
        assert registry.describe(spec.name, **params) == spec, f"{what}: the canonical name must re-resolve to the spec"

    def test_hyperparameter_domains_are_declared_and_enforced(self, registry, zoo_model):
        arch = architecture_of(registry, zoo_model)
        assert_domains_enforced(arch, lambda **params: registry.describe(arch.name, **params))

    def test_same_key_same_parameters(self, registry, zoo_model, params, model):
        assert_trees_close(
            model,
            self.make(registry, zoo_model, params, jax.random.key(0)),
            exact=True,
            what=f"same key, same parameters of {self.subject(zoo_model)}",
        )

    def test_every_parameter_depends_on_the_key(self, zoo_model, model, other_model):
        assert_parameters_from_key(model, other_model, what=self.subject(zoo_model))

    def test_parameters_and_loss_are_float32(self, zoo_model, spec, model, loss_and_grad):
        """float32 parameters and loss, unless the model or a component declares a `dtype`."""
        what = self.subject(zoo_model)
        want = declared_dtype(model, spec.params, *(s.params for s in spec.slots))
        count = assert_dtype(model, want, what=f"{want} parameters of {what}")
        assert count, f"{want} parameters of {what}: it has no floating-point parameter"
        assert_dtype(loss_and_grad[0], want, what=f"{want} outputs of {what}", role="loss")

    def test_shapes_follow_the_spec(self, registry, zoo_model, params, spec, model):
        """Its shapes come from its spec, not from a constant of its plugins' modules."""
        factories = _factories(spec)
        perturbed = assert_shapes_follow_the_spec(
            lambda key: self.make(registry, zoo_model, params, key),
            model,
            what=self.subject(zoo_model),
            factories=factories,
        )
        if not perturbed:
            modules = [m.__name__ for m in plugin_modules(model, *factories)]
            pytest.skip(f"no number held in code (a module constant, an argument default) in {modules}")

    @pytest.fixture(scope="class")
    @classmethod
    def loss_and_grad(cls, model, batch):
        """Loss and gradients in training mode (with a key), compiled once per model."""
        return _loss_and_grad(model, batch, jax.random.key(3))

    def test_loss_is_a_finite_scalar(self, zoo_model, loss_and_grad):
        what = f"a finite scalar loss of {self.subject(zoo_model)}"
        value, _ = loss_and_grad
        assert value.shape == () and jnp.issubdtype(value.dtype, jnp.floating), (
            f"{what}: the loss is {value.dtype}{list(value.shape)}"
        )
        assert bool(jnp.isfinite(value)), f"{what}: the training loss is {value}"

    def test_gradients_reach_every_parameter(self, zoo_model, loss_and_grad):
        what = f"gradients reach every parameter of {self.subject(zoo_model)}"
        assert_gradients_reach_every_parameter(loss_and_grad[1], what)

    def test_padding_invariance(self, zoo_model, model):
        short = model.example_batch(key=jax.random.key(11), batch_size=3, length=8)
        long = model.example_batch(key=jax.random.key(11), batch_size=3, length=13)
        if all(short[k].shape == long[k].shape for k in short):
            pytest.skip("this model's batches have no padded dimension")
        np.testing.assert_allclose(
            float(_loss(model, long, None)),
            float(_loss(model, short, None)),
            rtol=1e-5,
            atol=1e-6,
            err_msg=f"padding invariance of {self.subject(zoo_model)}: more padding changed the loss",
        )

    def test_key_none_is_inference(self, registry, zoo_model, params, spec, model, batch):
        """``key=None`` means inference: with every parameter playing the ``dropout`` role (the
        architecture's and its components') at 0.5, the loss without a key equals the model's at its
        test values, while with a key it moves (the rate is used)."""
        rates = dropout_params(registry, spec)
        if not rates:
            pytest.skip(
                f"neither {spec.arch!r} nor its components declare a dropout role "
                '(roles = { dropout = "PARAM" } in a table): nothing tells inference from training'
            )
        what = f"key=None is inference of {self.subject(zoo_model)} ({', '.join(rates)} at 0.5)"
        dropped = self.make(registry, zoo_model, {**params, **dict.fromkeys(rates, 0.5)}, jax.random.key(0))
        assert_same_arrays(dropped, model, what=f"{what}: its parameters against the test values'")
        np.testing.assert_allclose(
            float(_loss(dropped, batch, None)),
            float(_loss(model, batch, None)),
            rtol=1e-5,
            atol=1e-6,
            err_msg=f"{what}: the loss with key=None changed with the dropout rate (dropout drawn without the "
            "key given: apply it only when a key is passed)",
        )
        if float(_loss(dropped, batch, jax.random.key(3))) == float(_loss(dropped, batch, None)):
            pytest.skip(f"with a key, {', '.join(rates)} at 0.5 changes nothing: the check would prove nothing")

    def test_save_load_is_exact(self, registry, zoo_model, model, batch, tmp_path):
        what = f"save and load exactly, {self.subject(zoo_model)}"
        path = save(model, tmp_path / "model.safetensors", registry=registry)
        loaded = load(path, registry=registry)
        assert type(loaded) is type(model), f"{what}: it loads as a {type(loaded).__name__}"
        assert loaded.spec == model.spec, f"{what}: the loaded spec differs"
        assert loaded.vocabs == model.vocabs, f"{what}: the loaded vocabularies differ"
        assert_trees_close(loaded, model, exact=True, what=what)
        assert float(_loss(loaded, batch, None)) == float(_loss(model, batch, None)), f"{what}: the loss changed"

    def test_wrong_shape_and_missing_tensor_are_rejected(self, registry, zoo_model, model, tmp_path):
        what = f"a file that does not fit is refused, {self.subject(zoo_model)}"
        path = save(model, tmp_path / "model.safetensors", registry=registry)
        with safe_open(str(path), "numpy") as handle:
            metadata = handle.metadata()
        tensors = load_file(str(path))
        name = next(k for k in sorted(tensors) if not k.startswith("__zoo__") and tensors[k].ndim >= 1)
        reshaped = dict(
            tensors, **{name: np.zeros((*tensors[name].shape[:-1], tensors[name].shape[-1] + 1), tensors[name].dtype)}
        )
        save_file(reshaped, str(tmp_path / "wrong.safetensors"), metadata=seal(metadata, reshaped))
        _assert_refused(registry, tmp_path / "wrong.safetensors", name, what=f"{what} (tensor {name} reshaped)")
        missing = {k: v for k, v in tensors.items() if k != name}
        save_file(missing, str(tmp_path / "missing.safetensors"), metadata=seal(metadata, missing))
        _assert_refused(registry, tmp_path / "missing.safetensors", "missing", what=f"{what} (tensor {name} removed)")


def dropout_params(registry, spec: ModelSpec) -> list[str]:
    """The hyperparameters of model `spec` playing the ``dropout`` role: the architecture's
    (``dropout``) and each filled slot's component's (``slot.dropout``)."""
    arch = registry.architectures[spec.arch]
    found = [arch.roles["dropout"]] if "dropout" in arch.roles else []
    for slot in spec.slots:
        entry = None if slot.is_empty else registry.components.get(slot.component)
        if entry is not None and "dropout" in entry.roles:
            found.append(f"{slot.slot}.{entry.roles['dropout']}")
    return found


def _assert_refused(registry, path, words: str, *, what: str) -> None:
    """Loading `path` raises a `WeightsError` whose message contains `words`."""
    message = None
    try:
        load(path, registry=registry)
    except WeightsError as error:
        message = str(error)
    assert message is not None, f"{what}: it loaded without a WeightsError"
    assert words in message, f"{what}: the error does not name {words!r}: {message}"
