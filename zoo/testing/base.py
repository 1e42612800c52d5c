"""Shared fixtures and helpers of the kit, and the checks every component passes."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.interfaces import Attention, Decoder, DecoderStrategy, Embedder, Encoder, RecurrentCell
from zoo.names import parse_name
from zoo.plugins import discover_entry_points
from zoo.spec import import_factory
from zoo.testing.pytest_plugin import kit_registry

__all__ = [
    "INTERFACES",
    "WIRED",
    "ComponentChecks",
    "ConformanceTests",
    "assert_domains_enforced",
    "assert_gradients_reach_every_parameter",
    "assert_trees_close",
    "parameter_leaves",
]

INTERFACES: dict[str, type] = {
    "embedder": Embedder,
    "cell": RecurrentCell,
    "encoder": Encoder,
    "attention": Attention,
    "decoder": Decoder,
    "strategy": DecoderStrategy,
}
"""Component kind -> the interface its factory must subclass."""

WIRED: dict[str, set[str]] = {
    "embedder": {"num_embeddings", "key"},
    "cell": {"input_size", "hidden_size", "key"},
    "encoder": {"input_size", "cell", "key"},
    "attention": {"query_size", "key_size", "key"},
    "decoder": {"key"},
    "strategy": set(),
}
"""Component kind -> the arguments an architecture passes its factory (see `zoo.interfaces`)."""


def parameter_leaves(module: Any) -> list[tuple[str, jax.Array]]:
    """``(path, array)`` of every floating-point array in `module`."""
    from zoo.weights import array_paths

    return [(k, v) for k, v in array_paths(module) if jnp.issubdtype(v.dtype, jnp.floating)]


def assert_trees_close(
    a: Any, b: Any, *, what: str = "the two trees", atol: float = 1e-5, rtol: float = 1e-5, exact: bool = False
) -> None:
    """Same structure, and every array leaf of `a` equal (`exact`) or close to `b`'s (NaN equals NaN).

    `what` names the contract and the component, e.g. ``"padding invariance of attention 'x'"``
    (every check of the kit passes one). A failure message starts with it, then names the leaf
    path (``.decoder.cell.weight``; ``[1]`` for the second element of a tuple), the first
    differing position, both values there, how many entries differ and the largest difference.
    """
    fa, ta = jax.tree_util.tree_flatten_with_path(eqx.filter(a, eqx.is_array))
    fb, tb = jax.tree_util.tree_flatten_with_path(eqx.filter(b, eqx.is_array))
    assert ta == tb, f"{what}: tree structures differ:\n{ta}\n{tb}"
    for (path, x), (_, y) in zip(fa, fb, strict=True):
        leaf = f"leaf {jax.tree_util.keystr(path)}" if path else "the array"
        x, y = _comparable(x), _comparable(y)
        assert x.shape == y.shape, f"{what}: {leaf} has shape {x.shape}, expected {y.shape}"
        both_nan = _isnan(x) & _isnan(y)
        ok = ((x == y) if exact else np.isclose(x, y, atol=atol, rtol=rtol)) | both_nan
        if bool(np.all(ok)):
            continue
        at = tuple(int(i) for i in np.argwhere(~ok)[0])
        bound = "exactly" if exact else f"within atol={atol:g}, rtol={rtol:g}"
        raise AssertionError(
            f"{what}: {leaf} differs at position {list(at)}: {x[at].item()!r} vs expected {y[at].item()!r} "
            f"({int(np.sum(~ok))} of {ok.size} entries differ; largest difference {_largest(x, y)}; "
            f"required: equal {bound})"
        )


def _comparable(x: Any) -> np.ndarray:
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if np.issubdtype(x.dtype, np.inexact) else np.zeros(x.shape, bool)


def _largest(x: np.ndarray, y: np.ndarray) -> str:
    if x.dtype == bool or y.dtype == bool:
        return "n/a (booleans)"
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
    return f"{np.nanmax(diff):.3g}" if np.any(np.isfinite(diff)) else "not finite"


def assert_gradients_reach_every_parameter(grads: Any, what: str) -> None:
    leaves = parameter_leaves(grads)
    assert leaves, f"{what} has no parameters to check"
    for path, grad in leaves:
        assert bool(jnp.all(jnp.isfinite(grad))), f"{what}: gradient of {path} is not finite"
        assert bool(jnp.any(grad != 0)), f"{what}: parameter {path} gets no gradient"


def assert_domains_enforced(entry: Any, resolve: Any) -> None:
    """Every numeric hyperparameter of `entry` (a registry entry) declares a domain, and
    `resolve(**{key: value})` refuses values just outside each declared domain."""
    from zoo.errors import InvalidParameterError

    numeric = [k for k, v in entry.params.items() if isinstance(v, int | float | list) and not isinstance(v, bool)]
    undeclared = sorted(set(numeric) - set(entry.declared))
    assert not undeclared, (
        f"{entry.name!r}: hyperparameters {undeclared} declare no domain; declare each in the table's "
        '\'domains\', e.g. domains = { hidden_size = "[1, inf)", dropout = "[0, 1)" } (see zoo.domains)'
    )
    for key in sorted(entry.declared):
        for bad in entry.domains[key].outside():
            try:
                resolve(**{key: bad})
                message = None
            except InvalidParameterError as error:
                message = str(error)
            assert message is not None, f"{entry.name!r}: {key}={bad!r} lies outside its domain but was accepted"
            assert key in message, f"{entry.name!r}: the error for {key}={bad!r} does not name it: {message}"


class ConformanceTests:
    """Fixtures shared by every class of the kit (subclass a concrete one)."""

    _zoo_conformance: ClassVar[bool] = True
    zoo_kind: ClassVar[str | None] = None
    zoo_model_interface: ClassVar[type | None] = None  # model checks: only architectures of this type

    @pytest.fixture(scope="class")
    @classmethod
    def registry(cls):
        return kit_registry()

    @pytest.fixture
    def getkey(self):
        keys = iter(jax.random.split(jax.random.key(1234), 64))
        return lambda: next(keys)


class ComponentChecks(ConformanceTests):
    """What every component passes, whatever its kind."""

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    def test_plugin_loaded_through_entry_point(self, registry, entry):
        names = {ep.name for ep in discover_entry_points()}
        assert entry.plugin in names, f"plugin {entry.plugin!r} has no entry point in group zoo.plugins"
        record = registry.plugins[entry.plugin]
        assert record.ok, f"plugin {entry.plugin!r} is {record.status}: {record.error}"

    def test_factory_is_a_final_subclass_of_its_interface(self, entry):
        factory = import_factory(entry.factory, plugin=entry.plugin)
        interface = INTERFACES.get(entry.kind)
        if interface is None:
            pytest.skip(f"kind {entry.kind!r} has no interface in zoo")
        assert inspect.isclass(factory), f"{entry.factory} should be a class"
        assert issubclass(factory, interface), f"{entry.factory} is not a {interface.__name__}"
        assert not inspect.isabstract(factory), f"{entry.factory} leaves abstract methods unimplemented"

    def test_params_match_factory_signature(self, entry):
        factory = import_factory(entry.factory, plugin=entry.plugin)
        signature = inspect.signature(factory)
        accepted = set(signature.parameters)
        extra = sorted(set(entry.params) - accepted)
        assert not extra, f"registry params {extra} are not arguments of {entry.factory}"
        missing = sorted(WIRED.get(entry.kind, set()) - accepted)
        assert not missing, f"{entry.factory} must accept the wired arguments {missing}"
        clash = sorted(set(entry.params) & WIRED.get(entry.kind, set()))
        assert not clash, f"wired arguments {clash} must not be registry params"

    def test_hyperparameter_domains_are_declared_and_enforced(self, registry, entry):
        from zoo.builder import component_spec

        assert_domains_enforced(entry, lambda **params: component_spec(entry.name, registry=registry, **params))

    def test_names_round_trip(self, registry, entry):
        hosts = [a for a in registry.architectures.values() if any(s.kind == entry.kind for s in a.slots)]
        if not hosts:
            pytest.skip(f"no architecture has a {entry.kind} slot")
        for arch in hosts:
            fits = [s.name for s in arch.slots if s.kind == entry.kind]
            name = f"{arch.name}+{entry.name}" if len(fits) == 1 else f"{arch.name}+{fits[0]}={entry.name}"
            assert str(parse_name(name)) == name
            spec = registry.describe(name)
            assert registry.describe(spec.name) == spec, f"canonical name {spec.name!r} does not re-resolve"
            assert spec.slot(fits[0]).component == entry.name
