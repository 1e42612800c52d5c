"""Every built-in component and model names its operations: ``jax.named_scope`` with its
registry name (or class), found in the lowered program of one jitted call."""

from __future__ import annotations

import re

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import zoo
from zoo.naming.registry import default_registry
from zoo.naming.resolve import architecture_of


def build(name: str):
    """`name` at its architecture's small test sizes, built abstractly (shapes only: lowering needs no values)."""
    params = dict(architecture_of(default_registry(), name).test)
    return eqx.filter_eval_shape(lambda: zoo.build(name, key=jax.random.key(0), **params))


def lowered_text(fn, model, *args) -> str:
    """The lowered program of ``jit(fn)(model, *args)``, with its operations' locations."""
    params, static = eqx.partition(model, lambda x: isinstance(x, jax.ShapeDtypeStruct))
    lowered = jax.jit(lambda p, *a: fn(eqx.combine(p, static), *a)).lower(params, *args)
    return lowered.as_text(debug_info=True)


def scopes(text: str) -> set[str]:
    """The name-stack entries of a lowered program's operations (``vmap(lstm)`` counts as ``lstm``).

    An operation's location is its name stack and its name, ``jit(f)/lm/lstm/dot_general``
    (relative to its function inside a nested jit: ``vmap(seq2seq.decode)/greedy/while``).
    """
    names = set()
    for location in re.findall(r'loc\("([^"/][^"]*/[^"]*)"', text):  # a name stack, not a file path
        for entry in location.split("/")[:-1]:
            while (inner := re.sub(r"^(?:vmap|jvp|transpose)\((.*)\)$", r"\1", entry)) != entry:
                entry = inner
            names.add(entry)
    return names


def example_batch(model):
    return jax.eval_shape(lambda: model.example_batch(key=jax.random.key(1)))


def test_a_language_model_call_is_named_by_its_architecture_and_components():
    model = build("lstm-lm")
    ids = jax.ShapeDtypeStruct((7,), jnp.int32)
    mask = jax.ShapeDtypeStruct((7,), jnp.bool_)
    text = lowered_text(lambda m, i, k: m(i, k, m.init_state()), model, ids, mask)
    assert "/lm/token-embedding/" in text and "/lm/lstm/" in text  # nested: the model's scope holds its parts


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("lstm-lm", {"lm.loss", "token-embedding", "lstm"}),
        ("gru-lm", {"lm.loss", "gru"}),
        ("rnn-lm", {"lm.loss", "rnn"}),
        ("tcn-lm", {"tcn-lm.loss", "TemporalBlock", "CausalConv1d", "token-embedding"}),
        ("textcnn", {"textcnn.loss", "textcnn", "cnn", "token-embedding"}),
        ("bilstm-tagger", {"bilstm-tagger.loss", "bilstm-tagger", "recurrent", "lstm", "token-embedding"}),
        ("elmo", {"elmo.loss", "lstmp", "cnn", "Highway"}),
        ("ppmi-svd", {"ppmi-svd.loss"}),
        ("seq2seq", {"seq2seq.loss", "seq2seq", "seq2seq.encode", "recurrent", "lstm", "token-embedding"}),
    ],
)
def test_a_training_loss_is_named_by_its_model_and_components(name, expected):
    model = build(name)
    found = scopes(lowered_text(lambda m, b: m.loss(b, key=jax.random.key(2)), model, example_batch(model)))
    assert expected <= found, f"{name}: missing scopes {sorted(expected - found)}; found {sorted(found)}"


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
def test_a_decoding_strategy_is_named_inside_the_models_decode(strategy):
    from zoo_seq2seq.model import _decode_batch

    model = build("seq2seq")
    src = example_batch(model)["src"]
    mask = jax.ShapeDtypeStruct(src.shape, jnp.bool_)
    chosen = zoo.build_component(strategy, max_length=4)
    text = lowered_text(lambda m, s, k: _decode_batch(m, chosen, s, k, jax.random.key(3)), model, src, mask)
    found = scopes(text)
    assert {"seq2seq.decode", "seq2seq.encode", strategy} <= found, sorted(found)
