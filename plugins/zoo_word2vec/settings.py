"""Checks of the family's settings that need no JAX, so ``zoo train`` refuses bad ones at once:
the recipe imports this module (not the models or kernels) before it parses its options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zoo.plugin_api import InvalidParameterError

__all__ = ["BACKENDS", "LABELLED_FORMATS", "check_objective"]

BACKENDS = ("auto", "numba", "jax")
"""What trains a model: ``auto`` (numba on the CPU, JAX on an accelerator), ``numba`` or ``jax``."""

LABELLED_FORMATS = ("auto", "fasttext", "tsv", "reviews")
"""The fastText classifier's data formats (``auto``: told from the file's first lines)."""


def check_objective(params: Mapping[str, Any], name: str = "the model") -> None:
    """Refuse settings that train no output layer: ``negative = 0`` with ``hs`` off."""
    if int(params["negative"]) == 0 and not params.get("hs", False):
        raise InvalidParameterError(
            f"{name}: negative=0 with hs=false trains nothing: turn on hierarchical softmax "
            "(hs=true, zoo train --hs) or draw noise words (negative >= 1)"
        )
