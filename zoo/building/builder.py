"""Build a model by name: parse it, resolve it in one walk, construct it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zoo.building.construct import construct
from zoo.data.vocab import Vocab, Vocabularies
from zoo.errors import (
    PluginError,
    RegistryError,
    UnknownParameterError,
    close_matches,
)
from zoo.naming.names import parse_name
from zoo.naming.registry import Registry, default_registry
from zoo.naming.resolve import check_vocabulary_roles, coerce_param, resolve
from zoo.naming.spec import SlotSpec

__all__ = ["as_vocabularies", "build", "build_component", "component_spec"]


def as_vocabularies(vocab: Vocab | Mapping[str, Vocab] | None, roles: Mapping[str, str], model: str) -> Vocabularies:
    """Normalise `vocab`: a single `Vocab` fills an architecture's only role."""
    if vocab is None:
        return Vocabularies()
    check_vocabulary_roles(roles, vocab, model)
    return Vocabularies({next(iter(roles)): vocab} if isinstance(vocab, Vocab) else vocab)


def build(
    name: str,
    *,
    key: Any,
    vocab: Vocab | Mapping[str, Vocab] | None = None,
    registry: Registry | None = None,
    **overrides: Any,
) -> Any:
    """Build the model `name` with fresh parameters drawn from `key`.

    **Arguments:**

    - `name`: ``arch(+component|+slot=component)*[.tag]``; with a tag, the
      weights a plugin resolves for it are loaded instead (no overrides allowed).
    - `key`: a `jax.random.key`; the same key gives the same parameters.
    - `vocab`: a `Vocab` (for single-vocabulary models) or ``{role: Vocab}``;
      fixes the vocabulary sizes and travels with saved weights.
    - `**overrides`: hyperparameters, dotted to scope them (``encoder.num_layers=2``).
    """
    registry = registry or default_registry()
    parsed = parse_name(name)
    if parsed.tag is not None:
        if overrides or vocab is not None:
            raise UnknownParameterError(f"{name!r} names trained weights; drop the overrides and vocab")
        from zoo.building.weights import load

        untagged = str(parsed).rsplit(".", 1)[0]
        return load(registry.resolve_weights(untagged, parsed.tag), registry=registry)
    sizes = None if vocab is None else len(vocab) if isinstance(vocab, Vocab) else {r: len(v) for r, v in vocab.items()}
    spec = resolve(registry, parsed, overrides, vocab_sizes=sizes)
    vocabs = None if vocab is None else as_vocabularies(vocab, dict(spec.vocabularies), name)
    return construct(spec, key=key, vocabs=vocabs, registry=registry)


def component_spec(name: str, *, kind: str | None = None, registry: Registry | None = None, **params: Any) -> SlotSpec:
    """Resolve one component on its own: its defaults plus `params`, checked.

    Call ``.build(**wired)`` on the result with the sizes and key its kind's
    factory contract wires (see `zoo.interfaces`).
    """
    registry = registry or default_registry()
    entry = registry.component(name)
    if kind is not None and entry.kind != kind:
        raise RegistryError(f"{name!r} is a {entry.kind}, not a {kind}")
    resolved = dict(entry.params)
    for key, value in params.items():
        if key not in entry.params:
            valid = sorted(entry.params)
            raise UnknownParameterError(
                f"{key!r} is not a hyperparameter of {name!r}; valid: {valid}." + close_matches(key, valid)
            )
        resolved[key] = coerce_param(value, entry.params[key], key, entry.domains.get(key))
    spec = SlotSpec.from_json(
        {
            "slot": entry.kind,
            "kind": entry.kind,
            "component": name,
            "factory": entry.factory,
            "plugin": entry.plugin,
            "params": resolved,
        }
    )
    record = registry.plugins.get(entry.plugin) if entry.plugin else None
    if entry.plugin and (record is None or not record.ok):
        raise PluginError(f"{name!r} needs plugin {entry.plugin!r}, which is not loaded")
    return spec


def build_component(name: str, *, kind: str | None = None, registry: Registry | None = None, **params: Any) -> Any:
    """Build a component that needs nothing wired (a decoding strategy, say)."""
    return component_spec(name, kind=kind, registry=registry, **params).build()
