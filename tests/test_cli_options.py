"""Every numeric option is checked before it costs anything.

The options are discovered from the parsers the commands build, so a new
numeric option without a checked type fails here: an out-of-range value must be
a usage error (status 2) that names the option, and a hyperparameter reached
through an option or ``--set`` must fail, naming it and its range, before any
data is read.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from zoo.cli.eval_cmd import eval_parser
from zoo.cli.main import build_parser, main
from zoo.errors import InvalidParameterError
from zoo.naming.registry import default_registry
from zoo.naming.spec import import_factory
from zoo.training.recipes import HyperparameterOption

CANDIDATES = ["0", "-5", "nan", "inf"]
"""Values fed to every numeric option; those outside its domain must be usage errors."""

UNBOUNDED: dict[str, str] = {}
"""Options (``"--flag"``) whose every finite value of their kind is meaningful, with the reason; none so far."""


def exit_status(argv: Sequence[str]) -> int:
    """What ``zoo ARGV`` exits with: its return value, or the status of a usage error."""
    try:
        return main(list(argv))
    except SystemExit as stop:
        return int(stop.code or 0)


class _Parsing(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parser_of(argv: Sequence[str], monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser ``zoo ARGV`` builds for its options (``zoo train NAME``, ``zoo demo NAME``), caught as it parses."""

    def caught(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> None:
        raise _Parsing(self)

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", caught)
        with pytest.raises(_Parsing) as parsing:
            main(list(argv))
    return parsing.value.parser


def numeric_kind(action: argparse.Action) -> type | None:
    """int or float for an option whose values are numbers, else None (paths, choices, flags, text)."""
    if not action.option_strings or action.type is None or action.nargs == 0:
        return None
    for probe in ("1", "2", "100", "0.5", "0"):
        try:
            value = action.type(probe)
        except (argparse.ArgumentTypeError, TypeError, ValueError):
            continue
        if isinstance(value, bool):
            return None
        return type(value) if isinstance(value, int | float) else None
    return None


def rejects(action: argparse.Action, text: str) -> bool:
    try:
        action.type(text)
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return True
    return False


def numeric_options(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.Action, type]]:
    """The numeric options of `parser` that argparse itself checks (not `HyperparameterOption`)."""
    for action in parser._actions:
        kind = numeric_kind(action)
        if kind is not None and not isinstance(action, HyperparameterOption):
            yield action, kind


def problems(parser: argparse.ArgumentParser, run: Any, capsys: pytest.CaptureFixture) -> list[str]:
    """What is wrong with the numeric options of `parser`; `run(args)` parses ``args`` as the command does."""
    found = []
    for action, kind in numeric_options(parser):
        flag = "/".join(action.option_strings)
        if action.option_strings[-1] in UNBOUNDED:
            continue
        required = ["-5"] + (["nan", "inf"] if kind is float else [])
        missing = [v for v in required if not rejects(action, v)]
        if missing:
            found.append(
                f"{parser.prog} {flag}: accepts {missing}; give it a checked type (zoo.naming.domains.argument_type)"
            )
        for value in (v for v in CANDIDATES if rejects(action, v)):
            capsys.readouterr()
            status = run([f"{action.option_strings[-1]}={value}"])
            err = capsys.readouterr().err
            if status != 2 or f"argument {flag}:" not in err or value not in err:
                found.append(f"{parser.prog} {flag}={value}: status {status}, message {err.strip()[-200:]!r}")
    return found


def command_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``zoo``'s, with the command words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_parsers(sub, (*path, name))


def recipe_architectures() -> list[Any]:
    return sorted((a for a in default_registry().architectures.values() if a.recipe), key=lambda a: a.name)


def required_arguments(parser: argparse.ArgumentParser, tmp_path: Path) -> list[str]:
    """The required options of a recipe's parser: missing data files and an output path."""
    args = []
    groups = [g._group_actions[0] for g in parser._mutually_exclusive_groups if g.required]
    for action in [*(a for a in parser._actions if a.required and a.option_strings), *groups]:
        name = "model.safetensors" if action.dest == "out" else f"missing-{action.dest}.txt"
        args += [action.option_strings[-1], str(tmp_path / name)]
    return args


