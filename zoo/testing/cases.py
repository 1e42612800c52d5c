"""Which components and models the kit tests for a set of plugins."""

from __future__ import annotations

from zoo.errors import ZooError
from zoo.naming.registry import Registry
from zoo.naming.spec import import_factory

__all__ = [
    "build_case",
    "case_params",
    "case_subject",
    "component_cases",
    "host_refusal",
    "hosted",
    "model_cases",
]


def component_cases(registry: Registry, plugins: list[str], kind: str | None) -> list[str]:
    """Components registered by `plugins` (of `kind`, if given), sorted."""
    return sorted(
        name
        for name, entry in registry.components.items()
        if entry.plugin in plugins and (kind is None or entry.kind == kind)
    )


def model_cases(
    registry: Registry,
    plugins: list[str],
    interface: type | None = None,
    *,
    every_host: bool = False,
    hosts: list[str] | None = None,
) -> list[str]:
    """Every architecture or preset of `plugins`, and each component of `plugins`
    in the models whose slots take it; deduplicated by canonical name.

    Which hosts (architectures) a component goes into: with `hosts`, those that take its kind;
    else a third-party component goes into every built-in architecture that takes its kind and
    its own plugin's (a host's fixed sizes must not decide whether a correct component passes),
    and a built-in one into one (its own plugin's if it has one, else the first by name), or
    with `every_host` into every one (the full matrix: slower, for release checks). A host with
    several slots of the kind takes it in each (``arch+slot=component``).
    With `interface`, only architectures whose class subclasses it (a factory
    that is a function, not a class, is kept: its checks decide when built).
    """
    from zoo.naming.catalogue import catalogue

    built_in = catalogue().plugins()
    architectures = {name: arch for name, arch in registry.architectures.items() if _may_be(arch, interface)}
    wanted: list[str] = [n for n, a in architectures.items() if a.plugin in plugins]
    for component in component_cases(registry, plugins, None):
        entry = registry.components[component]
        takers = sorted(
            (arch.plugin != entry.plugin, name)
            for name, arch in architectures.items()
            if any(s.kind == entry.kind for s in arch.slots)
        )
        if hosts is not None:
            chosen = [name for _, name in takers if name in hosts]
        elif every_host or entry.plugin not in built_in:
            chosen = [name for _, name in takers if architectures[name].plugin in built_in | {entry.plugin}]
        else:
            chosen = [name for _, name in takers[:1]]
        for arch_name in chosen:
            fits = [s.name for s in architectures[arch_name].slots if s.kind == entry.kind]
            if len(fits) == 1:
                wanted.append(f"{arch_name}+{component}")
            else:
                wanted += [f"{arch_name}+{slot}={component}" for slot in fits]
    seen: dict[str, str] = {}
    for name in wanted:
        try:
            canonical = registry.describe(name, **case_params(registry, name)).name
        except ZooError:
            canonical = name  # the model check reports the error
        seen.setdefault(canonical, name)
    return sorted(seen.values())


def hosted(registry: Registry, name: str) -> tuple[str, str, str] | None:
    """``(architecture, slot, component)`` of a model case ``arch+component`` or
    ``arch+slot=component`` (the component in the case's last part); None for a plain model."""
    from zoo.naming.names import parse_name
    from zoo.naming.resolve import architecture_of

    parsed = parse_name(name)
    if not parsed.parts:
        return None
    slot, component = parsed.parts[-1]
    entry = registry.components.get(component)
    if entry is None:
        return None
    arch = architecture_of(registry, name)
    if slot is None:
        slot = next((s.name for s in arch.slots if s.kind == entry.kind), None)
    return (arch.name, slot, component) if slot is not None else None


def case_params(registry: Registry, name: str) -> dict:
    """The hyperparameters the kit builds model case `name` with: its architecture's `test`
    values and, for a hosted component, its own `test` value (``slot.param``) of each
    hyperparameter the host fixes for that slot (``[architectures.A.params.SLOT]``): where the two
    conflict, the component's value wins (a host's sizes must not fail a correct component)."""
    from zoo.naming.resolve import architecture_of

    params = dict(architecture_of(registry, name).test)
    where = hosted(registry, name)
    if where is not None:
        arch, slot, component = where
        fixed = registry.architectures[arch].scoped.get(slot, {})
        entry = registry.components[component]
        params |= {f"{slot}.{key}": value for key, value in entry.test.items() if key in fixed}
        own = {**entry.params, **entry.test}
        for param, of in entry.multiples.items():  # a declared multiple: the host fixes one, both are the component's
            if {param, of} & set(fixed):
                params |= {f"{slot}.{key}": own[key] for key in (param, of)}
    return params


def _may_be(arch, interface: type | None) -> bool:
    """Whether `arch`'s factory may build an `interface` (imported under the kit's watch on JAX's configuration)."""
    if interface is None:
        return True
    from zoo.testing.session import watch_config

    try:
        with watch_config(arch.plugin, f"importing {arch.factory!r}"):
            made = import_factory(arch.factory)
    except Exception:  # an unimportable factory fails its own model checks
        return True
    return not isinstance(made, type) or issubclass(made, interface)


def host_refusal(registry: Registry, name: str, error: BaseException) -> str | None:
    """Why model case `name` failing to build with `error` is its host's limit rather than a fault
    of the component it hosts (None when it may be the component's): the error is one of a
    hyperparameter that does not fit (`InvalidParameterError`), and the component builds on its
    own with its `test` values (a decoder, which the kit builds only in a host, never qualifies)."""
    from zoo.errors import InvalidParameterError

    where = hosted(registry, name)
    if where is None or not isinstance(error, InvalidParameterError):
        return None
    arch, slot, component = where
    entry = registry.components[component]
    if entry.kind == "decoder":
        return None
    try:
        import jax

        from zoo.testing.base import build_component

        build_component(registry, entry, jax.random.key(0))
    except Exception:  # it fails on its own too: its own checks say why, and this one is not the host's
        return None
    fixed = {k: v for k, v in registry.architectures[arch].scoped.get(slot, {}).items() if k in entry.params}
    return (
        f"host {arch!r} cannot take {entry.kind} {component!r} in its slot {slot!r} "
        f"(the host fixes {fixed or 'no size of it'}; its test values {dict(entry.test) or 'none'} apply): "
        f"{error}. {component!r} builds on its own, so this is the host's limit, not a fault of {component!r}; "
        "it is checked in the other hosts (zoo check NAME --host ARCH picks one)"
    )


def build_case(registry: Registry, name: str, params: dict, make):
    """`make()` (the model of case `name` built with `params`), a host's refusal made a skip that says so."""
    import pytest

    try:
        return make()
    except Exception as error:
        reason = host_refusal(registry, name, error)
        if reason is None:
            raise
        pytest.skip(reason)


def case_subject(name: str, what: str = "model") -> str:
    """How messages name model case `name`: ``model 'arch'``, or for a hosted component
    ``model 'arch+part' (component 'c' in host 'arch')``."""
    if "+" not in name:
        return f"{what} {name!r}"
    arch, part = name.split("+", 1)[0], name.rsplit("+", 1)[-1].rsplit("=", 1)[-1]
    return f"{what} {name!r} ({part!r} in host {arch!r})"
