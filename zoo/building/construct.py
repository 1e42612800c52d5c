"""A resolved spec to a module: check its plugins are loaded, call its architecture factory.

`zoo.building.builder` calls it after resolving a name, `zoo.building.weights` after
reading a file's recorded spec; it resolves nothing itself but a recorded spec.
"""

from __future__ import annotations

from typing import Any

from zoo.data.vocab import Vocabularies
from zoo.errors import DataError, InvalidParameterError, PluginError, ZooError
from zoo.naming.registry import Registry, active_registry, building_with
from zoo.naming.spec import ModelSpec, import_factory

__all__ = ["build_from_spec", "check_available", "construct"]


def check_available(registry: Registry, spec: ModelSpec) -> None:
    """Raise `PluginError` if a plugin the spec needs is not loaded in `registry`."""
    needed = [(spec.arch, spec.plugin)] + [(s.component, s.plugin) for s in spec.slots]
    for name, plugin in needed:  # an empty slot needs no plugin (its plugin is None)
        if plugin is None:
            continue
        record = registry.plugins.get(plugin)
        if record is None or not record.ok:
            status = "not installed" if record is None else record.status
            detail = f": {record.error}" if record is not None and record.error else ""
            raise PluginError(f"{name!r} needs plugin {plugin!r}, which is {status}{detail}")


def build_from_spec(
    spec: ModelSpec | str, *, key: Any, vocabs: Vocabularies | None = None, registry: Registry | None = None
) -> Any:
    """Build the model a spec describes: a `ModelSpec`, or one recorded as JSON text.

    The spec is treated as data: it is resolved again from `registry` (default:
    the registry of the build in progress, else the process-wide one) by its
    names and parameter values (`zoo.building.recorded`), so only factories that an
    installed plugin registered are ever called.
    """
    from zoo.building.recorded import resolve_recorded

    registry = registry or active_registry()
    record = spec.to_json() if isinstance(spec, ModelSpec) else spec
    return construct(resolve_recorded(registry, record), key=key, vocabs=vocabs, registry=registry)


def construct(spec: ModelSpec, *, key: Any, vocabs: Vocabularies | None, registry: Registry) -> Any:
    """Call the architecture factory of a `spec` that `registry` resolved, after checking
    that the plugins it needs are loaded and each vocabulary has the size its hyperparameter says."""
    check_available(registry, spec)
    factory, params = import_factory(spec.factory, plugin=spec.plugin), spec.params
    vocabs = vocabs if vocabs is not None else Vocabularies()
    for role, size_param in spec.vocabularies:
        size = params.get(size_param)
        if role in vocabs and size is not None and size != len(vocabs[role]):
            raise DataError(f"{spec.name}: {size_param}={size} but the {role!r} vocabulary has {len(vocabs[role])}")
    with building_with(registry):
        try:
            return factory(spec, key=key, vocabs=vocabs)
        except ZooError:
            raise
        except ValueError as error:  # a plugin's own check of how its hyperparameters combine
            raise InvalidParameterError(f"{spec.name!r} cannot be built with these hyperparameters: {error}") from error