# --- parse-time checks, discovered from the parsers --------------------------------------


def test_every_command_option_is_checked(capsys):
    found = []
    for path, parser in command_parsers(build_parser()):
        found += problems(parser, lambda args, path=path: exit_status([*path, *args]), capsys)
    assert not found, "\n".join(found)


def test_every_train_option_is_checked(monkeypatch, capsys):
    found, seen = [], set()
    for arch in recipe_architectures():
        if arch.recipe in seen:  # architectures sharing a recipe share its parser
            continue
        seen.add(arch.recipe)
        parser = parser_of(["train", arch.name], monkeypatch)
        assert any(True for _ in numeric_options(parser)), f"zoo train {arch.name} has no numeric option?"
        found += problems(parser, lambda args, name=arch.name: exit_status(["train", name, *args]), capsys)
    assert not found, "\n".join(found)


def test_every_eval_option_is_checked(capsys):
    found = []
    for arch in recipe_architectures():
        recipe = import_factory(arch.recipe, plugin=arch.plugin)
        if callable(getattr(recipe, "evaluate", None)):
            parser = eval_parser(f"zoo eval {arch.name}", recipe)
            found += problems(parser, lambda args, parser=parser: exit_status_of(parser, args), capsys)
    assert not found, "\n".join(found)


def exit_status_of(parser: argparse.ArgumentParser, args: list[str]) -> int:
    try:
        parser.parse_args(args)
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


def test_every_demo_option_is_checked(monkeypatch, capsys):
    found = []
    for name in sorted(default_registry().demos):
        parser = parser_of(["demo", name], monkeypatch)
        found += problems(parser, lambda args, name=name: exit_status(["demo", name, *args]), capsys)
    assert not found, "\n".join(found)


