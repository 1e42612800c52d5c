"""Resolve a composite name plus overrides into a `ModelSpec`, in one walk.

Resolution reads tables and imports no registry: it takes any `Lookup` (a
`zoo.naming.registry.Registry` is one, and holds the tables), follows the
presets once (their bases were parsed when their table was read), looks each
component up once, and carries the entries it found to the spec.

Merge order: component defaults < architecture (scoped) defaults < preset
params < overrides. An unscoped override (``hidden_size=64``) sets the
architecture parameter of that name and the parameter of every slot component
that declares it; a scoped override (``encoder.hidden_size=64``) sets one slot
and wins over unscoped ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from zoo.errors import (
    InvalidParameterError,
    NameSyntaxError,
    RegistryError,
    UnknownNameError,
    UnknownParameterError,
    close_matches,
)
from zoo.naming.domains import Domain
from zoo.naming.names import ParsedName, parse_name
from zoo.naming.spec import NONE, ModelSpec, SlotSpec
from zoo.naming.tables import ArchitectureEntry, ComponentEntry, PresetEntry

__all__ = [
    "Expansion",
    "Lookup",
    "architecture_of",
    "check_vocabulary_roles",
    "coerce_param",
    "expand",
    "make_spec",
    "resolve",
]


class Lookup(Protocol):
    """The tables resolution reads: entries by name, raising the error that explains a name
    the tables lack (`zoo.naming.registry.Registry` is one)."""

    def model(self, name: str) -> ArchitectureEntry | PresetEntry:
        """An architecture or a preset."""
        ...

    def component(self, name: str) -> ComponentEntry: ...


_KINDS = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", tuple: "list"}


def coerce_param(value: Any, default: Any, where: str, domain: Domain | None = None, *, hint: bool = True) -> Any:
    """Check `value` against the type of `default` (ints widen to floats) and against `domain`.

    Raises `UnknownParameterError` for a wrong type and `InvalidParameterError`
    for a value outside the domain, both naming `where` and (with `hint`) how to change it.
    """
    value = _coerce_type(value, default, where)
    if domain is not None:
        try:
            domain.check(value, where, _KINDS.get(type(default), "value"))
        except InvalidParameterError as error:
            if not hint:
                raise
            raise InvalidParameterError(
                f"{error}; change it with {where}=... (zoo.build) or --set {where}=... (zoo train)"
            ) from None
    return value


def _coerce_type(value: Any, default: Any, where: str) -> Any:
    if default is None or value is None:
        return value
    expected = type(default)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, list | tuple):
        ok = isinstance(value, list | tuple)
        value = list(value) if ok else value
    else:
        ok = isinstance(value, expected)
    if not ok:
        raise UnknownParameterError(f"{where} must be {expected.__name__} (default {default!r}), got {value!r}")
    return value


Expansion = tuple[ArchitectureEntry, list[tuple[str | None, str]], dict[str, Any]]
"""A model name's presets followed down: (architecture, the presets' name parts, their params)."""


def _expand(registry: Lookup, name: str, seen: tuple[str, ...] = ()) -> Expansion:
    """Follow presets down to an architecture: (arch, name parts, preset params)."""
    if name in seen:
        raise RegistryError(f"presets form a cycle: {' -> '.join((*seen, name))}")
    entry = registry.model(name)
    if isinstance(entry, ArchitectureEntry):
        return entry, [], {}
    base = entry.base_name  # parsed when the preset's table was read
    arch, parts, params = _expand(registry, base.arch, (*seen, name))
    return arch, [*parts, *base.parts], {**params, **entry.params}


def expand(registry: Lookup, name: str | ParsedName) -> Expansion:
    """Follow a model name's presets down to the architecture it builds."""
    return _expand(registry, (name if isinstance(name, ParsedName) else parse_name(name)).arch)


def architecture_of(registry: Lookup, name: str | ParsedName) -> ArchitectureEntry:
    """The architecture a model name (architecture, preset or composite) builds."""
    return expand(registry, name)[0]


