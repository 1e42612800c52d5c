"""Hyperparameter domains: the values a registered hyperparameter may take.

Every entry of a table declares, beside each hyperparameter's default in
``params``, its domain in ``domains``; the type is the default's type. A domain is

- an interval, ``"[1, inf)"``, ``"(0, 1)"``, ``"[0, 1)"``, ``"[1, 64]"``: square
  brackets include the bound, round ones exclude it; ``inf`` only counts as a
  value where a square bracket includes it. NaN is never in a domain;
- ``"each [1, inf)"``: a non-empty list whose every element is in the interval;
  ``"list (-inf, inf)"`` admits the empty list too;
- a TOML array of choices, ``["tanh", "relu"]``;
- ``"any"``: any value of the default's type (free text, a nested spec);
- any of these followed by ``" or none"`` also admits None (TOML has no None:
  only Python callers can pass it), for a parameter whose factory gives None
  a meaning of its own.

A float hyperparameter without a declared domain must still be finite.
`parse_domain` reads a declaration; `Domain.check(value, name)` raises
`InvalidParameterError` naming the parameter, the value and the valid range.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.errors import InvalidParameterError, RegistryError

__all__ = ["ANY", "Choices", "Domain", "Each", "Interval", "OrNone", "argument_type", "check_count", "parse_domain"]

_NUMBER = r"[-+]?(?:inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
_INTERVAL = re.compile(rf"^\s*([\[(])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\])])\s*$")


class Domain:
    """The set of values a hyperparameter may take."""

    def contains(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self, kind: str) -> str:
        """The domain in words, for `kind` ("integer", "number", ...)."""
        raise NotImplementedError

    def check(self, value: Any, name: str, kind: str = "value") -> None:
        """Raise `InvalidParameterError` unless `value` is in the domain."""
        if not self.contains(value):
            raise InvalidParameterError(f"{name}={value!r} is out of range: it must be {self.describe(kind)}")

    def outside(self) -> list[Any]:
        """Values just outside the domain (for the conformance kit), [] when there are none."""
        return []


@dataclass(frozen=True)
class _Any(Domain):
    def contains(self, value: Any) -> bool:
        return not (isinstance(value, float) and math.isnan(value))

    def describe(self, kind: str) -> str:
        return f"any {kind}"


ANY: Domain = _Any()


@dataclass(frozen=True)
class Interval(Domain):
    """``low <(=) value <(=) high``; NaN and excluded infinities are outside."""

    low: float
    high: float
    low_closed: bool
    high_closed: bool
    integer: bool = False

    def contains(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            return False
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def text(self) -> str:
        def bound(x: float) -> str:
            if math.isinf(x):
                return "inf" if x > 0 else "-inf"
            return str(int(x)) if self.integer or float(x).is_integer() else repr(x)

        return (
            f"{'[' if self.low_closed else '('}{bound(self.low)}, {bound(self.high)}{']' if self.high_closed else ')'}"
        )

    def describe(self, kind: str) -> str:
        article = "an" if kind[:1] in "aeiou" else "a"
        if math.isinf(self.low) and math.isinf(self.high) and not (self.low_closed or self.high_closed):
            return f"a finite {kind}"
        if math.isinf(self.high) and not self.high_closed and not math.isinf(self.low):
            low = self.text()[1:].split(",")[0]
            finite = "" if self.integer else "finite "
            return f"{article} {finite}{kind} {'>=' if self.low_closed else '>'} {low}"
        return f"{article} {kind} in {self.text()}"

    def outside(self) -> list[Any]:
        step = 1 if self.integer else 1e-3
        values: list[Any] = []
        if not math.isinf(self.low):
            values.append(self.low - step if self.low_closed else self.low)
        if not math.isinf(self.high):
            values.append(self.high + step if self.high_closed else self.high)
        if not self.integer:
            values.append(math.nan)
            if not (math.isinf(self.high) and self.high_closed):
                values.append(math.inf)
        return [int(v) if self.integer and not math.isnan(v) else v for v in values]


@dataclass(frozen=True)
class Each(Domain):
    """A list (non-empty unless `empty`) whose every element lies in `element`."""

    element: Domain
    empty: bool = False

    def contains(self, value: Any) -> bool:
        if not isinstance(value, list | tuple) or not (value or self.empty):
            return False
        return all(self.element.contains(v) for v in value)

    def describe(self, kind: str) -> str:
        what = "a list" if self.empty else "a non-empty list"
        integer = isinstance(self.element, Interval) and self.element.integer
        return f"{what} whose every element is {self.element.describe('integer' if integer else 'number')}"

    def outside(self) -> list[Any]:
        return ([] if self.empty else [[]]) + [[v] for v in self.element.outside()]


@dataclass(frozen=True)
class OrNone(Domain):
    """`inner`, or None."""

    inner: Domain

    def contains(self, value: Any) -> bool:
        return value is None or self.inner.contains(value)

    def describe(self, kind: str) -> str:
        return f"{self.inner.describe(kind)}, or None"

    def outside(self) -> list[Any]:
        return self.inner.outside()


@dataclass(frozen=True)
class Choices(Domain):
    """One of a fixed set of values."""

    options: tuple[Any, ...]

    def contains(self, value: Any) -> bool:
        return any(type(value) is type(o) and value == o for o in self.options)

    def describe(self, kind: str) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)

    def outside(self) -> list[Any]:
        sample = self.options[0]
        if isinstance(sample, str):
            return ["".join(self.options) + "?"]
        if isinstance(sample, int | float) and not isinstance(sample, bool):
            return [max(self.options) + 1]
        return []


def _interval(text: str, integer: bool, where: str) -> Interval:
    match = _INTERVAL.match(text)
    if match is None:
        raise RegistryError(
            f"{where}: domain {text!r} is not an interval like '[1, inf)', '(0, 1)' or '[0, 1)', "
            "a list of choices, 'each [a, b]' or 'any'"
        )
    opening, low, high, closing = match.groups()
    interval = Interval(float(low), float(high), opening == "[", closing == "]", integer)
    if interval.low > interval.high:
        raise RegistryError(f"{where}: domain {text!r} is empty (its low bound is above its high bound)")
    return interval


def parse_domain(declared: Any, default: Any, where: str) -> Domain:
    """The `Domain` a table declares for a hyperparameter whose default is `default`.

    `declared` is None when the table declares none: then any value of the
    default's type (finite, for a float). Raises `RegistryError` naming `where`
    for a malformed declaration or a default outside its own domain.
    """
    if isinstance(declared, str) and declared.endswith(" or none"):
        return OrNone(parse_domain(declared[: -len(" or none")], default, where))
    if declared is None:
        domain = Interval(-math.inf, math.inf, False, False) if isinstance(default, float) else ANY
    elif isinstance(declared, list):
        if not declared:
            raise RegistryError(f"{where}: an empty list of choices admits no value")
        domain = Choices(tuple(declared))
    elif not isinstance(declared, str):
        raise RegistryError(f"{where}: a domain is a string or a list of choices, got {declared!r}")
    elif declared.strip() == "any":
        domain = ANY
    elif declared.split(" ", 1)[0] in ("each", "list"):
        sample = default[0] if isinstance(default, list | tuple) and default else 0.0
        integer = isinstance(sample, int) and not isinstance(sample, bool)
        prefix, _, interval = declared.partition(" ")
        domain = Each(_interval(interval, integer, where), empty=prefix == "list")
    else:
        if isinstance(default, bool) or not isinstance(default, int | float):
            raise RegistryError(f"{where}: an interval domain needs a numeric default, got {default!r}")
        domain = _interval(declared, isinstance(default, int), where)
    if default is not None and not domain.contains(default):
        raise RegistryError(f"{where}: the default {default!r} is outside its own domain {declared!r}")
    return domain


def argument_type(declared: str, kind: type = int) -> Callable[[str], Any]:
    """An argparse ``type=`` that parses a `kind` and checks it against a domain.

    ``parser.add_argument("--steps", type=argument_type("[1, inf)"))`` makes
    ``--steps -5`` a usage error: "--steps: -5 is out of range: it must be an integer >= 1".
    """
    domain = _interval(declared, kind is int, f"argument_type({declared!r})")
    words = {int: "integer", float: "number"}

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an' if kind is int else 'a'} {words[kind]}") from None
        if not domain.contains(value):
            raise argparse.ArgumentTypeError(f"{text} is out of range: it must be {domain.describe(words[kind])}")
        return value

    parse.__name__ = words[kind]  # argparse names the type in its messages
    return parse


def check_count(value: Any, name: str, *, low: int = 1) -> int:
    """`value` if it is an integer >= `low`, else `InvalidParameterError` naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise InvalidParameterError(f"{name}={value!r} is out of range: it must be an integer >= {low}")
    return int(value)