def test_unchecked_options_are_found(capsys):
    """The walk above can fail: plain ``type=int`` and ``type=float`` options are reported."""
    parser = argparse.ArgumentParser(prog="zoo example")
    parser.add_argument("--count", type=int)
    parser.add_argument("--rate", type=float)
    found = problems(parser, lambda args: exit_status_of(parser, args), capsys)
    assert any("--count: accepts ['-5']" in p for p in found)
    assert any("--rate: accepts ['-5', 'nan', 'inf']" in p for p in found)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "-5"], "argument --steps: -5 is out of range: it must be an integer >= 1"),
        (["--batch-size", "0"], "argument --batch-size: 0 is out of range: it must be an integer >= 1"),
        (["--lr", "nan"], "argument --lr: nan is out of range: it must be a finite number > 0"),
        (["--lr", "inf"], "argument --lr: inf is out of range"),
        (["--seed", "-1"], "argument --seed: -1 is out of range: it must be an integer in [0, 4294967295]"),
        (["--checkpoint-every", "0"], "argument --checkpoint-every: 0 is out of range"),
        (["--eval-every", "-1"], "argument --eval-every: -1 is out of range: it must be an integer >= 0"),
    ],
)
def test_common_options_are_usage_errors(tmp_path, capsys, argv, message):
    out = tmp_path / "model.safetensors"
    assert exit_status(["train", "seq2seq", "--task", "reversal", "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_recipe_counted_in_epochs_takes_zero_steps(tmp_path, monkeypatch):
    parser = parser_of(["train", "lstm-lm"], monkeypatch)
    options = parser.parse_args(["--data", "x", "--out", str(tmp_path / "m.safetensors"), "--steps", "0"])
    assert options.steps == 0
    with pytest.raises(SystemExit):
        parser.parse_args(["--data", "x", "--out", str(tmp_path / "m.safetensors"), "--steps", "-1"])


# --- hyperparameters reached through options or --set: checked before any data is read ---


def out_of_domain(arch: Any, param: str, kind: type) -> list[str]:
    domain = arch.domains.get(param)
    values = {str(v) for v in (domain.outside() if domain is not None else [])}
    for text in CANDIDATES:
        try:
            value = kind(text)
        except ValueError:
            continue
        if domain is None or not domain.contains(value):
            values.add(text)
    return sorted(values)


def test_every_hyperparameter_option_is_checked_before_reading(tmp_path, monkeypatch, capsys):
    found, checked = [], 0
    for arch in recipe_architectures():
        parser = parser_of(["train", arch.name], monkeypatch)
        required = required_arguments(parser, tmp_path)
        for action in parser._actions:
            if not isinstance(action, HyperparameterOption):
                continue
            flag = action.option_strings[-1]
            if action.param not in arch.params:
                found.append(f"zoo train {arch.name} {flag}: {action.param!r} is not a hyperparameter of it")
                continue
            if action.type not in (int, float):
                continue
            for value in out_of_domain(arch, action.param, action.type):
                capsys.readouterr()
                status = exit_status(["train", arch.name, *required, f"{flag}={value}"])
                err = capsys.readouterr().err
                checked += 1
                if status != 2 or f"{flag}=" not in err or "is out of range: it must be" not in err:
                    found.append(f"zoo train {arch.name} {flag}={value}: status {status}, {err.strip()[-200:]!r}")
    assert not found, "\n".join(found)
    assert checked >= 20
    assert not (tmp_path / "model.safetensors").exists()


def test_every_recipe_resolves_its_spec_before_reading(tmp_path, monkeypatch, capsys):
    """An unknown ``--set`` key fails (status 2, the key named) before the missing data file is noticed."""
    found = []
    for arch in recipe_architectures():
        required = required_arguments(parser_of(["train", arch.name], monkeypatch), tmp_path)
        capsys.readouterr()
        status = exit_status(["train", arch.name, *required, "--set", "hiden_size=3"])
        err = capsys.readouterr().err
        if status != 2 or "'hiden_size' is not a hyperparameter" not in err:
            found.append(f"zoo train {arch.name} --set hiden_size=3: status {status}, {err.strip()[-200:]!r}")
    assert not found, "\n".join(found)


def test_a_bad_dim_fails_fast_on_a_large_corpus(tmp_path, capsys):
    corpus = tmp_path / "big.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog and runs far away\n" * 200_000)  # 12 MB
    out = tmp_path / "vectors.safetensors"
    argv = ["train", "word2vec-skipgram", "--data", str(corpus), "--dim", "0", "--out", str(out)]
    exit_status([*argv[:3], str(tmp_path / "missing.txt"), *argv[4:]])  # imports the recipe
    capsys.readouterr()
    start = time.perf_counter()
    assert exit_status(argv) == 2
    elapsed = time.perf_counter() - start
    assert "--dim=0 is out of range: it must be an integer in [1, 65536]" in capsys.readouterr().err
    assert elapsed < 1.0  # counting the corpus alone takes seconds
    assert not out.exists()


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20)
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--lr", "nan"], "--lr=nan is out of range: it must be a finite number >= 0"),
        (["--lr", "-1"], "--lr=-1.0 is out of range: it must be a finite number >= 0"),
        (["--dim", "0"], "--dim=0 is out of range: it must be an integer in [1, 65536]"),
        (["--sample", "1.5"], "--sample=1.5 is out of range: it must be a number in [0, 1]"),
        (["--threads", "0"], "argument --threads: 0 is out of range: it must be an integer >= 1"),
    ],
)
def test_word2vec_options_fail_before_training(corpus, tmp_path, capsys, argv, message):
    """On a real corpus: without the checks, these trained and saved (NaN vectors, empty matrices, ...)."""
    out = tmp_path / "vectors.safetensors"
    args = ["train", "word2vec-skipgram", "--data", str(corpus), "--min-count", "1", "--out", str(out), *argv]
    assert exit_status(args) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "setting", "message"),
    [
        ("seq2seq", "hidden_size=0", "hidden_size=0 is out of range: it must be an integer >= 1"),
        ("seq2seq", "encoder.num_layers=0", "encoder.num_layers=0 is out of range: it must be an integer in [1, 64]"),
        ("seq2seq", "dropout=1.5", "dropout=1.5 is out of range: it must be a number in [0, 1)"),
        ("seq2seq", "label_smoothing=-1", "label_smoothing=-1.0 is out of range: it must be a number in [0, 1)"),
        ("lstm-lm", "hidden_size=0", "hidden_size=0 is out of range: it must be an integer >= 1"),
        ("bilstm-tagger", "dropout=1.5", "dropout=1.5 is out of range"),
        ("textcnn", "dropout=nan", "dropout=nan is out of range"),
        ("glove", "x_max=0.0", "x_max=0.0 is out of range: it must be a finite number > 0"),
    ],
)
def test_set_values_fail_before_the_data_is_read(tmp_path, monkeypatch, capsys, name, setting, message):
    required = required_arguments(parser_of(["train", name], monkeypatch), tmp_path)
    assert exit_status(["train", name, *required, "--set", setting]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "or --set " in err  # how to change it
    assert "no such file" not in err.lower()
    assert not (tmp_path / "model.safetensors").exists()


def test_a_hyperparameter_option_and_a_set_of_it_must_agree(corpus, tmp_path, monkeypatch):
    from zoo.training.recipes import resolve_spec

    parser = parser_of(["train", "word2vec-skipgram"], monkeypatch)
    options = parser.parse_args(["--data", str(corpus), "--out", str(tmp_path / "v.safetensors"), "--dim", "7"])
    with pytest.raises(InvalidParameterError, match=r"--dim 7 and --set embedding_size=0 both set embedding_size"):
        resolve_spec("word2vec-skipgram", options, {"embedding_size": 0, "window": 2})
    overrides = {"embedding_size": 7, "window": 2}
    spec = resolve_spec("word2vec-skipgram", options, overrides)
    assert spec.params["embedding_size"] == 7 and spec.params["window"] == 2
    assert overrides == {"embedding_size": 7, "window": 2}
    untouched = parser.parse_args(["--data", str(corpus), "--out", str(tmp_path / "v.safetensors")])
    assert options.dim == 7 and untouched.dim is None
    assert resolve_spec("word2vec-skipgram", untouched, {}).params["embedding_size"] == 100


def test_seed_bounds():
    from zoo.training.recipes import seed_type

    assert seed_type("0") == 0 and seed_type("4294967295") == 4294967295  # jax.random.key takes these
    for bad in ("-1", "4294967296", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            seed_type(bad)


# --- one spelling per concept (docs/cli.md's "Options every command spells the same way") ---

SPELLINGS: dict[str, tuple[str, set[str]]] = {
    # concept: (the spelling every command uses, spellings no parser may show)
    "input data": ("--data", {"--corpus", "--pairs", "--input", "--train", "--train-file", "--text-file"}),
    "validation data": ("--valid", {"--dev", "--validation", "--valid-file", "--dev-file", "--heldout"}),
    "held-out share of --data": ("--valid-size / --valid-fraction", {"--dev-fraction", "--dev-size", "--holdout"}),
    "output": ("--out", {"--output", "--output-file", "-o"}),
    "learning rate": ("--lr / --min-lr", {"--alpha", "--min-alpha", "--learning-rate", "--eta"}),
    "length of a run": ("--epochs / --steps / --minutes", {"--epoch", "--iter", "--iterations", "--max-steps"}),
    "seed": ("--seed", {"--random-seed", "--rng-seed"}),
    "threads": ("--threads", {"--workers", "--thread", "--jobs", "--num-threads"}),
    "tokenizer": ("--tokenizer", {"--tokeniser", "--tokenize"}),
    "case": ("--lowercase / --no-lowercase", {"--keep-case", "--case-sensitive", "--lower", "--uncased"}),
    "number of outputs": ("--n-best", {"--samples", "--topn", "--num-samples", "--nbest"}),
    "analogy method": ("--method", {"--cosmul", "--cosadd"}),
    "length penalty": ("--length-penalty", {"--alpha", "--length-normalisation"}),
    "GloVe's weighting exponent": ("--x-exponent", {"--alpha"}),
}
"""Each concept's one spelling; the old ones stay for a release as hidden aliases (`add_alias`)."""


def every_parser(monkeypatch: pytest.MonkeyPatch) -> Iterator[argparse.ArgumentParser]:
    """Every parser a user meets: each command's, ``zoo train NAME`` for every architecture with a
    recipe, ``zoo eval`` for every recipe that scores, ``zoo demo NAME`` for every demo."""
    for _, parser in command_parsers(build_parser()):
        yield parser
    for arch in recipe_architectures():
        yield parser_of(["train", arch.name], monkeypatch)
        recipe = import_factory(arch.recipe, plugin=arch.plugin)
        if callable(getattr(recipe, "evaluate", None)):
            yield eval_parser(f"zoo eval {arch.name}", recipe)
    for name in sorted(default_registry().demos):
        yield parser_of(["demo", name], monkeypatch)


def visible_spellings(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions if a.help != argparse.SUPPRESS for s in a.option_strings}


def test_every_parser_spells_each_concept_one_way(monkeypatch):
    found = []
    for parser in every_parser(monkeypatch):
        shown = visible_spellings(parser)
        for concept, (spelling, others) in SPELLINGS.items():
            found += [f"{parser.prog}: {s} is shown; {concept} is spelled {spelling}" for s in sorted(shown & others)]
    assert not found, "\n".join(found)


ROOT = Path(__file__).resolve().parent.parent


def section(page: Path, heading: str) -> str:
    """The text of `page` under `heading` (a ``## `` line), up to the next heading of that level."""
    return page.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_options_table_shows_each_concepts_one_spelling():
    table = section(ROOT / "docs" / "cli.md", "Options every command spells the same way").split("\n\n")[0]
    shown = set(re.findall(r"--[a-z][a-z-]*", table))
    for concept, (spelling, others) in SPELLINGS.items():
        missing = {s.strip() for s in spelling.split("/")} - shown
        assert not missing, f"docs/cli.md's options table lacks {sorted(missing)} ({concept})"
        assert not shown & others, f"docs/cli.md's options table shows {sorted(shown & others)} ({concept})"


def test_the_readme_command_table_lists_every_command():
    block = section(ROOT / "README.md", "The command line").split("```text\n", 1)[1].split("```", 1)[0]
    listed = {line.split()[1] for line in block.splitlines() if line.startswith("zoo ")}
    commands = {words[0] for words, _ in command_parsers(build_parser()) if len(words) == 1}
    assert listed == commands, f"README.md's command table: missing {commands - listed}, unknown {listed - commands}"


def example_values(action: argparse.Action) -> list[str]:
    """Arguments `action` accepts (none for a flag)."""
    if action.nargs == 0:
        return []
    if action.choices:
        return [str(list(action.choices)[-1])]
    for probe in ("2", "0.5", "x"):
        try:
            if action.type is None or action.type(probe) is not None:
                return [probe]
        except (argparse.ArgumentTypeError, TypeError, ValueError):
            continue
    raise AssertionError(f"no example value for {action.option_strings}")


def parsed(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, Any]:
    """`argv` parsed by `parser` with its required options and groups waived (only `argv` matters);
    a hyperparameter option's record without the spelling used (which its errors name)."""
    actions = [(a, a.required) for a in parser._actions]
    groups = [(g, g.required) for g in parser._mutually_exclusive_groups]
    try:
        for a, _ in actions:
            a.required = False
        for g, _ in groups:
            g.required = False
        options = vars(parser.parse_known_args(argv)[0])
    finally:
        for a, required in actions:
            a.required = required
        for g, required in groups:
            g.required = required
    given = options.pop("hyperparameter_options", {})
    return {**options, "hyperparameters": {param: value for param, (_, value) in given.items()}}


def test_every_old_spelling_parses_as_the_new_one_and_warns(monkeypatch, capsys):
    from zoo.training.recipes import aliases_of

    found, checked = [], set()
    for parser in every_parser(monkeypatch):
        for spelling, action in parser._option_string_actions.items():
            old = aliases_of(action)
            if spelling not in old:
                if spelling not in action.option_strings:
                    found.append(f"{parser.prog}: {spelling} reaches {action.option_strings} but warns of nothing")
                continue
            values = example_values(action)
            capsys.readouterr()
            before = parsed(parser, [spelling, *values])
            warned = capsys.readouterr().err
            after = parsed(parser, [*old[spelling].split(), *values])
            checked.add(spelling)
            if before != after:
                found.append(f"{parser.prog}: {spelling} {values} gives {before}, {old[spelling]} gives {after}")
            if f"warning: {spelling} is deprecated: use {old[spelling]}" not in warned:
                found.append(f"{parser.prog}: {spelling} does not warn: {warned!r}")
            if spelling in visible_spellings(parser) - set(aliases_of(action).values()):
                found.append(f"{parser.prog}: the old spelling {spelling} shows in --help")
    assert not found, "\n".join(found)
    expected = {"--corpus", "--pairs", "--dev-fraction", "--keep-case", "--alpha", "--min-alpha", "--output"}
    assert expected | {"--samples", "--topn", "--cosmul", "--case-sensitive"} <= checked


def test_an_old_spelling_trains_as_the_new_one(tmp_path, capsys):
    """``--corpus`` (now ``--data``) satisfies the required option and trains the same vectors."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20)
    common = ["--min-count", "1", "--dim", "4", "--epochs", "1", "--quiet", "--backend", "jax"]
    old, new = tmp_path / "old.safetensors", tmp_path / "new.safetensors"
    assert main(["train", "word2vec-skipgram", "--corpus", str(corpus), "--out", str(old), *common]) == 0
    assert "warning: --corpus is deprecated: use --data" in capsys.readouterr().err
    assert main(["train", "word2vec-skipgram", "--data", str(corpus), "--out", str(new), *common]) == 0
    assert "deprecated" not in capsys.readouterr().err
    from zoo.vectors import KeyedVectors

    assert (KeyedVectors.load(old).vectors == KeyedVectors.load(new).vectors).all()


def test_help_shows_concrete_defaults(monkeypatch):
    found = []
    for parser in every_parser(monkeypatch):
        text = parser.format_help()
        if "the model's" in text:
            found.append(f'{parser.prog} --help says "the model\'s" instead of a value')
        for action in parser._actions:
            if isinstance(action, HyperparameterOption) and "(default: " not in (action.help or ""):
                found.append(f"{parser.prog} {action.option_strings[0]}: no default in its help {action.help!r}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("word2vec-skipgram", ["--dim DIM", "(default: 100)", "--lr LR", "(default: 0.025)", "(default: 0.0001)"]),
        ("glove", ["context window (default: 10)", "(GloVe's alpha) (default: 0.75)"]),
        ("lstm-lm", ["(default: word)"]),
        ("char-lstm-lm", ["(default: char)"]),  # a preset's value, not its architecture's
    ],
)
def test_help_defaults_come_from_the_registry(name, shown, monkeypatch):
    text = " ".join(parser_of(["train", name], monkeypatch).format_help().split())
    for piece in shown:
        assert piece in text


def test_the_length_penalty_default_is_beams():
    from zoo.cli.translate_cmd import BEAM_ALPHA

    assert default_registry().components["beam"].params["alpha"] == BEAM_ALPHA
    recipe = import_factory(default_registry().architectures["seq2seq"].recipe, plugin="seq2seq")
    assert f"default {BEAM_ALPHA}, beam's alpha" in eval_parser("zoo eval m", recipe).format_help()
