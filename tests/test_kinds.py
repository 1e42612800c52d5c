"""Kinds are declared in one table and enforced at registration; capabilities are checked with isinstance."""

import jax
import pytest

import zoo
from tests.kit_harness import run_kit
from zoo.errors import RegistryError
from zoo.interfaces import (
    KINDS,
    AttentionReporter,
    Classifier,
    SubwordVectors,
    Tagger,
    Translator,
    WordVectors,
)
from zoo.naming.tables import KIND_NAMES, read_tables

ATTENTION_TABLE = """
[components.my-attention]
kind = "{kind}"
factory = "my_attention:MyAttention"
params = {{}}
"""


def test_the_light_kind_names_are_the_kind_table():
    assert set(KIND_NAMES) == set(KINDS)
    for kind, entry in KINDS.items():
        assert "key" in entry.wired or kind == "strategy", kind


@pytest.mark.parametrize(
    ("spelt", "meant"), [("atention", "attention"), ("embeder", "embedder"), ("encodr", "encoder")]
)
def test_a_misspelt_kind_is_refused_with_the_closest(spelt, meant):
    with pytest.raises(RegistryError, match=rf"unknown kind {spelt!r}.*one of attention, cell.*Did you mean {meant!r}"):
        read_tables(ATTENTION_TABLE.format(kind=spelt), plugin="my-attention")


def test_a_slot_of_an_unknown_kind_is_refused():
    table = """
[architectures.mine]
factory = "mine:Mine"
slots = { attention = { kind = "atention", default = "luong-dot" } }
"""
    with pytest.raises(RegistryError, match=r"mine\.slots\.attention: unknown kind 'atention'.*'attention'"):
        read_tables(table, plugin="mine")


NOT_AN_ATTENTION = """
import equinox as eqx


class NotAnAttention(eqx.Module):
    query_size: int = eqx.field(static=True)
    key_size: int = eqx.field(static=True)

    def __init__(self, query_size, key_size, *, key):
        self.query_size, self.key_size = query_size, key_size
"""


def test_the_kit_fails_a_factory_that_does_not_subclass_its_interface(tmp_path):
    run = run_kit(
        tmp_path,
        name="not-an-attention",
        factory="not_an_attention:NotAnAttention",
        modules={"not_an_attention": NOT_AN_ATTENTION},
        select="final_subclass",
    )
    run.assert_caught("test_factory_is_a_final_subclass_of_its_interface", "does not subclass zoo.Attention")


def test_built_in_models_declare_their_capabilities():
    key = jax.random.key(0)
    seq2seq = zoo.build("seq2seq+luong-general", key=key, hidden_size=8, embedding_size=8)
    assert isinstance(seq2seq, Translator) and isinstance(seq2seq, AttentionReporter)
    assert not isinstance(seq2seq, Tagger) and not isinstance(seq2seq, WordVectors)
    fasttext = zoo.build("fasttext", key=key, embedding_size=8)
    assert isinstance(fasttext, SubwordVectors) and isinstance(fasttext, WordVectors)
    skipgram = zoo.build("word2vec-skipgram", key=key, embedding_size=8)
    assert isinstance(skipgram, WordVectors) and not isinstance(skipgram, SubwordVectors)
    assert not isinstance(skipgram, Classifier)