def _assign(
    registry: Lookup,
    arch: ArchitectureEntry,
    slots: dict[str, str],
    part: tuple[str | None, str],
    name: str | ParsedName,
    known: dict[str, ComponentEntry] | None = None,
) -> None:
    """Put the component of one name `part` in its slot of `slots`; `known` keeps the entry looked up."""
    slot_name, component = part
    slot_names = [s.name for s in arch.slots]
    if slot_name is not None and arch.slot(slot_name) is None:
        raise UnknownNameError(
            f"'{name}': architecture {arch.name!r} has no slot {slot_name!r}; slots: {slot_names}."
            + close_matches(slot_name, slot_names)
        )
    if component == NONE:
        if slot_name is None:
            raise NameSyntaxError(f"'{name}': write 'slot=none' to empty a slot, e.g. 'attention=none'")
        if not arch.slot(slot_name).optional:
            raise RegistryError(f"'{name}': slot {slot_name!r} of {arch.name!r} cannot be empty")
        slots[slot_name] = NONE
        return
    entry = registry.component(component)
    if known is not None:
        known[component] = entry
    if slot_name is not None:
        slot = arch.slot(slot_name)
        if slot.kind != entry.kind:
            raise RegistryError(
                f"'{name}': slot {slot_name!r} takes a {slot.kind}, but {component!r} is a {entry.kind}"
            )
        slots[slot_name] = component
        return
    fits = [s.name for s in arch.slots if s.kind == entry.kind]
    if not fits:
        raise RegistryError(
            f"'{name}': {component!r} is a {entry.kind}, and {arch.name!r} has no slot of that kind; "
            f"its slots: {', '.join(f'{s.name} ({s.kind})' for s in arch.slots)}"
        )
    if len(fits) > 1:
        options = ", ".join(f"'+{s}={component}'" for s in fits)
        raise RegistryError(f"'{name}': {component!r} fits several slots of {arch.name!r}; write {options}")
    slots[fits[0]] = component


def _look_up(registry: Lookup, slots: Mapping[str, str], known: dict[str, ComponentEntry]) -> None:
    """Add the entry of each slot's component to `known`; a name it holds is not looked up again."""
    for component in slots.values():
        if component != NONE and component not in known:
            known[component] = registry.component(component)


def check_vocabulary_roles(roles: Mapping[str, str], given: Any, model: str) -> None:
    """Raise `UnknownParameterError` unless `given` (one vocabulary, or ``{role: ...}``) fits `roles`.

    One vocabulary given alone fits an architecture with exactly one role.
    """
    if not isinstance(given, Mapping):
        if len(roles) != 1:
            raise UnknownParameterError(f"{model!r} takes vocabularies {sorted(roles)}; pass vocab={{role: Vocab}}")
        return
    unknown = sorted(set(given) - set(roles))
    if unknown:
        raise UnknownParameterError(f"{model!r} has no vocabulary roles {unknown}; it has {sorted(roles)}")


def _size_overrides(
    arch: ArchitectureEntry, sizes: Mapping[str, int] | int, overrides: Mapping[str, Any], model: str
) -> dict[str, Any]:
    """`overrides` plus the size hyperparameter each given vocabulary fixes; a contradiction is an error."""
    check_vocabulary_roles(arch.vocabularies, sizes, model)
    by_role = sizes if isinstance(sizes, Mapping) else {next(iter(arch.vocabularies)): sizes}
    merged = dict(overrides)
    for role, size in by_role.items():
        size_param = arch.vocabularies[role]
        given = merged.setdefault(size_param, size)
        if given != size:
            raise UnknownParameterError(f"{size_param}={given} contradicts the {role!r} vocabulary of {size} tokens")
    return merged


class _Params:
    """Architecture and per-slot parameters while overrides are applied.

    `slots` names each slot's component; `entries` holds the entry of every one of them.
    """

    def __init__(
        self,
        arch: ArchitectureEntry,
        slots: Mapping[str, str],
        entries: Mapping[str, ComponentEntry],
        *,
        hint: bool = True,
    ) -> None:
        self.arch, self.hint = arch, hint
        self.slots = {s.name: slots[s.name] for s in arch.slots}
        self.entries = {slot: None if c == NONE else entries[c] for slot, c in self.slots.items()}
        self.top: dict[str, Any] = dict(arch.params)
        self.defaults: dict[str, dict[str, Any]] = {}
        self.domains: dict[str, Mapping[str, Domain]] = {}
        for slot, entry in self.entries.items():
            self.defaults[slot] = {} if entry is None else dict(entry.params)
            self.domains[slot] = {} if entry is None else entry.domains
        self.by_slot = {slot: dict(values) for slot, values in self.defaults.items()}
        for slot, values in arch.scoped.items():
            self.apply_scoped(slot, values, strict=False)

    def valid_keys(self) -> list[str]:
        keys = list(self.top)
        for slot, values in self.by_slot.items():
            keys += [f"{slot}.{k}" for k in values]
        return sorted(keys)

    def apply_scoped(self, slot: str, values: dict[str, Any], *, strict: bool) -> None:
        if slot not in self.by_slot:
            raise UnknownParameterError(
                f"{self.arch.name!r} has no slot {slot!r}; slots: {sorted(self.by_slot)}."
                + close_matches(slot, self.by_slot)
            )
        for key, value in values.items():
            if key not in self.by_slot[slot]:
                if not strict:
                    continue
                valid = sorted(self.by_slot[slot])
                raise UnknownParameterError(
                    f"{slot}.{key} is not a hyperparameter of {slot} component; valid: "
                    f"{[f'{slot}.{k}' for k in valid]}."
                    + close_matches(f"{slot}.{key}", [f"{slot}.{k}" for k in valid])
                )
            where = f"{slot}.{key}"
            self.by_slot[slot][key] = coerce_param(
                value, self.defaults[slot][key], where, self.domains[slot].get(key), hint=self.hint
            )

    def apply_unscoped(self, key: str, value: Any, *, strict: bool) -> None:
        hit = False
        if key in self.top:
            self.top[key] = coerce_param(value, self.arch.params[key], key, self.arch.domains.get(key), hint=self.hint)
            hit = True
        for slot, values in self.by_slot.items():
            if key in values:
                values[key] = coerce_param(
                    value, self.defaults[slot][key], f"{slot}.{key}", self.domains[slot].get(key), hint=self.hint
                )
                hit = True
        if not hit and strict:
            valid = self.valid_keys()
            raise UnknownParameterError(
                f"{key!r} is not a hyperparameter of {self.arch.name!r}; valid keys: {valid}."
                + close_matches(key, [*valid, *(k.split(".", 1)[-1] for k in valid)])
            )

    def apply_top(self, values: Mapping[str, Any]) -> None:
        """Set architecture parameters only (never a slot's), strictly."""
        for key, value in values.items():
            if key not in self.top:
                valid = sorted(self.top)
                raise UnknownParameterError(
                    f"{key!r} is not a hyperparameter of architecture {self.arch.name!r}; valid: {valid}."
                    + close_matches(key, valid)
                )
            self.top[key] = coerce_param(value, self.arch.params[key], key, self.arch.domains.get(key), hint=self.hint)

    def apply(self, overrides: dict[str, Any], *, strict: bool) -> None:
        scoped: dict[str, dict[str, Any]] = {}
        for key, value in overrides.items():
            if "." in key:
                slot, _, sub = key.partition(".")
                scoped.setdefault(slot, {})[sub] = value
            else:
                self.apply_unscoped(key, value, strict=strict)
        for slot, values in scoped.items():
            self.apply_scoped(slot, values, strict=strict)


