"""Registry tables: the parsed, validated form of `registry.toml` and plugin fragments.

A table file has three sections::

    [components.<name>]     kind, factory ("module:attr"), plugin, params, domains, roles, test, summary,
                            paper
    [architectures.<name>]  factory, plugin, slots, params, domains, roles, vocabularies, recipe, test,
                            summary
    [presets.<name>]        base (a model name), params (dotted keys allowed), summary
    [demos.<name>]          run ("module:function"), summary: ``zoo demo <name>``
    [formats.<name>]        codec ("module:attr"), summary, title, magic, suffixes, writable,
                            model_codec ("module:attr"): a word-vector file format
                            (`zoo.vectors.extensions`), whose files may hold whole models
                            (`zoo.building.foreign`)
    [subwords.<name>]       codec ("module:attr"), summary, title: a subword model kept in zoo
                            vectors files
    [exports.<name>]        target ("module:attr"), module, summary: a name a core module serves

Slots are declared as ``slot = { kind = "...", default = "...", optional = true }``.
Architecture `params` may hold a table per slot: defaults for that slot's component.
`domains` declares the values each hyperparameter of `params` may take (see
`zoo.naming.domains`); the default and the `test` value must lie in it. `roles` says which
hyperparameter plays each role the conformance kit tests (`ROLES`), e.g. ``roles = { top_p = "p" }``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo.errors import InvalidParameterError, NameSyntaxError, RegistryError, close_matches
from zoo.naming.domains import Domain, parse_domain
from zoo.naming.names import IDENTIFIER, ParsedName, parse_name

__all__ = [
    "ArchitectureEntry",
    "ComponentEntry",
    "DemoEntry",
    "ExportEntry",
    "FormatEntry",
    "PresetEntry",
    "SlotEntry",
    "SubwordEntry",
    "Tables",
    "parse_tables",
    "read_tables",
]


@dataclass(frozen=True)
class ComponentEntry:
    """A component: fills one slot of an architecture (an attention, a cell, ...)."""

    name: str
    kind: str
    factory: str
    plugin: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    test: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""
    paper: str = ""
    domains: Mapping[str, Domain] = field(default_factory=dict)
    declared: frozenset[str] = frozenset()  # the params whose domain the table declares
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> the param that plays it (`ROLES`)
    multiples: Mapping[str, str] = field(default_factory=dict)  # param -> the param it is a multiple of


@dataclass(frozen=True)
class SlotEntry:
    """A slot of an architecture: the kind it takes and its default component."""

    name: str
    kind: str
    default: str
    optional: bool = False


@dataclass(frozen=True)
class ArchitectureEntry:
    """An architecture: a final module that owns components in named slots."""

    name: str
    factory: str
    plugin: str | None
    slots: tuple[SlotEntry, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    scoped: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    vocabularies: Mapping[str, str] = field(default_factory=dict)
    recipe: str | None = None
    test: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""
    paper: str = ""
    domains: Mapping[str, Domain] = field(default_factory=dict)
    declared: frozenset[str] = frozenset()  # the params whose domain the table declares
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> the param that plays it (`ROLES`)

    def slot(self, name: str) -> SlotEntry | None:
        return next((s for s in self.slots if s.name == name), None)


@dataclass(frozen=True)
class PresetEntry:
    """A named model: a base name plus hyperparameter overrides.

    `base_name` is `base` parsed, once, when the entry is made (a base that does not
    parse raises `NameSyntaxError` then, not when the preset is built).
    """

    name: str
    base: str
    plugin: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""
    paper: str = ""
    base_name: ParsedName = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_name", parse_name(self.base))


@dataclass(frozen=True)
class DemoEntry:
    """A demonstration run by ``zoo demo <name>``: ``run(argv) -> exit code``."""

    name: str
    run: str
    plugin: str | None
    summary: str = ""


@dataclass(frozen=True)
class FormatEntry:
    """A word-vector file format a plugin reads (and maybe writes): its codec implements
    `zoo.vectors.extensions.VectorFormat`; `magic` (byte strings) tell its files by their first bytes."""

    name: str
    codec: str
    plugin: str | None
    summary: str = ""
    title: str = ""  # a short name for listings ("fastText .bin"); the name when not given
    magic: tuple[bytes, ...] = ()
    suffixes: tuple[str, ...] = ()
    writable: bool = False
    model_codec: str = ""  # a `zoo.building.foreign.ModelFormat`: files of the format that hold models


@dataclass(frozen=True)
class SubwordEntry:
    """A subword model (the vectors of words outside a vocabulary) that zoo vectors files keep:
    its codec implements `zoo.vectors.extensions.SubwordModel`."""

    name: str
    codec: str
    plugin: str | None
    summary: str = ""
    title: str = ""  # a short name for listings ("fastText subwords"); the name when not given


EXPORT_MODULES = ("zoo.vectors",)
"""The core modules that serve names plugins export (as ``from zoo.vectors import Word2Vec``)."""


@dataclass(frozen=True)
class ExportEntry:
    """A name served by a core module (`module`) on behalf of a plugin: ``target`` is ``"module:attr"``."""

    name: str
    target: str
    module: str
    plugin: str | None
    summary: str = ""


EXTENSION_SECTIONS = ("formats", "subwords", "exports")
"""The sections whose names each form their own namespace (a format and a model may share a name)."""


@dataclass
class Tables:
    """Entries from one source, before they join a registry."""

    components: dict[str, ComponentEntry] = field(default_factory=dict)
    architectures: dict[str, ArchitectureEntry] = field(default_factory=dict)
    presets: dict[str, PresetEntry] = field(default_factory=dict)
    demos: dict[str, DemoEntry] = field(default_factory=dict)
    formats: dict[str, FormatEntry] = field(default_factory=dict)
    subwords: dict[str, SubwordEntry] = field(default_factory=dict)
    exports: dict[str, ExportEntry] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Component, architecture and preset names (one namespace); demos have their own."""
        return [*self.components, *self.architectures, *self.presets]

    def for_plugin(self, plugin: str) -> Tables:
        """The entries whose `plugin` is `plugin`."""
        return Tables(
            **{
                section: {k: v for k, v in getattr(self, section).items() if v.plugin == plugin}
                for section in _SECTIONS
            }
        )

    def update(self, other: Tables) -> None:
        """Add `other`'s entries (an entry of the same section and name is replaced)."""
        for section in _SECTIONS:
            getattr(self, section).update(getattr(other, section))

    def plugins(self) -> set[str]:
        return {e.plugin for section in _SECTIONS for e in getattr(self, section).values() if e.plugin}


