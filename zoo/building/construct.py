"""A resolved spec to a module: check its plugins are loaded, call its architecture factory.

`zoo.building.builder` calls it after resolving a name, `zoo.building.weights` after
reading a file's recorded spec; it resolves nothing itself but a recorded spec.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from zoo.data.vocab import Vocabularies
from zoo.errors import DataError, InvalidParameterError, PluginError, ZooError
from zoo.naming.registry import Registry, active_registry, building_with
from zoo.naming.spec import ModelSpec, import_factory

__all__ = ["build_from_spec", "check_available", "construct"]

_SCREEN_SIZE = 4096  # a spec whose sizes are all below this builds well under the budget: no estimate


def _sizes(record: Any) -> Iterator[int]:
    if isinstance(record, dict):
        for value in record.values():
            yield from _sizes(value)
    elif isinstance(record, list):
        for value in record:
            yield from _sizes(value)
    elif isinstance(record, int) and not isinstance(record, bool):
        yield record


def _check_parameter_memory(spec: ModelSpec, make: Callable[[Any], Any], key: Any) -> None:
    """Refuse a model whose parameters would pass the memory budget (`zoo.budget`), before any is drawn.

    The factory runs abstractly first (``eqx.filter_eval_shape``: shapes, no memory) when a size
    in the spec (a hyperparameter, a vocabulary) is large enough to matter; a factory that cannot
    run abstractly is left to build as it would. Nothing is checked inside an abstract build
    (a caller's own ``filter_eval_shape``: it allocates nothing).
    """
    import equinox as eqx
    import jax
    import numpy as np

    from zoo.budget import check_memory

    if isinstance(key, jax.core.Tracer) or max(_sizes(json.loads(spec.to_json())), default=0) < _SCREEN_SIZE:
        return
    try:
        shapes = eqx.filter_eval_shape(make, key)
    except ZooError:
        raise
    except Exception:
        return
    leaves = [x for x in jax.tree_util.tree_leaves(shapes) if isinstance(x, jax.ShapeDtypeStruct)]
    total = sum(int(np.prod(x.shape, dtype=np.float64)) * np.dtype(x.dtype).itemsize for x in leaves)
    largest = max(leaves, key=lambda x: np.prod(x.shape, dtype=np.float64), default=None)
    shape = "" if largest is None else f"; the largest array {' x '.join(map(str, largest.shape))} {largest.dtype}"
    check_memory(total, f"the parameters of {spec.name!r} ({len(leaves)} arrays{shape})", model=True)


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
            _check_parameter_memory(spec, lambda k: factory(spec, key=k, vocabs=vocabs), key)
            return factory(spec, key=key, vocabs=vocabs)
        except ZooError:
            raise
        except ValueError as error:  # a plugin's own check of how its hyperparameters combine
            raise InvalidParameterError(f"{spec.name!r} cannot be built with these hyperparameters: {error}") from error
