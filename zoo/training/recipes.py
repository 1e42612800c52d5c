"""Recipes: how ``zoo train NAME`` turns command-line options into a training run.

An architecture names its recipe in the registry (``recipe = "module:attr"``).
A recipe adds its own options (``--data``, ``--valid``, ...) to the common
ones below, then trains with `zoo.train` and saves the model. A recipe that
also implements `EvaluatingRecipe` scores saved models with ``zoo eval``.

Every numeric option is checked as it is parsed (``--steps -5`` is a usage
error naming the option and its range). An option that sets a hyperparameter
(``--dim`` for ``embedding_size``) is added with `add_hyperparameter_argument`
and checked against the model's own domain by `resolve_spec`, which a recipe
calls first thing, before it reads any data.

Every command spells a concept the same way (``--data``, ``--valid``, ``--out``,
``--lr``, ``--lowercase``, ...; the table in docs/cli.md). An old spelling stays
accepted for one release through `add_alias`: hidden from ``--help``, it parses
to the same option and warns ``deprecated: use --new``. ``--help`` shows each
option's default (`DefaultsFormatter`), a hyperparameter option's from the
registry's values for the model named (`show_defaults`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zoo.building.files import output_path
from zoo.errors import DataError
from zoo.naming.domains import argument_type
from zoo.training.selection import held_out_line

if TYPE_CHECKING:
    from zoo.naming.spec import ModelSpec

__all__ = [
    "DefaultsFormatter",
    "EvaluatingRecipe",
    "GivenOption",
    "HeldOutShare",
    "HyperparameterOption",
    "Recipe",
    "add_alias",
    "add_checkpoint_arguments",
    "add_common_arguments",
    "add_distributed_arguments",
    "add_encoding_argument",
    "add_epochs_argument",
    "add_hyperparameter_argument",
    "add_lowercase_arguments",
    "add_log_argument",
    "add_valid_size_argument",
    "epochs_to_run",
    "given",
    "hold_out",
    "held_out_size",
    "output_path",
    "resolve_spec",
    "seed_type",
    "show_defaults",
]

seed_type = argument_type("[0, 4294967295]")
"""The argparse ``type=`` of every ``--seed`` option: an integer `jax.random.key` takes, with room for ``seed + 2``."""


class Recipe(Protocol):
    """What an architecture's recipe object provides.

    A recipe may also set ``memory_footprint``: how many times its model's parameter bytes its
    training holds at once (default 4: the parameters, their gradients and Adam's two moments);
    ``zoo train`` refuses a model whose parameters, so scaled, pass the memory budget
    (`zoo.budget`) before building it.
    """

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this architecture's options (data files, sizes) to `parser`."""
        ...

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        """Train the model `name` with `overrides` as `options` say; return the saved file."""
        ...


class EvaluatingRecipe(Recipe, Protocol):
    """A recipe that can also score a saved model (``zoo eval MODEL_FILE --data FILE``).

    ``zoo eval`` adds ``--data`` (the evaluation file) and ``--json`` itself; a recipe
    whose `add_eval_arguments` adds an option with ``dest="data"`` describes the file
    its own way (spelled ``--data`` too).
    """

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this architecture's evaluation options (batch size, file format, ...)."""
        ...

    def evaluate(self, model: Any, options: argparse.Namespace) -> Mapping[str, float | str]:
        """Score `model` on ``options.data``; metric name -> value, printed in this order
        (a string, such as a metric's signature, is printed as it is)."""
        ...


def add_common_arguments(parser: argparse.ArgumentParser, *, steps: int, batch_size: int, lr: float) -> None:
    """Options every recipe accepts, with the recipe's defaults."""
    parser.add_argument("--out", type=output_path, required=True, help="where to save the trained model (.safetensors)")
    parser.add_argument(  # a recipe whose default is 0 steps counts its length in epochs instead
        "--steps",
        action=GivenOption,
        type=argument_type("[1, inf)" if steps else "[0, inf)"),
        default=steps,
        help=f"optimiser steps (default {steps}{'' if steps else ': as many as --epochs take'})",
    )
    parser.add_argument(
        "--batch-size", type=argument_type("[1, inf)"), default=batch_size, help=f"default {batch_size}"
    )
    parser.add_argument("--lr", type=argument_type("(0, inf)", float), default=lr, help=f"learning rate (default {lr})")
    parser.add_argument("--seed", type=seed_type, default=0, help="parameter and data-order seed")
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        default=[],
        help="a hyperparameter, dotted to scope it: --set encoder.num_layers=2",
    )
    add_checkpoint_arguments(parser, every=500, unit="steps")
    parser.add_argument(
        "--eval-every", type=argument_type("[0, inf)"), default=0, help="evaluate every N steps (0: at the end)"
    )
    parser.add_argument(
        "--minutes",
        type=argument_type("(0, inf)", float),
        default=None,
        help="time budget: stop at the first step after this many minutes of the run, save, and say so",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_log_argument(parser)
    add_distributed_arguments(parser)


_GIVEN_OPTIONS = "given_options"  # the Namespace attribute: the destinations of the GivenOption options given


class GivenOption(argparse._StoreAction):
    """An option whose default is a real value, printed and used like any other, that a recipe
    can still tell from one given on the command line (`given`): ``--steps`` beside ``--epochs``."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        super().__call__(parser, namespace, values, option_string)
        setattr(namespace, _GIVEN_OPTIONS, {*getattr(namespace, _GIVEN_OPTIONS, ()), self.dest})


def given(options: argparse.Namespace, dest: str) -> bool:
    """Whether the `GivenOption` stored under `dest` was given (rather than left at its default)."""
    return dest in getattr(options, _GIVEN_OPTIONS, ())


def add_epochs_argument(parser: argparse.ArgumentParser, *, default: int, stops: str = "") -> argparse.Action:
    """``--epochs N``: how many passes a recipe that counts in epochs makes (`epochs_to_run`);
    `stops` says what may end it sooner (``--patience usually stops sooner``)."""
    return parser.add_argument(
        "--epochs",
        action=GivenOption,
        type=argument_type("[1, inf)"),
        default=default,
        help=f"at most this many epochs, instead of --steps{f' ({stops})' if stops else ''}",
    )


def epochs_to_run(options: argparse.Namespace, per_epoch: int) -> int:
    """The epochs a run makes: ``--epochs``, or as many as ``--steps`` take (at least one) when
    ``--steps`` is given; both given is an `InvalidParameterError`."""
    from zoo.errors import InvalidParameterError

    if options.steps <= 0:
        return options.epochs
    if given(options, "epochs"):
        raise InvalidParameterError("give --steps or --epochs, not both")
    return max(1, options.steps // per_epoch)


class HeldOutShare:
    """The default of ``--valid-size``: a tenth of the examples, at most `at_most`. It prints as
    itself in ``--help`` and `held_out_size` applies it, so the default shown is the one used."""

    def __init__(self, at_most: int, what: str) -> None:
        self.at_most, self.what = at_most, what

    def count(self, available: int) -> int:
        return min(self.at_most, available // 10)

    @property
    def rule(self) -> str:
        return f"a tenth, at most {self.at_most:,}"

    def __str__(self) -> str:
        return f"a tenth of the {self.what}, at most {self.at_most:,}"


def add_valid_size_argument(
    parser: argparse.ArgumentParser, *, what: str, at_most: int, source: str = "--data"
) -> argparse.Action:
    """``--valid-size N``: how many of the `what` (``sentences``) of `source` a run holds out to
    score itself on when it has no ``--valid`` file; by default `HeldOutShare` (``a tenth, at most
    `at_most` ``); 0 holds out none. A recipe reads the count with `held_out_size`."""
    return parser.add_argument(
        "--valid-size",
        type=argument_type("[0, inf)"),
        default=HeldOutShare(at_most, what),
        metavar="N",
        help=f"{what} held out of {source} to score the run on, without --valid (0: none)",
    )


def hold_out(requested: int | HeldOutShare, available: int, *, what: str, source: str = "--data") -> tuple[int, str]:
    """How many of the `available` `what` of `source` a run holds out (`held_out_size`), and the
    line that says so: ``held out: 90 sentences (of the 900 in --data: a tenth, at most 1,000)``."""
    count = held_out_size(requested, available, what)
    how = requested.rule if isinstance(requested, HeldOutShare) else f"--valid-size {requested}"
    return count, held_out_line(count, what, f"of the {available:,} in {source}: {how}")


def held_out_size(requested: int | HeldOutShare, available: int, what: str = "examples") -> int:
    """How many of `available` examples a run holds out: `requested` exactly (``--valid-size N``),
    or the default's share. Holding out all of them is a `DataError` saying what to do."""
    from zoo.errors import DataError

    if isinstance(requested, HeldOutShare):
        return requested.count(available)
    if requested >= available > 0:
        raise DataError(
            f"--valid-size {requested} would hold out all {available:,} {what}, leaving none to train on: "
            "give a smaller --valid-size, or a --valid file"
        )
    return requested


def add_log_argument(parser: argparse.ArgumentParser) -> None:
    """``--log-file FILE``: a JSON-lines metrics log of the run (`zoo.training.progress`), checked at
    parse time; ``zoo train`` opens it around the recipe, so every training loop inside writes to it."""
    parser.add_argument(
        "--log-file",
        type=output_path,
        metavar="FILE",
        help="append one JSON record per log interval and evaluation (step, loss, rate, elapsed) to FILE",
    )


def add_distributed_arguments(parser: argparse.ArgumentParser) -> None:
    """``--coordinator HOST:PORT --num-processes N --process-id I`` and ``--coordinator-timeout``:
    one training run over several processes or machines (`zoo.training.distributed`)."""
    from zoo.training.distributed import coordinator_address, default_timeout

    group = parser.add_argument_group(
        "several processes", "one run over N processes (machines); SLURM and Open MPI jobs need none of these"
    )
    group.add_argument(
        "--coordinator",
        type=coordinator_address,
        metavar="HOST:PORT",
        help="address of process 0, which listens on PORT; the same on every process",
    )
    group.add_argument("--num-processes", type=argument_type("[1, inf)"), metavar="N", help="processes in the run")
    group.add_argument(
        "--process-id", type=argument_type("[0, inf)"), metavar="I", help="this process's number, 0 to N-1"
    )
    group.add_argument(
        "--coordinator-timeout",
        type=argument_type("(0, inf)", float),
        default=default_timeout(),
        metavar="SECONDS",
        help="how long to wait for the coordinator and the other processes (default ZOO_COORDINATOR_TIMEOUT or 300)",
    )


def add_checkpoint_arguments(parser: argparse.ArgumentParser, *, every: int, unit: str) -> None:
    """``--checkpoint FILE``, ``--checkpoint-every N`` (in the recipe's `unit`: steps, jobs, epochs)
    and ``--resume``: the training-state options of every recipe."""
    parser.add_argument("--checkpoint", type=output_path, help="training-state file for --resume")
    parser.add_argument(
        "--checkpoint-every",
        type=argument_type("[1, inf)"),
        default=every,
        help=f"write --checkpoint every N {unit} and at the end (default {every})",
    )
    parser.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")


def add_corpus_arguments(parser: argparse.ArgumentParser, *, min_count: int = 5) -> None:
    """Options of recipes that read a text corpus and build a word vocabulary (``options.corpus``)."""
    data = parser.add_argument(
        "--data",
        dest="corpus",
        type=Path,
        nargs="+",
        required=True,
        metavar="FILE",
        help="text files, plain or .gz, one sentence a line; folders and quoted globs ('corpus/*.txt.gz') too",
    )
    add_alias(parser, data, "--corpus")
    parser.add_argument(
        "--tokenizer", default=None, help="tokeniser name (default 'words': lowercase Unicode words; see docs)"
    )
    parser.add_argument(
        "--min-count",
        type=argument_type("[1, inf)"),
        default=min_count,
        help=f"drop words rarer than this (default {min_count})",
    )
    parser.add_argument(
        "--max-vocab", type=argument_type("[1, inf)"), default=None, help="keep at most this many words (most frequent)"
    )
    add_encoding_argument(parser)


def add_encoding_argument(parser: argparse.ArgumentParser) -> None:
    """``--encoding``: how a command's text files are decoded (``options.encoding``, default UTF-8)."""
    parser.add_argument(
        "--encoding",
        default="utf-8",
        type=_encoding,
        help="text encoding of the input files (default utf-8; e.g. latin-1, cp1252)",
    )


def _encoding(text: str) -> str:
    """`text` if Python knows the encoding, else argparse's refusal (status 2) saying so."""
    from zoo.data.textfile import check_codec

    try:
        check_codec(text, "strict")
    except DataError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_lowercase_arguments(
    parser: argparse.ArgumentParser | argparse._ActionsContainer, *, default: bool, what: str = "the text"
) -> argparse.Action:
    """``--lowercase`` / ``--no-lowercase``: whether `what` is lowercased (``options.lowercase``).

    Returns the ``--no-lowercase`` action (for `add_alias`: ``--keep-case``, ``--case-sensitive``).
    """
    state = "lowercased" if default else "kept as written"
    parser.add_argument(
        "--lowercase", action="store_true", default=default, help=f"lowercase {what} (default: {state})"
    )
    return parser.add_argument(
        "--no-lowercase", dest="lowercase", action="store_false", default=default, help=f"keep the case of {what}"
    )


def corpus_vocabulary(options: argparse.Namespace) -> Any:
    """Count the corpus of `options` (see `add_corpus_arguments`) and build its word vocabulary, with
    as many processes as ``--threads`` says (all cores without it); in a run of several processes
    each counts its share of the files."""
    from zoo.data.corpus import build_word_vocab, count_tokens

    several = "jax" in sys.modules and sys.modules["jax"].distributed.is_initialized()
    counts = count_tokens(
        list(options.corpus),
        options.tokenizer,
        encoding=options.encoding,
        workers=getattr(options, "threads", None),
        across_processes=several,
    )
    return build_word_vocab(counts, min_count=options.min_count, max_vocab=options.max_vocab)


_GIVEN = "hyperparameter_options"  # the Namespace attribute: hyperparameter -> (option, value)


class HyperparameterOption(argparse.Action):
    """An option that sets the model's hyperparameter `param`; see `add_hyperparameter_argument`.

    Parsing stores the value under the option's ``dest`` as usual and records
    ``param -> (option, value)`` for `resolve_spec`.
    """

    def __init__(self, option_strings: list[str], dest: str, *, param: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.param = param

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        setattr(namespace, self.dest, values)
        given = dict(getattr(namespace, _GIVEN, {}))
        given[self.param] = (option_string or self.option_strings[-1], values)
        setattr(namespace, _GIVEN, given)


def add_hyperparameter_argument(
    parser: argparse.ArgumentParser | argparse._ActionsContainer, flag: str, param: str, **kwargs: Any
) -> argparse.Action:
    """Add `flag`, which sets the hyperparameter `param` (``--dim`` sets ``embedding_size``).

    `kwargs` are `add_argument`'s (``type=int``, ``choices``, ``help``); there is
    no default: left out, the option keeps the model's value. The model's domain
    of `param` checks the value when the recipe calls `resolve_spec`; ``zoo train NAME
    --help`` shows NAME's value as the default (`show_defaults`). Returns the action
    (for `add_alias`).
    """
    return parser.add_argument(flag, action=HyperparameterOption, param=param, **kwargs)


def resolve_spec(name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> ModelSpec:
    """The spec of `name` that this run trains, checked before any data is read; a recipe calls it first.

    Moves the hyperparameter options given (`add_hyperparameter_argument`) into
    `overrides` (an option and a ``--set`` of the same key must agree) and checks each
    against its architecture's domain under the option's name (``--dim=0 is out of
    range: it must be an integer >= 1``); then resolves `name` with all of
    `overrides`, so that a ``--set`` key that is unknown or out of range fails
    here too. Raises `InvalidParameterError` or `UnknownParameterError`.
    """
    from zoo.errors import InvalidParameterError
    from zoo.naming.registry import default_registry
    from zoo.naming.resolve import architecture_of, coerce_param

    registry = default_registry()
    arch = architecture_of(registry, name)
    for param, (flag, value) in getattr(options, _GIVEN, {}).items():
        if param in overrides and overrides[param] != value:
            raise InvalidParameterError(
                f"{flag} {value} and --set {param}={overrides[param]} both set {param}: give one of them"
            )
        if param in arch.params:
            coerce_param(value, arch.params[param], flag, arch.domains.get(param), hint=False)
        overrides[param] = value
    return registry.describe(name, **overrides)


# --- one spelling per concept: old spellings as hidden aliases, defaults in --help -----------


class _Deprecating:
    """Mixed into an option's action by `add_alias`: a use under an old spelling warns first."""

    deprecated: dict[str, str]

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        new = self.deprecated.get(option_string)
        if new is not None:
            print(f"{parser.prog}: warning: {option_string} is deprecated: use {new}", file=sys.stderr)
        super().__call__(parser, namespace, values, option_string)  # type: ignore[misc]


_DEPRECATING: dict[type, type] = {}


def add_alias(
    parser: argparse.ArgumentParser | argparse._ActionsContainer, action: argparse.Action, *old: str
) -> argparse.Action:
    """Accept the `old` spellings of `action`'s option for one release (``--corpus`` for ``--data``).

    An old spelling is the same option: the same destination, type, group and
    required check (``--corpus F`` satisfies a required ``--data``); ``--help``
    and usage lines show only the new spelling; using the old one prints
    ``PROG: warning: --corpus is deprecated: use --data`` to standard error.
    `parser` is the parser (or group) that `action` was added to. Returns `action`.
    """
    for spelling in old:
        if spelling in parser._option_string_actions:
            raise ValueError(f"{spelling} is already an option of {getattr(parser, 'prog', 'this parser')}")
        parser._option_string_actions[spelling] = action
    if not isinstance(action, _Deprecating):
        cls = type(action)
        if cls not in _DEPRECATING:
            _DEPRECATING[cls] = type(f"Deprecating{cls.__name__}", (_Deprecating, cls), {})
        action.__class__ = _DEPRECATING[cls]
        action.deprecated = {}
    action.deprecated.update(dict.fromkeys(old, action.option_strings[0]))
    return action


def aliases_of(action: argparse.Action) -> dict[str, str]:
    """The old spellings `add_alias` gave `action`: old -> new (empty for most options)."""
    return dict(getattr(action, "deprecated", {}))


def _quiet(default: Any) -> bool:
    """Whether a default says nothing worth printing (unset, a flag's False, an empty list)."""
    return default is None or default is False or default is argparse.SUPPRESS or default == [] or default == ""


class DefaultsFormatter(argparse.HelpFormatter):
    """``--help`` that states every option's default: `` (default: X)`` after a help text
    that does not already name one (the parsers of ``zoo``, ``zoo train NAME``, ``zoo eval``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not action.option_strings or "default" in text or _quiet(action.default):
            return text
        return f"{text} (default: %(default)s)"


_STATED_DEFAULT = re.compile(r"\s*\(default[^)]*\)")


def show_defaults(parser: argparse.ArgumentParser, name: str) -> None:
    """Write into the help of each hyperparameter option of `parser` the value the model `name`
    has when the option is left out (``--dim ... (default: 100)``), read from the registry.

    A value is looked up among the architecture's hyperparameters, then the slots'
    (``slot.param``). A name the registry cannot resolve leaves the help as it is
    (training it fails later with the registry's own message).
    """
    from zoo.errors import ZooError
    from zoo.naming.registry import default_registry

    try:
        spec = default_registry().describe(name)
    except ZooError:
        return
    values: dict[str, Any] = {}
    for slot in spec.slots:
        values.update({f"{slot.slot}.{k}": v for k, v in slot.params.items()})
    values.update(spec.params)
    for action in parser._actions:
        if isinstance(action, HyperparameterOption) and action.param in values and action.help != argparse.SUPPRESS:
            value = values[action.param]
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            text = _STATED_DEFAULT.sub("", action.help or action.param)
            action.help = f"{text} (default: {shown.replace('%', '%%')})"
