"""Which components and models the kit tests for a set of plugins."""

from __future__ import annotations

from zoo.errors import ZooError
from zoo.naming.registry import Registry
from zoo.naming.spec import import_factory

__all__ = ["component_cases", "model_cases"]


def component_cases(registry: Registry, plugins: list[str], kind: str | None) -> list[str]:
    """Components registered by `plugins` (of `kind`, if given), sorted."""
    return sorted(
        name
        for name, entry in registry.components.items()
        if entry.plugin in plugins and (kind is None or entry.kind == kind)
    )


def model_cases(
    registry: Registry, plugins: list[str], interface: type | None = None, *, every_host: bool = False
) -> list[str]:
    """Every architecture or preset of `plugins`, and each component of `plugins`
    in a model whose slot takes it; deduplicated by canonical name.

    A component goes into one host architecture (its own plugin's if it has
    one, else the first by name), or with `every_host` into every architecture
    that takes it (the full matrix: slower, for release checks).
    With `interface`, only architectures whose class subclasses it (a factory
    that is a function, not a class, is kept: its checks decide when built).
    """
    architectures = {name: arch for name, arch in registry.architectures.items() if _may_be(arch, interface)}
    wanted: list[str] = [n for n, a in architectures.items() if a.plugin in plugins]
    for component in component_cases(registry, plugins, None):
        entry = registry.components[component]
        hosts = sorted(
            (arch.plugin != entry.plugin, name)
            for name, arch in architectures.items()
            if any(s.kind == entry.kind for s in arch.slots)
        )
        for _, arch_name in hosts if every_host else hosts[:1]:
            fits = [s.name for s in architectures[arch_name].slots if s.kind == entry.kind]
            if len(fits) == 1:
                wanted.append(f"{arch_name}+{component}")
            else:
                wanted += [f"{arch_name}+{slot}={component}" for slot in fits]
    seen: dict[str, str] = {}
    for name in wanted:
        try:
            canonical = registry.describe(name, **_arch_test_params(registry, name)).name
        except ZooError:
            canonical = name  # the model check reports the error
        seen.setdefault(canonical, name)
    return sorted(seen.values())


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


def _arch_test_params(registry: Registry, name: str) -> dict:
    from zoo.naming.resolve import architecture_of

    return dict(architecture_of(registry, name).test)
