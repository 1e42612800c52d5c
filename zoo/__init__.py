"""zoo: word embeddings and classic sequence models on JAX + Equinox, as plugins.

    import jax, zoo
    model = zoo.build("seq2seq+luong-general", key=jax.random.key(0))
    zoo.save(model, "model.safetensors")
    same = zoo.load("model.safetensors")

Importing zoo is light: JAX and plugin code load on first use, so listing
names (`zoo.list_models`, ``zoo list``) stays instant.
"""

from __future__ import annotations

import importlib
from typing import Any

from zoo.errors import (
    DataError,
    InvalidParameterError,
    MemoryBudgetError,
    NameSyntaxError,
    PluginConflictError,
    PluginError,
    RegistryError,
    TrainingDiverged,
    UnknownNameError,
    UnknownParameterError,
    WeightsError,
    ZooError,
)

__version__ = "0.1.0"

_LAZY = {
    "build": "zoo.building.builder:build",
    "build_component": "zoo.building.builder:build_component",
    "component_spec": "zoo.building.builder:component_spec",
    "describe": "zoo.naming.listing:describe",
    "list_models": "zoo.naming.listing:list_models",
    "list_components": "zoo.naming.listing:list_components",
    "list_plugins": "zoo.naming.listing:list_plugins",
    "save": "zoo.building.weights:save",
    "load": "zoo.building.weights:load",
    "train": "zoo.training.trainer:train",
    "Registry": "zoo.naming.registry:Registry",
    "ModelSpec": "zoo.naming.spec:ModelSpec",
    "Vocab": "zoo.data.vocab:Vocab",
    "Embedder": "zoo.interfaces:Embedder",
    "ContextualEmbedder": "zoo.interfaces:ContextualEmbedder",
    "RecurrentCell": "zoo.interfaces:RecurrentCell",
    "Encoder": "zoo.interfaces:Encoder",
    "Attention": "zoo.interfaces:Attention",
    "Decoder": "zoo.interfaces:Decoder",
    "DecoderStrategy": "zoo.interfaces:DecoderStrategy",
    "Model": "zoo.interfaces:Model",
    "LanguageModel": "zoo.interfaces:LanguageModel",
    "EncoderOutput": "zoo.interfaces:EncoderOutput",
    "DecoderOutput": "zoo.interfaces:DecoderOutput",
    "Memory": "zoo.interfaces:Memory",
    "Hypotheses": "zoo.interfaces:Hypotheses",
}

__all__ = [
    "DataError",
    "InvalidParameterError",
    "MemoryBudgetError",
    "NameSyntaxError",
    "PluginConflictError",
    "PluginError",
    "RegistryError",
    "TrainingDiverged",
    "UnknownNameError",
    "UnknownParameterError",
    "WeightsError",
    "ZooError",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'zoo' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