def _canonical(base: str, params: _Params, base_slots: Mapping[str, str]) -> str:
    """`base` plus each component of `params` that differs from `base_slots`, as `+component`
    where its kind has one slot, else as `+slot=component`."""
    name, arch = base, params.arch
    for slot in arch.slots:
        component, entry = params.slots[slot.name], params.entries[slot.name]
        if component == base_slots[slot.name]:
            continue
        unique = entry is not None and sum(s.kind == entry.kind for s in arch.slots) == 1
        name += f"+{component}" if unique else f"+{slot.name}={component}"
    return name


def resolve(
    registry: Lookup,
    name: str | ParsedName,
    overrides: Mapping[str, Any],
    *,
    expanded: Expansion | None = None,
    vocab_sizes: Mapping[str, int] | int | None = None,
) -> ModelSpec:
    """See module docstring. A name already parsed is not parsed again, and a caller that has
    followed its presets (`expand`) passes their expansion.

    `vocab_sizes` gives the size of each vocabulary the model is built with (``{role: size}``,
    or one size for an architecture with one vocabulary): each fixes its size hyperparameter,
    and an override that says otherwise is an error.
    """
    parsed = name if isinstance(name, ParsedName) else parse_name(name)
    arch, preset_parts, preset_params = expanded if expanded is not None else _expand(registry, parsed.arch)
    if vocab_sizes is not None:
        overrides = _size_overrides(arch, vocab_sizes, overrides, str(parsed))
    known: dict[str, ComponentEntry] = {}
    base_slots = {s.name: s.default for s in arch.slots}
    for part in preset_parts:
        _assign(registry, arch, base_slots, part, parsed, known)
    slots = dict(base_slots)
    for part in parsed.parts:
        _assign(registry, arch, slots, part, parsed, known)
    _look_up(registry, slots, known)
    params = _Params(arch, slots, known)
    params.apply(preset_params, strict=False)
    params.apply(dict(overrides), strict=True)
    preset = parsed.arch if parsed.arch != arch.name else None
    canonical = _canonical(parsed.arch, params, base_slots)
    return make_spec(arch, params, name=canonical, preset=preset, tag=parsed.tag)


def make_spec(arch: ArchitectureEntry, params: _Params, *, name: str, preset: str | None, tag: str | None) -> ModelSpec:
    """The `ModelSpec` of `arch` with the slots `params` filled and its values applied."""
    slot_specs = []
    for slot in arch.slots:
        entry = params.entries[slot.name]
        slot_specs.append(
            SlotSpec.from_json(
                {
                    "slot": slot.name,
                    "kind": slot.kind,
                    "component": params.slots[slot.name],
                    "factory": entry.factory if entry else None,
                    "plugin": entry.plugin if entry else None,
                    "params": params.by_slot[slot.name],
                }
            )
        )
    return ModelSpec.create(
        name=name,
        arch=arch.name,
        factory=arch.factory,
        plugin=arch.plugin,
        params=params.top,
        slots=tuple(slot_specs),
        vocabularies=arch.vocabularies,
        preset=preset,
        tag=tag,
    )
