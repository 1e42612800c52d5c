"""Shared fixtures and helpers of the kit, and the checks every component passes."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.interfaces import KINDS
from zoo.naming.loader import discover_entry_points
from zoo.naming.names import parse_name
from zoo.naming.spec import import_factory
from zoo.testing.session import kit_registry, watch_config

__all__ = [
    "INTERFACES",
    "WIRED",
    "ComponentChecks",
    "ConformanceTests",
    "Constant",
    "assert_configuration_unchanged",
    "build_component",
    "assert_domains_enforced",
    "assert_dtype",
    "assert_gradients_reach_every_parameter",
    "assert_parameters_from_key",
    "assert_shapes_follow_the_spec",
    "assert_same_arrays",
    "assert_trees_close",
    "declared_dtype",
    "numeric_constants",
    "parameter_leaves",
    "plugin_modules",
    "traced_shapes",
    "untraceable_reason",
]

INTERFACES: dict[str, type] = {kind: entry.interface for kind, entry in KINDS.items()}
"""Component kind -> the interface its factory must subclass (`zoo.interfaces.KINDS`)."""

WIRED: dict[str, set[str]] = {kind: set(entry.wired) for kind, entry in KINDS.items()}
"""Component kind -> the arguments an architecture passes its factory (`zoo.interfaces.KINDS`)."""


def parameter_leaves(module: Any) -> list[tuple[str, jax.Array]]:
    """``(path, array)`` of every floating-point array in `module`."""
    from zoo.building.weights import array_paths

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


def assert_same_arrays(a: Any, b: Any, *, what: str) -> None:
    """Every array of `a` equals `b`'s at the same path, exactly (static fields, such as a
    dropout rate, may differ: only the arrays are compared)."""
    from zoo.building.weights import array_paths

    assert_trees_close(dict(array_paths(a)), dict(array_paths(b)), exact=True, what=what)


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
        '\'domains\', e.g. domains = { hidden_size = "[1, inf)", dropout = "[0, 1)" } (see zoo.naming.domains)'
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


def assert_parameters_from_key(a: Any, b: Any, *, what: str) -> None:
    """Every parameter leaf depends on the key: `a` and `b` are the same component or model built
    from two different keys, and each floating-point leaf differs between them unless it is a
    constant (at most two distinct values: zeros, ones, a fill, a gate bias of 0s and -1s, an
    identity). `what` names the subject, e.g.
    ``"attention 'x'"``; the message names the contract and the leaf.

    Shared by the kit's component checks (`zoo.testing.components`) and model checks
    (`zoo.testing.models`): call it with the two builds a key check already has.
    """
    for (path, x), (_, y) in zip(parameter_leaves(a), parameter_leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if np.unique(x).size <= 2:
            continue  # a constant: nothing to draw
        assert not np.array_equal(x, y), (
            f"parameters from the key of {what}: parameter {path} is the same for two different keys and is "
            "not a constant such as zeros or ones (drawn from a fixed key such as jax.random.key(0), or from "
            "NumPy's generator?); draw every parameter from the `key` argument (jax.random.split it)"
        )


def untraceable_reason(error: BaseException) -> str:
    """Why a constructor cannot run on a traced key (`eqx.filter_eval_shape`), in words."""
    if isinstance(error, jax.errors.TracerArrayConversionError):
        return (
            "it converts a traced array to NumPy (np.asarray, np.array or NumPy maths on the key or on "
            "arrays drawn from it); draw and transform parameters with jax.random and jax.numpy"
        )
    if isinstance(error, jax.errors.ConcretizationTypeError | jax.errors.TracerIntegerConversionError):
        return (
            "it needs a concrete value of an array drawn from the key (float(), int(), bool(), an `if` "
            "or a shape computed from it); shapes must follow from the hyperparameters alone"
        )
    return "it fails on a traced key"


def traced_shapes(make: Callable[[Any], Any], *, what: str) -> Any:
    """``eqx.filter_eval_shape(make, key)``: the structure `make(key)` builds, with `ShapeDtypeStruct`
    leaves, as `zoo.load` builds a model before reading its file; a constructor that cannot be traced
    fails with the contract, `what` (the subject) and why."""
    try:
        return eqx.filter_eval_shape(make, jax.random.key(0))
    except Exception as error:  # any failure of a plugin's constructor is the finding
        first = (str(error).splitlines() or [""])[0]
        pytest.fail(
            f"traceable __init__ of {what}: building it under eqx.filter_eval_shape (as zoo.load does before "
            f"it reads a file) raises {type(error).__name__}: {untraceable_reason(error)}. First line: {first}",
            pytrace=False,
        )


def declared_dtype(module: Any, *params: Mapping[str, Any]) -> Any:
    """float32, unless the subject declares a `dtype` (a field of `module`, or one of `params`)."""
    declared = getattr(module, "dtype", None) or next((p["dtype"] for p in params if p.get("dtype")), None)
    return jnp.dtype(declared or jnp.float32)


def assert_dtype(tree: Any, want: Any, *, what: str, role: str = "parameter") -> int:
    """Every floating-point array of `tree` is of dtype `want`; return how many there are.

    `what` names the contract and subject (``"float32 parameters of attention 'x'"``), `role`
    the leaves (``"parameter"``, ``"output"``)."""
    from zoo.building.weights import array_paths

    floats = [(p, a) for p, a in array_paths(tree) if jnp.issubdtype(a.dtype, jnp.inexact)]
    for path, leaf in floats:
        assert leaf.dtype == want, (
            f"{what}: {role} {path or '(the array)'} is {leaf.dtype}, expected {jnp.dtype(want)} "
            "(declare a `dtype` field or hyperparameter for another precision)"
        )
    return len(floats)


# -- shapes determined by the spec alone ------------------------------------------------------

_NOT_PLUGINS = frozenset({"zoo", "jax", "jaxlib", "equinox", "numpy", "jaxtyping", "optax", "numba", "scipy"})


def plugin_modules(*objects: Any) -> list[ModuleType]:
    """The modules, outside zoo's core, JAX, Equinox, NumPy and the standard library, that define
    `objects` (classes, functions, partials) or the classes of the modules in them (walked
    through their fields, static ones included), with their base classes."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = list(objects)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, jax.Array | np.ndarray | str | int | float):
            continue
        seen.add(id(obj))
        if isinstance(obj, functools.partial):
            stack += [obj.func, *obj.args, *obj.keywords.values()]
        elif inspect.isclass(obj):
            names.update(c.__module__ for c in obj.__mro__)
        elif inspect.isfunction(obj) or inspect.ismethod(obj):
            names.add(obj.__module__)
        elif isinstance(obj, eqx.Module):
            stack.append(type(obj))
            stack += [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
        elif isinstance(obj, list | tuple):
            stack += list(obj)
        elif isinstance(obj, Mapping):
            stack += list(obj.values())
    tops = _NOT_PLUGINS | set(sys.stdlib_module_names)
    return [sys.modules[n] for n in sorted(names) if n.split(".")[0] not in tops and n in sys.modules]


@dataclasses.dataclass(frozen=True)
class Constant:
    """A number a plugin's code holds outside the spec: a module's top-level name, or the default
    of a factory's argument (`owner` is the module or the function)."""

    owner: Any
    name: str
    value: int | float

    def __str__(self) -> str:
        if isinstance(self.owner, ModuleType):
            return f"the module constant {self.owner.__name__}.{self.name} = {self.value!r}"
        return f"the default {self.name}={self.value!r} of {self.owner.__qualname__}"

    def set(self, value: int | float) -> None:
        if isinstance(self.owner, ModuleType):
            setattr(self.owner, self.name, value)
        elif self.name in (self.owner.__kwdefaults__ or {}):
            self.owner.__kwdefaults__ = {**self.owner.__kwdefaults__, self.name: value}
        else:
            positional = _argument_defaults(self.owner, keywords=False)
            self.owner.__defaults__ = tuple(value if n == self.name else d for n, d in positional.items())


def _argument_defaults(function: Any, *, keywords: bool = True) -> dict[str, Any]:
    """``{argument: default}`` of `function` (positional ones in order, then keyword-only ones)."""
    values = function.__defaults__ or ()
    names = function.__code__.co_varnames[: function.__code__.co_argcount]
    positional = dict(zip(names[len(names) - len(values) :], values, strict=True))
    return {**positional, **(function.__kwdefaults__ or {})} if keywords else positional


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and 0 < value < float("inf")


def numeric_constants(modules: Iterable[ModuleType], factories: Iterable[Any] = ()) -> list[Constant]:
    """Every positive int or float `modules` hold at their top level (but those imported from zoo's
    core: a name zoo's modules bind to the same value, such as `zoo.data.chars.NUM_CHARS`, is one of
    zoo's own formats, fixed by zoo's version), and every numeric default of the arguments of
    `factories` (classes: their ``__init__``)."""
    core = {
        (name, value)
        for mod_name, mod in list(sys.modules.items())
        if mod_name.split(".")[0] == "zoo" and mod is not None
        for name, value in vars(mod).items()
        if type(value) in (int, float)
    }
    found = [
        Constant(module, name, value)
        for module in modules
        for name, value in vars(module).items()
        if _is_number(value) and not name.startswith("__") and (name, value) not in core
    ]
    for factory in factories:
        function = getattr(factory, "__init__", None) if inspect.isclass(factory) else factory
        if not inspect.isfunction(function):
            continue
        defaults = _argument_defaults(function)
        found += [Constant(function, name, value) for name, value in defaults.items() if _is_number(value)]
    return found


@contextlib.contextmanager
def _perturbed(constants: list[Constant]) -> Iterator[None]:
    """Each constant at ``2 v + 1`` for the duration."""
    for constant in constants:
        constant.set(2 * constant.value + 1)
    try:
        yield
    finally:
        for constant in constants:
            constant.set(constant.value)


def _shapes(tree: Any) -> dict[str, tuple]:
    from zoo.building.weights import array_paths

    return {path: (tuple(leaf.shape), str(leaf.dtype)) for path, leaf in array_paths(tree)}


def _first_difference(before: dict[str, tuple], after: dict[str, tuple]) -> str | None:
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            was, now = before.get(path, "absent"), after.get(path, "absent")
            return f"{path or '(the array)'} becomes {now} instead of {was}"
    return None


def assert_shapes_follow_the_spec(
    make: Callable[[Any], Any], built: Any, *, what: str, factories: Iterable[Any] = ()
) -> int:
    """The shapes `make(key)` builds depend on the spec alone, not on a number held in code.

    Each `numeric_constants` of the plugin modules of `built` and `factories` (see `plugin_modules`),
    and of the factories' argument defaults, is set to ``2 v + 1`` while the structure is rebuilt
    under `eqx.filter_eval_shape` (all at once; one at a time to name the culprit); a leaf whose
    shape or dtype changes fails, naming the constant to register as a hyperparameter. (A registered
    hyperparameter is passed to the factory explicitly, so its default never matters.) Returns how
    many constants were perturbed (0: nothing to perturb; the caller should skip).
    """
    factories = list(factories)
    constants = numeric_constants(plugin_modules(built, *factories), factories)
    if not constants:
        return 0
    reference = _shapes(traced_shapes(make, what=what))

    def change(subset: list[Constant]) -> str | Exception | None:
        with _perturbed(subset):
            try:
                return _first_difference(reference, _shapes(eqx.filter_eval_shape(make, jax.random.key(0))))
            except Exception as error:  # the build refuses the perturbed value: no finding here
                return error

    if change(constants) is None:
        return len(constants)
    for constant in constants:
        difference = change([constant])
        if isinstance(difference, str):
            raise AssertionError(
                f"shapes determined by the spec alone, {what}: with the same spec, {difference} when {constant} "
                f"is {2 * constant.value + 1!r}. A release that changes it cannot load the files saved now: "
                "register it as a hyperparameter (the table's params, with a domain) and pass it to the factory"
            )
    return len(constants)


def assert_configuration_unchanged(plugins: Iterable[str], *, what: str) -> None:
    """JAX's global configuration is as it was before the plugins loaded: no plugin of `plugins`
    changed it (loading, importing a factory or building, as `zoo.testing.session.watch_config`
    recorded), and nothing since the kit started has left it changed. `what` names the subject."""
    from zoo.testing.session import _REGISTRY, _restore, config_changes

    def listed(changed) -> str:
        return ", ".join(f"{flag} {old!r} -> {new!r}" for flag, (old, new) in sorted(changed.items()))

    advice = (
        "every model built after it in the process would change (float64 parameters whose files other "
        "processes cannot load, say); a plugin must leave jax.config to the program that uses it"
    )
    for plugin in sorted(set(plugins)):
        for action, changed in config_changes(plugin):
            raise AssertionError(
                f"JAX's global configuration unchanged, {what}: plugin {plugin!r} changed it when {action}: "
                f"{listed(changed)}; {advice}"
            )
    drift = _restore(_REGISTRY["config"]) if "config" in _REGISTRY else {}
    assert not drift, (
        f"JAX's global configuration unchanged, {what}: it has changed since the kit started, before this "
        f"check (by an import or build of the plugins checked so far): {listed(drift)}; {advice}"
    )


class ConformanceTests:
    """Fixtures shared by every class of the kit (subclass a concrete one)."""

    _zoo_conformance: ClassVar[bool] = True
    zoo_kind: ClassVar[str | None] = None
    zoo_model_interface: ClassVar[type | None] = None  # model checks: only architectures of this type
    component: ClassVar[str | None] = None  # check only this component (models: those hosting it, or this model)

    @pytest.fixture(scope="class")
    @classmethod
    def registry(cls):
        return kit_registry()

    @pytest.fixture
    def getkey(self):
        keys = iter(jax.random.split(jax.random.key(1234), 64))
        return lambda: next(keys)


_KIND_CHECKS = {
    "embedder": "zoo.testing.components:EmbedderTests",
    "cell": "zoo.testing.components:CellTests",
    "encoder": "zoo.testing.components:EncoderTests",
    "attention": "zoo.testing.attention:AttentionTests",
}
"""Kind -> the kit class whose `make(registry, entry, key)` builds a component of it."""


def build_component(registry: Any, entry: Any, key: Any) -> Any:
    """`entry` built as its kind's checks build it (`_KIND_CHECKS`); a strategy is built without a
    key; a kind the kit builds only inside its host model (a decoder) is imported, and None returned."""
    if entry.kind == "strategy":
        from zoo.building.builder import component_spec

        return component_spec(entry.name, kind="strategy", registry=registry, **entry.test).build()
    if entry.kind not in _KIND_CHECKS:
        import_factory(entry.factory, plugin=entry.plugin)
        return None
    return import_factory(_KIND_CHECKS[entry.kind]).make(registry, entry, key)


class ComponentChecks(ConformanceTests):
    """What every component passes, whatever its kind."""

    @pytest.fixture(scope="class")
    @classmethod
    def entry(cls, registry, zoo_component):
        return registry.component(zoo_component)

    def test_jax_configuration_is_unchanged(self, registry, entry):
        """Loading the plugin, importing the factory and building leave `jax.config` as it was
        (first: a changed configuration would fail other checks for the wrong reason)."""
        building = watch_config(entry.plugin, f"importing and building {entry.name!r}")
        with building, contextlib.suppress(Exception):  # a factory that fails to build fails its own checks
            build_component(registry, entry, jax.random.key(0))
        assert_configuration_unchanged([entry.plugin], what=f"{entry.kind} {entry.name!r}")

    def test_plugin_loaded_through_entry_point(self, registry, entry):
        names = {ep.name for ep in discover_entry_points()}
        assert entry.plugin in names, f"plugin {entry.plugin!r} has no entry point in group zoo.plugins"
        record = registry.plugins[entry.plugin]
        assert record.ok, f"plugin {entry.plugin!r} is {record.status}: {record.error}"

    def test_factory_is_a_final_subclass_of_its_interface(self, entry):
        factory = import_factory(entry.factory, plugin=entry.plugin)
        interface = INTERFACES[entry.kind]  # registration refuses any other kind
        contract = f"a {entry.kind}'s factory must be a final (concrete) subclass of zoo.{interface.__name__}"
        assert inspect.isclass(factory), f"{entry.factory} is a {type(factory).__name__}, not a class: {contract}"
        assert issubclass(factory, interface), f"{entry.factory} does not subclass zoo.{interface.__name__}: {contract}"
        abstract = sorted(getattr(factory, "__abstractmethods__", ()))
        assert not abstract, f"{entry.factory} leaves {', '.join(abstract)} unimplemented: {contract}"

    def test_params_match_factory_signature(self, entry):
        factory = import_factory(entry.factory, plugin=entry.plugin)
        signature = inspect.signature(factory)
        accepted = set(signature.parameters)
        extra = sorted(set(entry.params) - accepted)
        assert not extra, (
            f"registry params {extra} are not arguments of {entry.factory}: the factory must take every "
            "hyperparameter its table registers, by name"
        )
        missing = sorted(WIRED[entry.kind] - accepted)
        assert not missing, f"{entry.factory} must accept the arguments every {entry.kind} is built with: {missing}"
        clash = sorted(set(entry.params) & WIRED[entry.kind])
        assert not clash, f"{clash} are wired in by the host architecture; they cannot also be registry params"

    def test_hyperparameter_domains_are_declared_and_enforced(self, registry, entry):
        from zoo.building.builder import component_spec

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

    def test_shapes_follow_the_spec(self, registry, entry):
        """Its shapes come from its hyperparameters, not from a constant of its plugin's modules."""
        if entry.kind not in _KIND_CHECKS:
            pytest.skip(f"a {entry.kind} has no parameter shapes checked on its own (see its host model)")

        def make(key):
            return build_component(registry, entry, key)

        try:
            eqx.filter_eval_shape(make, jax.random.key(0))
        except Exception:  # its traceable-__init__ check reports it
            pytest.skip("it cannot be built under eqx.filter_eval_shape: its traceable-__init__ check says why")
        factory = import_factory(entry.factory, plugin=entry.plugin)
        perturbed = assert_shapes_follow_the_spec(
            make, make(jax.random.key(0)), what=f"{entry.kind} {entry.name!r}", factories=[factory]
        )
        if not perturbed:
            modules = [m.__name__ for m in plugin_modules(factory)]
            pytest.skip(f"no number held in code (a module constant, an argument default) in {modules}")
