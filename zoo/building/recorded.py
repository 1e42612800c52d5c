"""Specs recorded as data: a file's ``zoo.spec``, a nested spec in a parameter.

A recorded spec is never trusted. `resolve_recorded` reads only names (the
architecture, the preset, each slot's component, the tag) and parameter
values from it; factories and plugins come from the installed registry's
entries of those names, and every value is checked against the installed
entry's declared parameters and domains exactly as `zoo.build` checks an
override. The ``factory`` and ``plugin`` strings a record carries are ignored,
so nothing in a record can make zoo import a module or call anything that an
installed plugin did not register.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zoo.errors import RecordError, UnknownNameError
from zoo.naming.names import IDENTIFIER
from zoo.naming.resolve import _assign, _canonical, _expand, _look_up, _Params, make_spec
from zoo.naming.spec import NONE, ModelSpec
from zoo.naming.tables import ArchitectureEntry, ComponentEntry

if TYPE_CHECKING:
    from zoo.naming.registry import Registry

__all__ = ["resolve_recorded"]

_SPEC_KEYS = {"name", "arch", "factory", "plugin", "params", "slots", "vocabularies", "preset", "tag"}
_SLOT_KEYS = {"slot", "kind", "component", "factory", "plugin", "params"}
_VALUE_TYPES = (bool, int, float, str)


def _unknown(error: UnknownNameError, plugin: Any) -> UnknownNameError:
    """`error`, plus the plugin the record says provides the name (data, only quoted)."""
    if not isinstance(plugin, str) or not plugin:
        return error
    return UnknownNameError(
        f"{error} The record says plugin {plugin[:80]!r} provides it: install it (zoo plugins lists what is installed)"
    )


def _fail(message: str) -> RecordError:
    return RecordError(f"the recorded model spec is malformed: {message}")


def _name(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise _fail(f"{what} must be a name (lowercase letters, digits, '-', '_'), got {value!r}")
    return value


def _value(value: Any, where: str, depth: int = 0) -> Any:
    if isinstance(value, _VALUE_TYPES):
        return value
    if isinstance(value, list) and depth < 2:
        return [_value(v, where, depth + 1) for v in value]
    raise _fail(f"parameter {where} must be a number, a string, a boolean or a list of them, got {value!r:.80}")


def _params(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(f"{where} must be an object, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(f"{where} has a non-string key {key!r}")
    return {key: _value(v, f"{where}.{key}") for key, v in value.items()}


def _keys(data: Any, allowed: set[str], where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise _fail(f"{where} must be an object, got {type(data).__name__}")
    unknown = sorted(str(k) for k in set(data) - allowed)
    if unknown:
        raise _fail(f"{where} has unknown keys {unknown}")
    return data


def _slots(
    records: Any, arch: ArchitectureEntry, registry: Registry, known: dict[str, ComponentEntry]
) -> tuple[dict[str, str], dict[str, dict]]:
    """The recorded component of each slot, checked against the installed architecture (entries into `known`)."""
    if not isinstance(records, list):
        raise _fail(f"'slots' must be a list, got {type(records).__name__}")
    recorded: dict[str, Mapping[str, Any]] = {}
    for i, record in enumerate(records):
        record = _keys(record, _SLOT_KEYS, f"slots[{i}]")
        slot = _name(record.get("slot"), f"slots[{i}].slot")
        if slot in recorded:
            raise _fail(f"slot {slot!r} is recorded twice")
        recorded[slot] = record
    expected = [s.name for s in arch.slots]
    if sorted(recorded) != sorted(expected):
        raise RecordError(
            f"the recorded slots {sorted(recorded)} are not those of the installed architecture "
            f"{arch.name!r} ({sorted(expected)}): the file was written by another version of its plugin"
        )
    components, params = {}, {}
    for slot in arch.slots:
        record = recorded[slot.name]
        component = _name(record.get("component"), f"slot {slot.name!r}'s component")
        if component == NONE:
            if not slot.optional:
                raise RecordError(f"slot {slot.name!r} of {arch.name!r} cannot be empty, but the record leaves it so")
        else:
            try:
                where = f"{arch.name}+{slot.name}={component}"
                _assign(registry, arch, components, (slot.name, component), where, known)
            except UnknownNameError as error:
                raise _unknown(error, record.get("plugin")) from None
        components[slot.name] = component
        params[slot.name] = _params(record.get("params", {}), f"{slot.name}.params")
    return components, params


def resolve_recorded(registry: Registry, record: str | Mapping[str, Any]) -> ModelSpec:
    """Rebuild a recorded spec (JSON text or its parsed object) from `registry` alone.

    Raises `RecordError` for a malformed record, and the errors `zoo.build`
    raises for unknown names (`UnknownNameError`, `PluginError`) and for
    parameters of the wrong type or outside their domain.
    """
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except (json.JSONDecodeError, RecursionError) as error:
            raise _fail(f"not valid JSON: {error}") from None
    record = _keys(record, _SPEC_KEYS, "the spec")
    try:
        arch = registry.model(_name(record.get("arch"), "'arch'"))
    except UnknownNameError as error:
        raise _unknown(error, record.get("plugin")) from None
    if not isinstance(arch, ArchitectureEntry):
        raise RecordError(f"{arch.name!r} is a preset; a recorded spec names its architecture in 'arch'")
    preset = _name(record.get("preset"), "'preset'", optional=True)
    tag = _name(record.get("tag"), "'tag'", optional=True)
    base_slots = {s.name: s.default for s in arch.slots}
    known: dict[str, ComponentEntry] = {}
    if preset is not None:
        expanded, parts, _ = _expand(registry, preset)
        if expanded.name != arch.name:
            raise RecordError(f"preset {preset!r} builds {expanded.name!r}, but the record says {arch.name!r}")
        for part in parts:
            _assign(registry, arch, base_slots, part, preset, known)
    slots, slot_params = _slots(record.get("slots", []), arch, registry, known)
    _look_up(registry, slots, known)
    params = _Params(arch, slots, known, hint=False)
    params.apply_top(_params(record.get("params", {}), "params"))
    for slot, values in slot_params.items():
        params.apply_scoped(slot, values, strict=True)
    name = _canonical(preset or arch.name, params, base_slots)
    return make_spec(arch, params, name=name, preset=preset, tag=tag)
