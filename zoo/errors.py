"""The project's exception hierarchy: every error says what was wrong and what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "DataError",
    "DistributedError",
    "InvalidParameterError",
    "MemoryBudgetError",
    "NameSyntaxError",
    "PluginConflictError",
    "PluginError",
    "RecordError",
    "RegistryError",
    "TrainingDiverged",
    "TruncatedFileError",
    "UnknownKeyError",
    "UnknownNameError",
    "UnknownParameterError",
    "WeightsError",
    "ZooError",
    "close_matches",
]


class ZooError(Exception):
    """Base class of every error zoo raises on purpose."""


class NameSyntaxError(ZooError, ValueError):
    """A model name does not follow `arch(+component|+slot=component)*[.tag]`."""


class UnknownNameError(ZooError, KeyError):
    """A model, component, slot or plugin name that nobody registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownParameterError(ZooError, TypeError):
    """A hyperparameter override that the target does not accept."""


class InvalidParameterError(ZooError, ValueError):
    """A hyperparameter or option whose value lies outside its declared domain."""


class RegistryError(ZooError):
    """The registry tables are malformed or inconsistent."""


class PluginError(ZooError):
    """A plugin failed to load or to register."""


class PluginConflictError(PluginError):
    """Two plugins claim the same name."""


class RecordError(ZooError, ValueError):
    """A spec recorded as data (a file's metadata, a nested spec) is malformed or fits no installed entry."""


class WeightsError(ZooError):
    """A weights file is not a zoo file, is damaged, or does not fit its model."""


class TrainingDiverged(ZooError):
    """The loss or the gradients became NaN or infinite."""


class DataError(ZooError, ValueError):
    """Input data is malformed or inconsistent."""


class TruncatedFileError(DataError, EOFError):
    """A file ends before what its header promises (also an `EOFError`, which gensim raises there)."""


class UnknownKeyError(ZooError, KeyError):
    """A key (a word, a row number, a per-word attribute) that a table of vectors does not hold."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MemoryBudgetError(DataError):
    """Work sized from outside (a file's header, a flag, a hyperparameter) would allocate more
    memory than the budget allows (`zoo.budget`)."""


class DistributedError(ZooError, RuntimeError):
    """The processes of a multi-process run cannot find or agree with each other."""


def close_matches(word: str, candidates: Iterable[str], n: int = 3) -> str:
    """Return a ' Did you mean ...?' suffix, or '' when nothing is close."""
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=n, cutoff=0.6)
    if not matches:
        return ""
    quoted = ", ".join(repr(m) for m in matches)
    return f" Did you mean {quoted}?"
