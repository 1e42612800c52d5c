"""Resolved model specifications: what a name plus overrides means, as plain data.

A `ModelSpec` is hashable (it is a static field of every architecture), turns
into JSON and back exactly, and is all a weights file needs to rebuild the
skeleton of its model.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zoo.errors import PluginError, RegistryError, UnknownNameError

__all__ = ["NONE", "ModelSpec", "SlotSpec", "import_factory"]

NONE = "none"  # the component name that leaves an optional slot empty


def import_factory(path: str, *, plugin: str | None = None) -> Any:
    """Import a lazy factory given as ``"module:attr"``.

    Raises `PluginError` naming the plugin when the module fails to import.
    """
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise RegistryError(f"factory {path!r} must look like 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        who = f"plugin {plugin!r}" if plugin else "a plugin"
        raise PluginError(
            f"{who} could not import its factory module {module_name!r}: {type(error).__name__}: {error}"
        ) from error
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError as error:
        raise RegistryError(f"factory {path!r}: module {module_name!r} has no {attr!r}") from error
    return obj


def _freeze(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, _freeze_value(v)) for k, v in params.items()))


def _freeze_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze_value(v) for v in value)
    if isinstance(value, Mapping):
        raise RegistryError(f"hyperparameter values must be scalars or lists, got {value!r}")
    return value


def _thaw(value: Any) -> Any:
    return [_thaw(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class SlotSpec:
    """One filled slot of an architecture.

    `component` is `"none"` for an optional slot left empty; then `factory`
    is None and `build` returns None.
    """

    slot: str
    kind: str
    component: str
    factory: str | None = None
    plugin: str | None = None
    frozen_params: tuple[tuple[str, Any], ...] = ()

    @property
    def params(self) -> dict[str, Any]:
        """The component's resolved hyperparameters (a fresh dict)."""
        return {k: _thaw(v) for k, v in self.frozen_params}

    @property
    def is_empty(self) -> bool:
        return self.component == NONE

    def factory_callable(self) -> Any:
        if self.factory is None:
            raise RegistryError(f"slot {self.slot!r} is empty: it has no factory")
        return import_factory(self.factory, plugin=self.plugin)

    def partial(self, **wired: Any) -> Any:
        """The factory with hyperparameters and `wired` arguments bound, or None if empty."""
        if self.is_empty:
            return None
        clash = sorted(set(wired) & {k for k, _ in self.frozen_params})
        if clash:
            raise RegistryError(
                f"slot {self.slot!r}: the architecture wires {clash}, which component "
                f"{self.component!r} also declares as hyperparameters; remove them from its defaults"
            )
        return functools.partial(self.factory_callable(), **self.params, **wired)

    def build(self, *args: Any, **wired: Any) -> Any:
        """Call the factory with the hyperparameters plus `wired` arguments (sizes, key)."""
        made = self.partial(**wired)
        return None if made is None else made(*args)

    def to_json(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "kind": self.kind,
            "component": self.component,
            "factory": self.factory,
            "plugin": self.plugin,
            "params": self.params,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SlotSpec:
        return cls(
            slot=data["slot"],
            kind=data["kind"],
            component=data["component"],
            factory=data.get("factory"),
            plugin=data.get("plugin"),
            frozen_params=_freeze(data.get("params", {})),
        )


@dataclass(frozen=True)
class ModelSpec:
    """A fully resolved model: architecture, hyperparameters and filled slots.

    **Fields:**

    - `name`: canonical name (architecture plus non-default components).
    - `arch`: architecture name; `factory`/`plugin` say who builds it.
    - `params`: the architecture's own hyperparameters (see `.params`).
    - `slots`: one `SlotSpec` per slot, in the architecture's order.
    - `vocabularies`: vocabulary role -> the size hyperparameter it fixes.
    - `preset`: the preset the name started from, if any; `tag`: weights tag.
    """

    name: str
    arch: str
    factory: str
    plugin: str | None
    frozen_params: tuple[tuple[str, Any], ...]
    slots: tuple[SlotSpec, ...] = ()
    vocabularies: tuple[tuple[str, str], ...] = ()
    preset: str | None = None
    tag: str | None = None
    _json: str = field(default="", compare=False, repr=False)

    @classmethod
    def create(
        cls,
        *,
        name: str,
        arch: str,
        factory: str,
        plugin: str | None,
        params: Mapping[str, Any],
        slots: tuple[SlotSpec, ...] = (),
        vocabularies: Mapping[str, str] | None = None,
        preset: str | None = None,
        tag: str | None = None,
    ) -> ModelSpec:
        return cls(
            name=name,
            arch=arch,
            factory=factory,
            plugin=plugin,
            frozen_params=_freeze(params),
            slots=tuple(slots),
            vocabularies=tuple(sorted((vocabularies or {}).items())),
            preset=preset,
            tag=tag,
        )

    @property
    def params(self) -> dict[str, Any]:
        """The architecture's hyperparameters (a fresh dict)."""
        return {k: _thaw(v) for k, v in self.frozen_params}

    def __getitem__(self, key: str) -> Any:
        """`spec["hidden_size"]` for an architecture parameter."""
        for k, v in self.frozen_params:
            if k == key:
                return _thaw(v)
        raise UnknownNameError(
            f"architecture {self.arch!r} has no hyperparameter {key!r}; it has {[k for k, _ in self.frozen_params]}"
        )

    def slot(self, name: str) -> SlotSpec:
        for slot in self.slots:
            if slot.slot == name:
                return slot
        raise UnknownNameError(
            f"architecture {self.arch!r} has no slot {name!r}; slots: {[s.slot for s in self.slots]}"
        )

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): `ModelSpec.from_json(s.to_json()) == s`."""
        data = {
            "name": self.name,
            "arch": self.arch,
            "factory": self.factory,
            "plugin": self.plugin,
            "params": self.params,
            "slots": [s.to_json() for s in self.slots],
            "vocabularies": dict(self.vocabularies),
            "preset": self.preset,
            "tag": self.tag,
        }
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ModelSpec:
        data = json.loads(text)
        return cls.create(
            name=data["name"],
            arch=data["arch"],
            factory=data["factory"],
            plugin=data.get("plugin"),
            params=data.get("params", {}),
            slots=tuple(SlotSpec.from_json(s) for s in data.get("slots", [])),
            vocabularies=data.get("vocabularies", {}),
            preset=data.get("preset"),
            tag=data.get("tag"),
        )

    def __hash__(self) -> int:
        return hash((self.name, self.arch, self.frozen_params, self.slots, self.vocabularies))
