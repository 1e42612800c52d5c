"""word2vec text and binary files: byte-exact round trips, gensim compatibility, hand-made files."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from zoo.errors import DataError
from zoo.vectors import KeyedVectors, detect_binary, read_word2vec

WORDS = ["the", "Paris", "paris", "café", "naïve", "x"]


@pytest.fixture
def kv():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(WORDS), 5)).astype(np.float32)
    vectors[0, :3] = [1e-5, 123456.7, -0.0]  # scientific notation, large values, negative zero
    return KeyedVectors(WORDS, vectors)


@pytest.mark.parametrize("binary", [False, True])
def test_round_trip_is_byte_exact(kv, tmp_path, binary):
    first = kv.save_word2vec_format(tmp_path / "a", binary=binary)
    loaded = KeyedVectors.load_word2vec_format(first, binary=binary)
    assert loaded.index_to_key == WORDS
    np.testing.assert_array_equal(loaded.vectors, kv.vectors)
    second = loaded.save_word2vec_format(tmp_path / "b", binary=binary)
    assert first.read_bytes() == second.read_bytes()
    assert detect_binary(first) is binary
    assert KeyedVectors.load(first).index_to_key == WORDS  # format detected


def test_hand_made_text_file(tmp_path):
    path = tmp_path / "hand.txt"
    path.write_bytes("2 3\nhello 0.5 -1 2e-3\nwörld 1.0 0 0\n".encode())
    kv = KeyedVectors.load_word2vec_format(path)
    assert kv.index_to_key == ["hello", "wörld"]
    np.testing.assert_array_equal(kv["hello"], np.float32([0.5, -1, 2e-3]))
    out = kv.save_word2vec_format(tmp_path / "out.txt")
    assert out.read_bytes() == "2 3\nhello 0.5 -1.0 0.002\nwörld 1.0 0.0 0.0\n".encode()


def test_hand_made_binary_file_with_c_tool_newlines(tmp_path):
    # The C tool writes a newline after each vector; gensim does not. Both must read.
    pack = lambda values: struct.pack("<3f", *values)
    c_tool = b"2 3\n" + b"hello " + pack([0.5, -1, 2]) + b"\n" + "wörld ".encode() + pack([1, 0, 0]) + b"\n"
    path = tmp_path / "c.bin"
    path.write_bytes(c_tool)
    words, vectors = read_word2vec(path, binary=True)
    assert words == ["hello", "wörld"]
    np.testing.assert_array_equal(vectors, np.float32([[0.5, -1, 2], [1, 0, 0]]))
    kv = KeyedVectors(words, vectors)
    gensim_style = kv.save_word2vec_format(tmp_path / "g.bin", binary=True).read_bytes()
    assert gensim_style == c_tool.replace(pack([0.5, -1, 2]) + b"\n", pack([0.5, -1, 2])).removesuffix(b"\n")


def test_limit_prefix_header_and_gzip(kv, tmp_path):
    path = kv.save_word2vec_format(tmp_path / "v.txt")
    assert KeyedVectors.load_word2vec_format(path, limit=2).index_to_key == WORDS[:2]
    prefixed = kv.save_word2vec_format(tmp_path / "p.txt", prefix="en/")
    assert KeyedVectors.load_word2vec_format(prefixed).index_to_key[0] == "en/the"
    headless = kv.save_word2vec_format(tmp_path / "h.txt", write_header=False).read_bytes()
    assert headless == path.read_bytes().split(b"\n", 1)[1]
    packed = kv.save_word2vec_format(tmp_path / "v.txt.gz")
    assert gzip.decompress(packed.read_bytes()) == path.read_bytes()
    assert KeyedVectors.load(packed).index_to_key == WORDS


def test_damaged_files_raise_clear_errors(kv, tmp_path):
    binary = kv.save_word2vec_format(tmp_path / "v.bin", binary=True).read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(binary[:-7])
    with pytest.raises(DataError, match="promises 6 vectors"):
        KeyedVectors.load_word2vec_format(cut, binary=True)
    text = tmp_path / "short.txt"
    text.write_text("3 2\na 1 2\nb 1\n")
    with pytest.raises(DataError, match="has 1 values, expected 2"):
        KeyedVectors.load_word2vec_format(text, binary=False)
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    with pytest.raises(DataError, match="count> <dim>"):
        KeyedVectors.load(junk)
    with pytest.raises(DataError, match="whitespace"):
        KeyedVectors(["two words"], np.zeros((1, 2))).save_word2vec_format(tmp_path / "x.txt")


def test_undecodable_words_follow_unicode_errors(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"1 2\ncaf\xe9 1 2\n")
    with pytest.raises(DataError, match=r"vector 0: byte e9 is not valid utf-8.*encoding='latin-1'"):
        KeyedVectors.load_word2vec_format(path, binary=False)
    replaced = KeyedVectors.load_word2vec_format(path, binary=False, unicode_errors="replace")
    assert replaced.index_to_key == ["caf\ufffd"]
    assert KeyedVectors.load_word2vec_format(path, binary=False, encoding="latin-1").index_to_key == ["café"]


@pytest.mark.parametrize("binary", [False, True])
def test_bytes_match_gensim(kv, tmp_path, binary):
    gensim = pytest.importorskip("gensim.models")
    theirs = gensim.KeyedVectors(kv.vector_size)
    theirs.add_vectors(kv.index_to_key, kv.vectors)
    theirs.save_word2vec_format(str(tmp_path / "gensim"), binary=binary)
    ours = kv.save_word2vec_format(tmp_path / "zoo", binary=binary)
    assert ours.read_bytes() == (tmp_path / "gensim").read_bytes()
    back = gensim.KeyedVectors.load_word2vec_format(str(ours), binary=binary)
    assert back.index_to_key == WORDS
    np.testing.assert_array_equal(back.vectors, kv.vectors)