_SECTIONS = ("components", "architectures", "presets", "demos", *EXTENSION_SECTIONS)


_COMPONENT_KEYS = {"kind", "factory", "plugin", "params", "domains", "roles", "multiples", "test", "summary", "paper"}
_ARCH_KEYS = {
    "factory",
    "roles",
    "plugin",
    "slots",
    "params",
    "domains",
    "vocabularies",
    "recipe",
    "test",
    "summary",
    "paper",
}
_PRESET_KEYS = {"base", "plugin", "params", "summary", "paper"}
_DEMO_KEYS = {"run", "plugin", "summary"}
_FORMAT_KEYS = {"codec", "plugin", "summary", "title", "magic", "suffixes", "writable", "model_codec"}
_SUBWORD_KEYS = {"codec", "plugin", "summary", "title"}
_EXPORT_KEYS = {"target", "module", "plugin", "summary"}


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RegistryError(f"{where} must be a table, got {type(value).__name__}")
    return value


def _check_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise RegistryError(f"{where}: unknown keys {unknown}; allowed: {sorted(allowed)}")


def _require(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise RegistryError(f"{where}: '{key}' must be a non-empty string")
    return value


def _check_name(name: str, where: str) -> str:
    if not IDENTIFIER.fullmatch(name):
        raise RegistryError(f"{where}: {name!r} is not a valid name (lowercase, digits, '-', '_')")
    return name


def _plugin_of(data: Mapping[str, Any], plugin: str | None, where: str) -> str | None:
    declared = data.get("plugin")
    if plugin is not None and declared not in (None, plugin):
        raise RegistryError(f"{where}: plugin {plugin!r} cannot register names for {declared!r}")
    return plugin if plugin is not None else declared


def _domains(
    data: Mapping[str, Any], params: Mapping[str, Any], test: Mapping[str, Any], where: str
) -> tuple[dict[str, Domain], frozenset[str]]:
    """Every parameter's `Domain` (declared, or its type's default), with the defaults and test values checked."""
    declared = dict(_table(data.get("domains", {}), f"{where}.domains"))
    unknown = sorted(set(declared) - set(params))
    if unknown:
        raise RegistryError(f"{where}.domains: {unknown} are not in params; params: {sorted(params)}")
    domains = {key: parse_domain(declared.get(key), value, f"{where}.domains.{key}") for key, value in params.items()}
    for key, value in test.items():
        if key in domains:
            try:
                domains[key].check(value, f"{where}.test.{key}")
            except InvalidParameterError as error:
                raise RegistryError(str(error)) from error
    return domains, frozenset(declared)


ROLES: dict[str, tuple[str, ...]] = {
    "strategy": ("temperature", "top_k", "top_p", "num_samples", "beam_size", "n_best", "alpha", "dropout"),
    **{kind: ("dropout",) for kind in ("attention", "cell", "decoder", "embedder", "encoder", "architecture")},
}
"""The roles a table may give its hyperparameters (``roles = { top_p = "p" }``), by kind
(``architecture`` for models): what the conformance kit needs to know of a parameter to test
it (`zoo.testing`); it never guesses a role from a parameter's name.

- ``dropout``: a rate in [0, 1) applied only with a key (``key=None`` is inference).
- ``temperature``: divides the logits (0: greedy); ``top_k``: keep the k most likely tokens (0:
  all); ``top_p``: keep the smallest head whose probability reaches p (1: all);
  ``num_samples``: how many sequences are drawn.
- ``beam_size``: the search's width; ``n_best``: how many hypotheses it returns; ``alpha``:
  the length-normalisation exponent of ``score = log P(y) / |y|^alpha`` (0: none).
"""


def _roles(data: Mapping[str, Any], params: Mapping[str, Any], kind: str, where: str) -> dict[str, str]:
    """The table's ``roles``: each a known role of `kind` played by one of its `params`."""
    roles = dict(_table(data.get("roles", {}), f"{where}.roles"))
    for role, param in roles.items():
        if role not in ROLES[kind]:
            raise RegistryError(
                f"{where}.roles: unknown role {role!r} for a {kind}; roles: {', '.join(ROLES[kind])}."
                + close_matches(role, ROLES[kind])
            )
        if not isinstance(param, str) or param not in params:
            raise RegistryError(
                f"{where}.roles.{role}: {param!r} is not in params; a role names the hyperparameter that "
                f'plays it, e.g. roles = {{ {role} = "{next(iter(params), "rate")}" }}; params: {sorted(params)}'
            )
    return roles


KIND_NAMES = ("attention", "cell", "decoder", "embedder", "encoder", "strategy")
"""The kinds a component may declare: the keys of `zoo.interfaces.KINDS`, here so that reading a
table needs no JAX (a test holds the two equal)."""


def _check_kind(kind: str, where: str) -> str:
    if kind not in KIND_NAMES:
        raise RegistryError(
            f"{where}: unknown kind {kind!r}; a component is one of {', '.join(KIND_NAMES)}."
            + close_matches(kind, KIND_NAMES)
        )
    return kind


def _component(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> ComponentEntry:
    where = f"{src}: components.{name}"
    _check_keys(data, _COMPONENT_KEYS, where)
    params = dict(_table(data.get("params", {}), f"{where}.params"))
    test = dict(_table(data.get("test", {}), f"{where}.test"))
    domains, declared = _domains(data, params, test, where)
    kind = _check_kind(_check_name(_require(data, "kind", where), where), where)
    return ComponentEntry(
        name=_check_name(name, where),
        kind=kind,
        factory=_require(data, "factory", where),
        plugin=_plugin_of(data, plugin, where),
        params=params,
        test=test,
        summary=str(data.get("summary", "")),
        paper=str(data.get("paper", "")),
        domains=domains,
        declared=declared,
        roles=_roles(data, params, kind, where),
        multiples=_multiples(data, params, test, where),
    )


def _multiples(data: Mapping[str, Any], params: Mapping[str, Any], test: Mapping[str, Any], where: str) -> dict:
    """The table's ``multiples = { hidden_size = "num_heads" }``: integer hyperparameters that must
    be a multiple of another (the conformance kit keeps them together when a host fixes one), each
    holding at the defaults and at the test values."""
    multiples = dict(_table(data.get("multiples", {}), f"{where}.multiples"))
    for param, of in multiples.items():
        for name in (param, of):
            if not isinstance(name, str) or name not in params or type(params[name]) is not int:
                raise RegistryError(
                    f"{where}.multiples.{param}: {name!r} is not an integer hyperparameter in params; "
                    f'multiples = {{ hidden_size = "num_heads" }} says hidden_size must be a multiple of '
                    f"num_heads; params: {sorted(params)}"
                )
        for values, what in ((params, "defaults"), ({**params, **test}, "test values")):
            if values[of] == 0 or values[param] % values[of]:
                raise RegistryError(
                    f"{where}.multiples.{param}: its {what} break the declaration: {param}={values[param]} "
                    f"is not a multiple of {of}={values[of]}"
                )
    return multiples


def _slot(name: str, data: Any, where: str) -> SlotEntry:
    data = _table(data, f"{where}.slots.{name}")
    _check_keys(data, {"kind", "default", "optional"}, f"{where}.slots.{name}")
    return SlotEntry(
        name=_check_name(name, where),
        kind=_check_kind(_require(data, "kind", f"{where}.slots.{name}"), f"{where}.slots.{name}"),
        default=_require(data, "default", f"{where}.slots.{name}"),
        optional=bool(data.get("optional", False)),
    )


def _architecture(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> ArchitectureEntry:
    where = f"{src}: architectures.{name}"
    _check_keys(data, _ARCH_KEYS, where)
    slots = tuple(_slot(k, v, where) for k, v in _table(data.get("slots", {}), where).items())
    slot_names = {s.name for s in slots}
    params: dict[str, Any] = {}
    scoped: dict[str, dict[str, Any]] = {}
    for key, value in _table(data.get("params", {}), f"{where}.params").items():
        if isinstance(value, Mapping):
            if key not in slot_names:
                raise RegistryError(f"{where}.params.{key}: no slot named {key!r}")
            scoped[key] = dict(value)
        else:
            params[key] = value
    vocabularies = dict(_table(data.get("vocabularies", {}), f"{where}.vocabularies"))
    for role, size_param in vocabularies.items():
        if size_param not in params:
            raise RegistryError(f"{where}.vocabularies.{role}: {size_param!r} is not in params")
    test = dict(_table(data.get("test", {}), f"{where}.test"))
    domains, declared = _domains(data, params, {k: v for k, v in test.items() if "." not in k}, where)
    return ArchitectureEntry(
        name=_check_name(name, where),
        factory=_require(data, "factory", where),
        plugin=_plugin_of(data, plugin, where),
        slots=slots,
        params=params,
        scoped=scoped,
        vocabularies=vocabularies,
        recipe=data.get("recipe"),
        test=test,
        summary=str(data.get("summary", "")),
        paper=str(data.get("paper", "")),
        domains=domains,
        declared=declared,
        roles=_roles(data, params, "architecture", where),
    )


def _flatten_params(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, Mapping):
            flat.update(_flatten_params(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _preset(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> PresetEntry:
    where = f"{src}: presets.{name}"
    _check_keys(data, _PRESET_KEYS, where)
    base = _require(data, "base", where)
    try:
        return PresetEntry(
            name=_check_name(name, where),
            base=base,
            plugin=_plugin_of(data, plugin, where),
            params=_flatten_params(_table(data.get("params", {}), f"{where}.params")),
            summary=str(data.get("summary", "")),
            paper=str(data.get("paper", "")),
        )
    except NameSyntaxError as error:
        raise RegistryError(f"{where}: base {base!r}: {error}") from error


def _demo(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> DemoEntry:
    where = f"{src}: demos.{name}"
    _check_keys(data, _DEMO_KEYS, where)
    return DemoEntry(
        name=_check_name(name, where),
        run=_require(data, "run", where),
        plugin=_plugin_of(data, plugin, where),
        summary=str(data.get("summary", "")),
    )


def _strings(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RegistryError(f"{where}: '{key}' must be a list of non-empty strings")
    return tuple(value)


def _magic(data: Mapping[str, Any], where: str) -> tuple[bytes, ...]:
    """`magic`: hex strings, each the first bytes of a file of the format (at most 16)."""
    found = []
    for text in _strings(data, "magic", where):
        try:
            value = bytes.fromhex(text)
        except ValueError:
            raise RegistryError(f"{where}: magic {text!r} is not hexadecimal bytes (e.g. 'ba164f2f')") from None
        if not 1 <= len(value) <= 16:
            raise RegistryError(f"{where}: magic {text!r} must be 1 to 16 bytes")
        found.append(value)
    return tuple(found)


def _format(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> FormatEntry:
    where = f"{src}: formats.{name}"
    _check_keys(data, _FORMAT_KEYS, where)
    writable = data.get("writable", False)
    if not isinstance(writable, bool):
        raise RegistryError(f"{where}: 'writable' must be true or false")
    return FormatEntry(
        name=_check_name(name, where),
        codec=_require(data, "codec", where),
        plugin=_plugin_of(data, plugin, where),
        summary=str(data.get("summary", "")),
        title=str(data.get("title", name)),
        magic=_magic(data, where),
        suffixes=_strings(data, "suffixes", where),
        writable=writable,
        model_codec=_require(data, "model_codec", where) if "model_codec" in data else "",
    )


def _subword(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> SubwordEntry:
    where = f"{src}: subwords.{name}"
    _check_keys(data, _SUBWORD_KEYS, where)
    return SubwordEntry(
        name=_check_name(name, where),
        codec=_require(data, "codec", where),
        plugin=_plugin_of(data, plugin, where),
        summary=str(data.get("summary", "")),
        title=str(data.get("title", name)),
    )


def _export(name: str, data: Mapping[str, Any], plugin: str | None, src: str) -> ExportEntry:
    where = f"{src}: exports.{name}"
    _check_keys(data, _EXPORT_KEYS, where)
    if not name.isidentifier() or name.startswith("_"):
        raise RegistryError(f"{where}: {name!r} is not a public Python name")
    module = _require(data, "module", where)
    if module not in EXPORT_MODULES:
        raise RegistryError(f"{where}: module {module!r} serves no exports; one of {list(EXPORT_MODULES)}")
    return ExportEntry(
        name=name,
        target=_require(data, "target", where),
        module=module,
        plugin=_plugin_of(data, plugin, where),
        summary=str(data.get("summary", "")),
    )


_READERS = {
    "components": _component,
    "architectures": _architecture,
    "presets": _preset,
    "demos": _demo,
    "formats": _format,
    "subwords": _subword,
    "exports": _export,
}


def parse_tables(data: Mapping[str, Any], *, plugin: str | None = None, source: str) -> Tables:
    """Validate parsed TOML into `Tables`.

    With `plugin` given, every entry belongs to that plugin (a plugin may not
    register names on behalf of another). Raises `RegistryError` naming the
    source and the offending key.
    """
    _check_keys(data, {"format", *_SECTIONS}, source)
    tables = Tables()
    for section, read in _READERS.items():
        for name, value in _table(data.get(section, {}), source).items():
            getattr(tables, section)[name] = read(name, _table(value, name), plugin, source)
    seen: dict[str, str] = {}
    for section in ("components", "architectures", "presets"):
        for name in getattr(tables, section):
            if name in seen:
                raise RegistryError(f"{source}: {name!r} is both in {seen[name]} and {section}")
            seen[name] = section
    return tables


def read_tables(source: str | Path | Mapping[str, Any], *, plugin: str | None = None) -> Tables:
    """Parse a TOML file path, TOML text, or an already parsed mapping."""
    if isinstance(source, Mapping):
        return parse_tables(source, plugin=plugin, source=f"tables of plugin {plugin!r}")
    if isinstance(source, Path):
        text, label = source.read_text(encoding="utf-8"), str(source)
    else:
        text, label = source, f"tables of plugin {plugin!r}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RegistryError(f"{label}: invalid TOML: {error}") from error
    return parse_tables(data, plugin=plugin, source=label)
