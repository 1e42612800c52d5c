"""The conformance kit: test a plugin against zoo's contracts.

Subclass the base classes in a test module of your plugin, or run them all::

    pytest --pyargs zoo.testing.suite --zoo-plugin YOUR-PLUGIN     # or: zoo check YOUR-PLUGIN

The pytest plugin (registered automatically) parametrizes each class over every
component or model the selected plugins register, and reports how many checks
passed, were skipped, failed and errored (as pytest counts them); a subject whose every check
was skipped fails the run. Classes:

- `PluginChecks`: each plugin loads (a broken or conflicting one fails, with its error), its
  names are its own, and it registers something to check.
- `ComponentChecks`: JAX's configuration left unchanged (first), entry point, factory,
  signature, domains, names, shapes from the spec alone (every kind).
- `EmbedderTests`, `CellTests`, `EncoderTests`, `AttentionTests`, `StrategyTests`: one kind each.
- `WidthSearchTests`, `SamplerTests`: strategies by the parameters they declare
  (``beam_size``/``n_best``/``alpha``; ``temperature``/``top_k``/``top_p``).
- `ModelTests`: every architecture, and every architecture with each selected component
  in the slot it fits (so a new attention is tested as ``seq2seq+<name>``): configuration,
  a traceable build, keys, float32, shapes from the spec, loss, gradients, padding, key=None
  inference (the `dropout` roles at 0.5 change no loss without a key), files. A third-party
  component goes into every built-in architecture that takes its kind (`--zoo-host ARCH`: that
  one), its own `test` values overriding the sizes a host fixes for its slot; a host that cannot
  take a component that builds on its own skips, naming the host.
- `CausalModelTests`: the same models, where they are causal (`zoo.LanguageModel`):
  later tokens never change earlier outputs; carried state equals one long pass.

Importing this package is light; the classes load JAX when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "ComponentChecks": "zoo.testing.base",
    "ConformanceTests": "zoo.testing.base",
    "INTERFACES": "zoo.testing.base",
    "EmbedderTests": "zoo.testing.components",
    "CellTests": "zoo.testing.components",
    "EncoderTests": "zoo.testing.components",
    "AttentionTests": "zoo.testing.attention",
    "StrategyTests": "zoo.testing.strategies",
    "WidthSearchTests": "zoo.testing.search",
    "SamplerTests": "zoo.testing.search",
    "ModelTests": "zoo.testing.models",
    "PluginChecks": "zoo.testing.plugins",
    "CausalModelTests": "zoo.testing.causal",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'zoo.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
