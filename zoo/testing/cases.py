"""Which components and models the kit tests for a set of plugins."""

from __future__ import annotations

from zoo.errors import ZooError
from zoo.registry import Registry

__all__ = ["component_cases", "model_cases"]


def component_cases(registry: Registry, plugins: list[str], kind: str | None) -> list[str]:
    """Components registered by `plugins` (of `kind`, if given), sorted."""
    return sorted(
        name
        for name, entry in registry.components.items()
        if entry.plugin in plugins and (kind is None or entry.kind == kind)
    )


def model_cases(registry: Registry, plugins: list[str]) -> list[str]:
    """Every architecture or preset of `plugins`, and every architecture with each
    component of `plugins` in the slot that takes it; deduplicated by canonical name."""
    wanted: list[str] = [n for n, a in registry.architectures.items() if a.plugin in plugins]
    for arch_name, arch in sorted(registry.architectures.items()):
        for component in component_cases(registry, plugins, None):
            kind = registry.components[component].kind
            fits = [s.name for s in arch.slots if s.kind == kind]
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


def _arch_test_params(registry: Registry, name: str) -> dict:
    from zoo.resolve import architecture_of

    return dict(architecture_of(registry, name).test)
