"""One hyperparameter of a named model checked on its own, as `zoo.build` checks it."""

from __future__ import annotations

from typing import Any

from zoo.errors import UnknownParameterError, close_matches

__all__ = ["check_hyperparameter"]


def check_hyperparameter(name: str, param: str, value: Any, *, label: str | None = None) -> Any:
    """`value` for the hyperparameter `param` of the model `name`, coerced to its default's type
    and checked against its declared domain; errors call it `label` (an API's own spelling of it,
    ``vector_size`` for ``embedding_size``, say; default: `param`)."""
    from zoo.naming.registry import default_registry
    from zoo.naming.resolve import architecture_of, coerce_param

    arch = architecture_of(default_registry(), name)
    if param not in arch.params:
        raise UnknownParameterError(
            f"{name!r} has no hyperparameter {param!r}; it has {sorted(arch.params)}."
            + close_matches(param, arch.params)
        )
    return coerce_param(value, arch.params[param], label or param, arch.domains.get(param), hint=False)
