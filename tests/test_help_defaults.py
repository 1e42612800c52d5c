"""Every default ``zoo train NAME --help`` prints is the one the run uses.

Each model name with a recipe gets the parser the command line builds. For every
option whose help states a default: a hyperparameter option's is the value of
the spec the run trains (`resolve_spec`, no option given); any other option's is
its parser default (what ``options`` holds when it is left out), so a default
written into a help text by hand cannot drift from the code. An option whose
parser default is None is decided by the recipe at run time: its help may say
so in words, and a figure in it must be one `RUN_TIME` checks against the code.
"""

from __future__ import annotations

import argparse
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import zoo
from zoo.data.vocab import Vocab
from zoo.naming.registry import default_registry
from zoo.naming.resolve import architecture_of
from zoo.naming.spec import import_factory
from zoo.training.recipes import DefaultsFormatter, HyperparameterOption, resolve_spec, show_defaults

STATED = re.compile(r"\bdefault:? ([^;)]+)")
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")


def _with_recipes() -> list[str]:
    registry = default_registry()
    return [n for n in registry.list_models() if architecture_of(registry, n).recipe is not None]


NAMES = _with_recipes()


def parser_of(name: str) -> argparse.ArgumentParser:
    """``zoo train NAME``'s parser, built as `zoo.cli.train_cmd` builds it."""
    arch = architecture_of(default_registry(), name)
    parser = argparse.ArgumentParser(prog=f"zoo train {name}", formatter_class=DefaultsFormatter)
    import_factory(arch.recipe, plugin=arch.plugin).add_arguments(parser)
    show_defaults(parser, name)
    return parser


def helps(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.Action, str]]:
    """Each option's help as ``--help`` prints it (``%(default)s`` filled in)."""
    formatter = parser._get_formatter()
    return {
        a.option_strings[0]: (a, formatter._expand_help(a))
        for a in parser._actions
        if a.option_strings and a.help and a.help != argparse.SUPPRESS
    }


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


def _states(stated: str, value: object) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) in _numbers(stated)
    return str(value) in stated


def _fasttext_family_streams(name: str) -> object:
    from zoo_word2vec.fit import _algorithm

    vocab = Vocab.build([["a", "b", "c"]], specials=())
    model = eqx.filter_eval_shape(lambda: zoo.build(name, key=jax.random.key(0), vocab=vocab))
    return _algorithm(model).streams


def _textcnn_learning_rates(name: str) -> object:
    """The rates the help names are those `textcnn_optimizer` takes when ``--lr`` is left out."""
    from zoo_textcnn.optim import LEARNING_RATES, textcnn_optimizer

    vocab = {"words": Vocab.build([["good", "bad"]], specials=("pad", "unk")), "labels": Vocab(["n", "p"], specials={})}
    tiny = {"embedding_size": 4, "maps": [2], "encoder.widths": [2]}
    params = eqx.filter(zoo.build(name, key=jax.random.key(0), vocab=vocab, **tiny), eqx.is_inexact_array)
    grads = jax.tree.map(lambda x: jnp.linspace(-2.0, 3.0, x.size).reshape(x.shape), params)
    for optimizer, rate in LEARNING_RATES.items():
        left_out, given = textcnn_optimizer(optimizer), textcnn_optimizer(optimizer, learning_rate=rate)
        a = left_out.update(grads, left_out.init(params), params)[0]
        b = given.update(grads, given.init(params), params)[0]
        same = jax.tree.leaves(jax.tree.map(lambda x, y: bool(jnp.array_equal(x, y)), a, b))
        assert all(same), f"--lr left out is not {rate:g} with {optimizer}"
    return list(LEARNING_RATES.values())


def _corpus_tokenizer(name: str) -> object:
    from zoo.data.tokenize import BUILTIN_TOKENIZERS, DEFAULT_TOKENIZER, get_tokenizer

    assert get_tokenizer(None) is BUILTIN_TOKENIZERS[DEFAULT_TOKENIZER]
    return DEFAULT_TOKENIZER


RUN_TIME = {
    ("zoo_word2vec.recipe:recipe", "--streams"): _fasttext_family_streams,
    ("zoo_textcnn.recipe:recipe", "--lr"): _textcnn_learning_rates,
    ("zoo_word2vec.recipe:recipe", "--tokenizer"): _corpus_tokenizer,
    ("zoo_glove.recipe:recipe", "--tokenizer"): _corpus_tokenizer,
    ("zoo_ppmi.recipe:recipe", "--tokenizer"): _corpus_tokenizer,
    ("zoo_seq2seq.recipe:recipe", "--tokenizer"): lambda name: zoo.describe(name).params["tokenizer"],
}
"""Options whose parser default is None and whose help names what the recipe then uses: the
value (or values) the code uses, each of which the help must name."""


def _spec_values(name: str) -> dict[str, object]:
    spec = resolve_spec(name, argparse.Namespace(), {})  # the run's spec when no option sets a hyperparameter
    values = {f"{slot.slot}.{k}": v for slot in spec.slots for k, v in slot.params.items()}
    return {**values, **spec.params}


@pytest.mark.parametrize("name", NAMES)
def test_every_default_help_prints_is_the_one_the_run_uses(name, monkeypatch):
    monkeypatch.delenv("ZOO_COORDINATOR_TIMEOUT", raising=False)
    recipe = architecture_of(default_registry(), name).recipe
    spec = _spec_values(name)
    checked = []
    for option, (action, text) in helps(parser_of(name)).items():
        stated = STATED.search(text)
        if stated is None or isinstance(action.default, bool):  # flags: their help is written from the default
            continue
        stated = stated.group(1).strip()
        where = f"zoo train {name} {option}: --help says {text!r}"
        if isinstance(action, HyperparameterOption):
            value = spec[action.param]
            assert stated == (str(value).lower() if isinstance(value, bool) else str(value)), (
                f"{where}; trains {value!r}"
            )
        elif action.default is not None:
            assert _states(stated, action.default), f"{where}; the option's default is {action.default!r}"
        elif (recipe, option) in RUN_TIME:
            used = RUN_TIME[recipe, option](name)
            for value in used if isinstance(used, list) else [used]:
                assert _states(text, value), f"{where}; left out, the run uses {value!r}"
        else:
            assert not _numbers(stated), f"{where}; its default is None: which figure does the run use?"
        checked.append(option)
    assert checked, f"zoo train {name} --help states no default"


def test_the_check_catches_a_help_that_names_another_default():
    parser = argparse.ArgumentParser(formatter_class=DefaultsFormatter)
    parser.add_argument("--valid-size", type=int, default=100, help="held out (default 1000)")
    parser.add_argument("--steps", type=int, default=None, help="optimiser steps (default 3000)")
    (size, size_help), (steps, steps_help) = helps(parser)["--valid-size"], helps(parser)["--steps"]
    assert not _states(STATED.search(size_help).group(1), size.default)
    assert _numbers(STATED.search(steps_help).group(1)) == [3000.0] and steps.default is None
    fine = helps(parser_of("bilstm-tagger"))["--valid-size"][1]
    assert "(default: a tenth of the sentences, at most 1,000)" in fine
