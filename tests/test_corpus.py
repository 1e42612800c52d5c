"""Corpus streaming, tokenisers (with the plugin hook) and word vocabularies."""

from __future__ import annotations

import gzip
import textwrap
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from zoo.data.corpus import build_word_vocab, count_tokens, iter_ids, iter_lines, iter_sentences
from zoo.data.tokenize import (
    ascii_words,
    get_tokenizer,
    plugin_tokenizers,
    tokenizer_conflicts,
    tokenizer_names,
    words,
)
from zoo.errors import DataError, PluginConflictError, UnknownNameError
from zoo.naming.hookspecs import hookimpl
from zoo.naming.registry import Registry

TEXT = "The cat sat.\nDon't stop: the CAT ran!\n\n  42 \nSeñor Müller's café\n"


@pytest.fixture
def corpus(tmp_path):
    plain = tmp_path / "corpus.txt"
    plain.write_text(TEXT, encoding="utf-8")
    packed = tmp_path / "corpus.bin"  # gzip is detected from the bytes, not the name
    packed.write_bytes(gzip.compress(TEXT.encode("utf-8")))
    return plain, packed


def test_plain_and_gzip_stream_the_same_sentences(corpus):
    plain, packed = corpus
    expected = [["the", "cat", "sat"], ["don't", "stop", "the", "cat", "ran"], ["señor", "müller's", "café"]]
    assert list(iter_sentences(plain)) == expected
    assert list(iter_sentences(packed)) == expected
    assert list(iter_sentences([plain, packed])) == expected * 2


def test_tokenizers_by_name_and_callable(corpus):
    plain, _ = corpus
    assert words("Rock’n’roll isn't 3 dogs' toys") == ["rock'n", "roll", "isn't", "dogs", "toys"]
    assert ascii_words("Señor's café") == ["se", "or's", "caf"]
    assert next(iter_sentences(plain, "whitespace")) == ["The", "cat", "sat."]
    assert next(iter_sentences(plain, "whitespace-lower")) == ["the", "cat", "sat."]
    assert list(iter_sentences(plain, str.split))[2] == ["42"]
    with pytest.raises(UnknownNameError, match="whitespace"):
        get_tokenizer("whitespaces")


def test_long_lines_are_cut_at_whitespace_not_inside_words(tmp_path):
    path = tmp_path / "one-line.txt"
    tokens = [f"w{i}" for i in range(5000)]
    path.write_text(" ".join(tokens))  # no newline at all, like text8
    pieces = list(iter_lines(path, max_chars=1000))
    assert len(pieces) > 10 and all(len(p) < 2000 for p in pieces)
    assert [t for p in pieces for t in p.split()] == tokens
    short = tmp_path / "short.txt"
    short.write_text("a b c")  # a final line without newline stays whole
    assert list(iter_lines(short, max_chars=1000)) == ["a b c"]


def test_count_tokens_and_vocabulary(corpus):
    plain, packed = corpus
    counts = count_tokens(plain)
    assert counts == count_tokens(list(iter_sentences(packed)))
    assert counts["the"] == 2 and counts.total() == 11
    vocab = build_word_vocab(counts, min_count=2)
    assert vocab.tokens == ("the", "cat") and list(vocab.counts) == [2, 2]
    assert vocab.specials == {}
    everything = build_word_vocab(counts, min_count=1, max_vocab=3)
    assert everything.tokens == ("the", "cat", "sat")  # ties broken by first appearance
    padded = build_word_vocab(counts, min_count=2, specials=("pad",))
    assert padded.tokens == ("<pad>", "the", "cat") and padded.pad_id == 0
    with pytest.raises(DataError, match="min_count=9"):
        build_word_vocab(counts, min_count=9)


def test_iter_ids_drops_unknown_words(corpus):
    plain, _ = corpus
    vocab = build_word_vocab(count_tokens(plain), min_count=2)
    got = [ids.tolist() for ids in iter_ids(plain, vocab)]
    assert got == [[0, 1], [0, 1]]
    assert all(ids.dtype == np.int32 for ids in iter_ids(plain, vocab))
    with pytest.raises(DataError, match="already tokenised"):
        list(iter_ids([["the"]], vocab, tokenizer="words"))


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="no corpus file"):
        list(iter_sentences(tmp_path / "absent.txt"))


class CharTokens:
    @hookimpl
    def zoo_register_tokenizers(self, register):
        register("chars", lambda line: [c for c in line if not c.isspace()])


class Thief:
    @hookimpl
    def zoo_register_tokenizers(self, register):
        register("chars", str.split)


class Usurper:
    @hookimpl
    def zoo_register_tokenizers(self, register):
        register("words", str.split)


def test_tokenizer_hook_registers_names():
    registry = Registry()
    registry.manager.register(CharTokens(), name="chars-plugin")
    assert get_tokenizer("chars", registry=registry)("a b") == ["a", "b"]
    assert plugin_tokenizers(registry)["chars"][0] == "chars-plugin"
    assert "chars" in tokenizer_names(registry) and "words" in tokenizer_names(registry)


def test_tokenizer_hook_conflicts_name_both_plugins():
    registry = Registry()
    registry.manager.register(CharTokens(), name="chars-plugin")
    registry.manager.register(Thief(), name="thief")
    with pytest.raises(PluginConflictError, match=r"chars-plugin.*thief|thief.*chars-plugin"):
        get_tokenizer("chars", registry=registry)
    assert "chars" not in plugin_tokenizers(registry)
    reserved = Registry()
    reserved.manager.register(Usurper(), name="usurper")
    reserved.manager.register(CharTokens(), name="chars-plugin")
    assert get_tokenizer("words", registry=reserved) is words  # zoo's own, whoever claims the name
    assert get_tokenizer("chars", registry=reserved)("a b") == ["a", "b"]  # only the contested name fails
    assert "usurper" in tokenizer_conflicts(reserved)["words"] and "reserves" in tokenizer_conflicts(reserved)["words"]
    assert list(plugin_tokenizers(reserved)) == ["chars"]


def test_tokenizer_plugin_loads_through_its_entry_point(tmp_path, monkeypatch):
    module = tmp_path / "toy_tokenizer_plugin.py"
    module.write_text(
        textwrap.dedent(
            """
            from zoo.naming.hookspecs import hookimpl

            class Plugin:
                @hookimpl
                def zoo_register_tokenizers(self, register):
                    register("reversed-words", lambda line: line.split()[::-1])

            plugin = Plugin()
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry()
    registry.load_plugins([EntryPoint("toy-tokenizer", "toy_tokenizer_plugin:plugin", "zoo.plugins")], environ={})
    assert registry.plugins["toy-tokenizer"].ok
    assert get_tokenizer("reversed-words", registry=registry)("a b c") == ["c", "b", "a"]
    blocked = Registry()
    blocked.load_plugins(
        [EntryPoint("toy-tokenizer", "toy_tokenizer_plugin:plugin", "zoo.plugins")],
        environ={"ZOO_DISABLE_PLUGINS": "toy-tokenizer"},
    )
    with pytest.raises(UnknownNameError, match="reversed-words"):
        get_tokenizer("reversed-words", registry=blocked)
