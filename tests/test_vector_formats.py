"""Word-vector files beyond word2vec's: GloVe text, fastText .bin models, and other formats named as such.

The fastText reader is checked against files made byte by byte here (not by its
own writer), against vectors computed directly from the n-gram rules, and, where
installed, against the fastText package and gensim.
"""

from __future__ import annotations

import bz2
import gzip
import pickle
import struct
import time
import tracemalloc
import zipfile

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zoo
from zoo.cli.main import main
from zoo.errors import DataError
from zoo.vectors import (
    FastTextArgs,
    FastTextKeyedVectors,
    FastTextModel,
    KeyedVectors,
    read_fasttext_bin,
    read_word2vec,
    write_fasttext_bin,
)
from zoo_word2vec.subwords import count_ngrams, fnv1a, ngram_hashes

# -- a direct statement of fastText's n-gram rules, independent of zoo_word2vec.subwords ------


def reference_ngrams(word: bytes, minn: int, maxn: int) -> list[bytes]:
    """fastText's character n-grams of ``<word>``: from each character (a non-continuation byte and
    the continuation bytes after it), runs of 1..maxn characters, kept from minn on, but not the
    ``<`` or ``>`` alone."""
    wrapped, found = b"<" + word + b">", []
    for i in range(len(wrapped)):
        if wrapped[i] & 0xC0 == 0x80:
            continue
        j, n = i, 0
        while j < len(wrapped) and n < maxn:
            j += 1
            while j < len(wrapped) and wrapped[j] & 0xC0 == 0x80:
                j += 1
            n += 1
            if n >= minn and not (n == 1 and (i == 0 or j == len(wrapped))):
                found.append(wrapped[i:j])
    return found


def reference_hash(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ ((byte - 256 if byte >= 128 else byte) & 0xFFFFFFFF)) * 16777619) % 2**32
    return h


def reference_vector(matrix: np.ndarray, own: int | None, word: bytes, nwords: int, args: FastTextArgs):
    rows = [] if own is None else [own]
    if word != b"</s>":
        rows += [nwords + reference_hash(g) % args.bucket for g in reference_ngrams(word, args.minn, args.maxn)]
    return matrix[rows].astype(np.float64).mean(0) if rows else np.zeros(matrix.shape[1])


def test_hashes_match_the_fasttext_package_values():
    # values printed by the fastText package (0.9.3) for these n-grams
    assert [fnv1a(g.encode()) for g in ["<wh", "whe", "her", "ere", "re>"]] == [
        1048167652, 888420941, 4105473420, 2073529033, 2062867498
    ]  # fmt: skip
    assert fnv1a("café".encode()) == 1970454601 and fnv1a("日本".encode()) == 4164387409


@given(
    st.lists(st.binary(max_size=12) | st.text(max_size=8).map(str.encode), max_size=6),
    st.integers(0, 4),
    st.integers(0, 7),
)
def test_ngram_hashes_follow_the_rules_on_any_bytes(words, minn, maxn):
    offsets, hashes = ngram_hashes(words, minn, maxn)
    counts = count_ngrams(words, minn, maxn)
    for i, word in enumerate(words):
        expected = [reference_hash(g) for g in reference_ngrams(word, minn, maxn)]
        assert hashes[offsets[i] : offsets[i + 1]].tolist() == expected
        assert counts[i] == len(expected)


# -- GloVe text files ------------------------------------------------------------------------

GLOVE = "the 0.418 0.24968 -0.41242\ncafé 1 2 3\n, -0.5 0 1e-3\n"


def test_glove_text_is_detected_and_read(tmp_path):
    path = tmp_path / "glove.6B.3d.txt"
    path.write_text(GLOVE, encoding="utf-8")
    for kv in (
        KeyedVectors.load(path),
        KeyedVectors.load_word2vec_format(path),
        KeyedVectors.load_word2vec_format(path, no_header=True),
    ):
        assert kv.index_to_key == ["the", "café", ","]
        np.testing.assert_array_equal(kv["café"], np.float32([1, 2, 3]))
        np.testing.assert_array_equal(kv[","], np.float32([-0.5, 0, 1e-3]))
    assert read_word2vec(path, limit=2)[0] == ["the", "café"]
    packed = tmp_path / "glove.txt.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert KeyedVectors.load(packed).index_to_key == ["the", "café", ","]
    with pytest.raises(DataError, match=r"it is a vector \('the' and 3 numbers\).*no_header=True"):
        KeyedVectors.load_word2vec_format(path, no_header=False)
    with pytest.raises(DataError, match="text only"):
        KeyedVectors.load_word2vec_format(path, no_header=True, binary=True)


def test_a_headerless_zoo_export_reads_back(tmp_path):
    rng = np.random.default_rng(0)
    kv = KeyedVectors(["a", "b", "1990", "ü"], rng.standard_normal((4, 5)))
    path = kv.save_word2vec_format(tmp_path / "h.txt", write_header=False)
    back = KeyedVectors.load(path)
    assert back.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(back.vectors, kv.vectors)


def test_header_or_vector_is_decided_by_the_first_two_lines(tmp_path):
    header = tmp_path / "w2v.txt"
    header.write_text("2 1\n12 34\nfoo 0.5\n")
    assert KeyedVectors.load(header).index_to_key == ["12", "foo"]  # a header for dimension 1
    one_dim = tmp_path / "glove1.txt"
    one_dim.write_text("12 34\nfoo 0.5\n")  # "12 34" cannot be a header: the next line has 1 value, not 34
    kv = KeyedVectors.load(one_dim)
    assert kv.index_to_key == ["12", "foo"] and kv["12"].tolist() == [34.0]
    assert KeyedVectors.load_word2vec_format(one_dim, no_header=True).index_to_key == ["12", "foo"]
    word_then_one_number = tmp_path / "short.txt"
    word_then_one_number.write_text("hello 0.5\nworld 1\n")
    with pytest.raises(DataError, match="no_header=True"):
        KeyedVectors.load(word_then_one_number)  # one number: detected only when asked
    assert KeyedVectors.load(word_then_one_number, no_header=True).index_to_key == ["hello", "world"]


def test_glove_words_may_hold_spaces(tmp_path):
    path = tmp_path / "840B.txt"
    path.write_text("BZh 1 2\n. . . 3 4\nat name@domain.com 5 6\n")
    kv = KeyedVectors.load(path)
    assert kv.index_to_key == ["BZh", ". . .", "at name@domain.com"]
    np.testing.assert_array_equal(kv[". . ."], np.float32([3, 4]))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a 1 2\nb 1\n", r"line 2 \('b'\) has 1 values, expected 2"),
        ("a 1 2\nb 1 2 3\n", r"line 2 \('b'\) has 3 values, expected 2"),
        ("a 1 2\nb 1 x\n", r"line 2 \('b'\): 'x' is not a number"),
        ("a 1 2\n\nc 1 2\n", "line 2"),
    ],
)
def test_damaged_glove_files_name_the_file_and_line(tmp_path, text, error):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=f"{path}: {error}"):
        KeyedVectors.load(path)


def test_glove_lines_are_bounded_and_decoded_strictly(tmp_path):
    long = tmp_path / "long.txt"
    long.write_bytes(b"a 1 2\nb " + b"1" * 5000 + b" 2\n")
    with pytest.raises(DataError, match="line 2 is longer than 1152 bytes"):
        KeyedVectors.load(long)
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"a 1 2\ncaf\xe9 1 2\n")
    with pytest.raises(DataError, match="line 2: byte e9 is not valid utf-8"):
        KeyedVectors.load(latin)
    assert KeyedVectors.load_word2vec_format(latin, encoding="latin-1").index_to_key == ["a", "café"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # gensim leaves a file open
def test_gensim_reads_glove_as_zoo_does(tmp_path):
    gensim = pytest.importorskip("gensim.models")
    path = tmp_path / "glove.txt"
    path.write_text(GLOVE, encoding="utf-8")
    theirs = gensim.KeyedVectors.load_word2vec_format(str(path), no_header=True)
    ours = KeyedVectors.load(path)
    assert theirs.index_to_key == ours.index_to_key
    np.testing.assert_array_equal(theirs.vectors, ours.vectors)


# -- other formats are named, never dumped -------------------------------------------------------


def _zip_bytes(tmp_path) -> bytes:
    with zipfile.ZipFile(tmp_path / "g.zip", "w") as archive:
        archive.writestr("glove.txt", GLOVE)
    return (tmp_path / "g.zip").read_bytes()


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda tmp: struct.pack("<2i", 793712314, 12) + bytes(60), "this is a fastText .bin model"),
        (lambda tmp: pickle.dumps({"vectors": [1.0]}), "Python pickle .* never loads"),
        (_zip_bytes, "zip archive"),
        (lambda tmp: b"\x93NUMPY\x01\x00" + bytes(40), "NumPy .npy"),
        (lambda tmp: bz2.compress(GLOVE.encode()), "bzip2-compressed"),
        (lambda tmp: bytes(range(256)) * 2, "binary data in no format zoo knows"),
    ],
)
def test_other_formats_are_named_not_dumped(tmp_path, make, named):
    path = tmp_path / "vectors.bin"
    path.write_bytes(make(tmp_path))
    with pytest.raises(DataError, match=named) as raised:
        read_word2vec(path)
    assert "\\x" not in str(raised.value)


# -- fastText .bin: a file made byte by byte -----------------------------------------------------

ARGS = FastTextArgs(dim=3, ws=5, epoch=5, min_count=1, neg=5, bucket=11, minn=2, maxn=3, t=1e-4)
ENTRIES = [(b"</s>", 40, 0), (b"hello", 9, 0), ("café".encode(), 7, 0), (b"\xe9t\xe9", 2, 0)]


def entries_bytes(entries) -> bytes:
    return b"".join(word + b"\0" + struct.pack("<qb", count, kind) for word, count, kind in entries)


def matrix_bytes(matrix: np.ndarray) -> bytes:
    return b"\0" + struct.pack("<2q", *matrix.shape) + matrix.astype("<f4").tobytes()


def hand_made(entries=ENTRIES, args=ARGS, *, nlabels=0, seed=0, version=12, pruneidx=-1, quant=0):
    """A fastText .bin assembled field by field from the format's description, and its input matrix."""
    rng = np.random.default_rng(seed)
    nwords = len(entries) - nlabels
    matrix = rng.standard_normal((nwords + args.bucket, args.dim)).astype(np.float32)
    output = rng.standard_normal((nlabels if args.model == 3 else nwords, args.dim)).astype(np.float32)
    a = args
    data = struct.pack("<2i", 793712314, version)
    data += struct.pack("<8i", a.dim, a.ws, a.epoch, a.min_count, a.neg, a.word_ngrams, a.loss, a.model)
    data += struct.pack("<4i", a.bucket, a.minn, a.maxn, a.lr_update_rate) + struct.pack("<d", a.t)
    data += struct.pack("<3i", len(entries), nwords, nlabels) + struct.pack("<2q", sum(e[1] for e in entries), pruneidx)
    data += entries_bytes(entries)
    data += bytes([quant]) + matrix_bytes(matrix)[1:] + matrix_bytes(output)
    return data, matrix, output


@pytest.fixture
def hand_bin(tmp_path):
    data, matrix, output = hand_made()
    path = tmp_path / "hand.bin"
    path.write_bytes(data)
    return path, matrix, output


def test_a_hand_made_bin_is_read_whole(hand_bin):
    path, matrix, output = hand_bin
    model = read_fasttext_bin(path, encoding="latin-1")
    assert model.args == ARGS and model.args.loss_name == "ns" and model.args.model_name == "sg"
    assert model.words == ["</s>", "hello", "café".encode().decode("latin-1"), "été"]
    assert model.counts.tolist() == [40, 9, 7, 2] and model.ntokens == 58
    np.testing.assert_array_equal(model.input, matrix)
    np.testing.assert_array_equal(model.output, output)


def test_vectors_of_a_hand_made_bin_follow_the_ngram_rules(hand_bin):
    path, matrix, _ = hand_bin
    kv = FastTextKeyedVectors.load_fasttext_bin(path, encoding="latin-1")
    nwords = len(ENTRIES)
    for index, (spelling, _, _) in enumerate(ENTRIES):  # own row and n-grams of the bytes in the file
        word = spelling.decode("latin-1")
        expected = reference_vector(matrix, index, spelling, nwords, ARGS)
        np.testing.assert_allclose(kv[word], expected, rtol=1e-6, atol=1e-7)
    for word in ["hellö", "x", "", "</s>x", "日本"]:  # outside the vocabulary: n-grams only
        assert not kv.has_index_for(word) and word in kv  # gensim's: any word has a vector
        expected = reference_vector(matrix, None, word.encode("latin-1", "replace"), nwords, ARGS)  # '?' for 日本
        np.testing.assert_allclose(kv[word], expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(kv["</s>"], matrix[0])  # fastText's end of line: its own row alone
    assert kv.most_similar("hellö", topn=2)[0][0] in kv.index_to_key


def test_utf8_words_and_limit(tmp_path):
    data, matrix, _ = hand_made(ENTRIES[:3])
    path = tmp_path / "utf8.bin"
    path.write_bytes(data)
    kv = KeyedVectors.load(path, limit=2)  # detected by its magic number
    assert kv.index_to_key == ["</s>", "hello"]
    expected = reference_vector(matrix, 2, "café".encode(), 3, ARGS)
    np.testing.assert_allclose(kv["café"], expected, rtol=1e-6)  # beyond the limit: still fastText's vector
    with pytest.raises(DataError, match=r"entry 3: byte e9 is not valid utf-8.*encoding='latin-1'"):
        read_fasttext_bin(_write(tmp_path / "latin.bin", hand_made()[0]))


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_the_writer_makes_the_same_bytes_as_the_hand_made_file(hand_bin, tmp_path):
    path, matrix, output = hand_bin
    spellings = [e[0] for e in ENTRIES]
    model = FastTextModel(
        ARGS, [s.decode("latin-1") for s in spellings], [e[1] for e in ENTRIES], matrix, output, spellings=spellings
    )
    assert write_fasttext_bin(tmp_path / "ours.bin", model).read_bytes() == path.read_bytes()
    packed = write_fasttext_bin(tmp_path / "again.bin.gz", read_fasttext_bin(path, encoding="latin-1"))
    assert gzip.decompress(packed.read_bytes()) == path.read_bytes()


def test_a_supervised_model_keeps_words_and_labels_apart(tmp_path):
    args = FastTextArgs(dim=4, loss=3, model=3, bucket=5, minn=0, maxn=0, word_ngrams=2)
    entries = [(b"good", 3, 0), (b"film", 2, 0), (b"__label__pos", 2, 1), (b"__label__neg", 1, 1)]
    data, matrix, _ = hand_made(entries, args, nlabels=2)
    model = read_fasttext_bin(_write(tmp_path / "sup.bin", data))
    assert model.words == ["good", "film"] and model.labels == ["__label__pos", "__label__neg"]
    assert model.output.shape == (2, 4)
    kv = KeyedVectors.load(tmp_path / "sup.bin")
    np.testing.assert_array_equal(kv["film"], matrix[1])  # maxn 0: a word is its own row
    assert not np.any(kv["unseen"])
    assert write_fasttext_bin(tmp_path / "w.bin", model).read_bytes() == data


# -- damaged and crafted .bin files -------------------------------------------------------------


def test_every_truncation_is_a_data_error(hand_bin, tmp_path):
    data = hand_bin[0].read_bytes()
    cut = tmp_path / "cut.bin"
    for end in range(4, len(data)):
        cut.write_bytes(data[:end])
        with pytest.raises(DataError, match=str(cut)):
            FastTextKeyedVectors.load_fasttext_bin(cut, encoding="latin-1")
    packed = tmp_path / "cut.bin.gz"
    packed.write_bytes(gzip.compress(data)[:-30])
    with pytest.raises(DataError):
        read_fasttext_bin(packed, encoding="latin-1")


def _crafted(**changes) -> bytes:
    args = {"entries": ENTRIES, "args": ARGS, **{k: v for k, v in changes.items() if k in ("entries", "args")}}
    data = bytearray(
        hand_made(**args, **{k: v for k, v in changes.items() if k in ("version", "pruneidx", "quant")})[0]
    )
    for offset, layout, value in changes.get("patch", []):
        struct.pack_into(layout, data, offset, value)
    return bytes(data) + changes.get("tail", b"")


DICTIONARY = 8 + 56  # where the dictionary header starts: after the signature and the Args block
INPUT_SHAPE = DICTIONARY + 28 + len(entries_bytes(ENTRIES)) + 1


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"quant": 1}, r"quantized fastText model \(.ftz"),
        ({"pruneidx": 0}, "marked pruned but the model is not quantized"),
        ({"version": 13}, "version 13"),
        ({"patch": [(0, "<i", 12345)]}, "magic number"),
        ({"patch": [(8, "<i", 0)]}, "dim is 0"),
        ({"patch": [(8 + 24, "<i", 9)]}, "not fastText's"),
        ({"patch": [(8 + 32, "<i", 0)]}, "bucket=0 gives them no rows"),
        ({"patch": [(DICTIONARY, "<i", 2**31 - 1)]}, "inconsistent"),
        ({"patch": [(DICTIONARY, "<i", 2**31 - 1), (DICTIONARY + 4, "<i", 2**31 - 1)]},
         "needs 21474836470 bytes|entry 4 .* has type 3"),  # gzip: found out while reading
        ({"patch": [(DICTIONARY + 8, "<i", -1), (DICTIONARY + 4, "<i", 5)]}, "inconsistent"),
        ({"patch": [(DICTIONARY + 28 + 5 + 8, "<b", 1)]}, "entry 0 .* has type 1"),
        ({"patch": [(INPUT_SHAPE, "<q", 2**60)]}, "input matrix is 1152921504606846976 x 3"),
        ({"patch": [(INPUT_SHAPE + 8, "<q", 2**40)]}, r"input matrix is 15 x 1099511627776"),
        ({"patch": [(8 + 32, "<i", 2**31 - 1), (INPUT_SHAPE, "<q", 4 + 2**31 - 1)]},  # consistent, but not there
         r"the input matrix needs 25769803812 bytes but the file has \d+ left|ends inside the input matrix"),
        ({"tail": b"\0"}, "more bytes follow the output matrix"),
        ({"entries": [(b"x" * 70000, 1, 0)]}, "longer than 65536 bytes"),
        ({"args": FastTextArgs(dim=1, bucket=3, minn=1, maxn=2**31 - 1), "entries": [(b"y" * 60000, 1, 0)]},
         "n-grams of up to 60002 characters"),
    ],
)  # fmt: skip
def test_crafted_files_end_in_a_data_error_quickly_and_small(tmp_path, changes, error):
    path = tmp_path / "crafted.bin"
    path.write_bytes(_crafted(**changes))
    for target in (path, _write(tmp_path / "crafted.bin.gz", gzip.compress(path.read_bytes()))):
        tracemalloc.start()
        started = time.perf_counter()
        try:
            with pytest.raises(DataError, match=error):
                read_fasttext_bin(target)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert time.perf_counter() - started < 5
        assert peak < 16 * path.stat().st_size + (4 << 20)  # never what the header claims


@pytest.mark.parametrize("header", [b"1000000000 1000000000\n", b"5 2000000000\n", b"3000000000 3\n"])
@pytest.mark.parametrize("gzipped", [False, True])
def test_word2vec_headers_cannot_claim_memory(tmp_path, header, gzipped):
    data = header + b"a 1 2 3\n" + b"b \x00\x00\x80?" * 3
    path = tmp_path / "claims.txt"
    path.write_bytes(gzip.compress(data) if gzipped else data)
    for binary in (False, True):
        tracemalloc.start()
        try:
            with pytest.raises(DataError, match=str(path)):
                read_word2vec(path, binary=binary)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 4 << 20


# -- zoo's fasttext model to .bin and back -------------------------------------------------------


@pytest.fixture(scope="module")
def zoo_fasttext():
    """An untrained zoo fasttext model (random rows are as good as trained ones for a file format)."""
    from zoo_word2vec.fit import build_vocab

    rng = np.random.default_rng(0)
    words = ["walk", "walks", "walked", "jump", "jumps", "café", "naïve", "日本", "über", "paint", "painting"]
    vocab = build_vocab([list(rng.choice(words, 6)) for _ in range(300)], min_count=1)
    return zoo.build("fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=8, buckets=500, output_init=1.0)


OOV = ["walking", "cafés", "日本語", "x", "jumped"]


def test_zoo_fasttext_converts_exactly(zoo_fasttext, tmp_path):
    ours = KeyedVectors.from_model(zoo_fasttext)
    path = ours.save_fasttext_bin(tmp_path / "zoo.bin")
    back = KeyedVectors.load(path)
    assert back.index_to_key == ours.index_to_key
    np.testing.assert_allclose(back.vectors, ours.vectors, rtol=1e-5, atol=1e-7)
    for word in OOV:
        np.testing.assert_allclose(back[word], ours[word], rtol=1e-5, atol=1e-7)
    model = read_fasttext_bin(path)
    assert (model.args.minn, model.args.maxn, model.args.bucket) == (3, 6, 500)
    np.testing.assert_array_equal(model.output, np.asarray(zoo_fasttext.output))
    saved = zoo.save(zoo_fasttext, tmp_path / "m.safetensors")
    assert main(["vectors", "export", str(saved), str(tmp_path / "cli.bin"), "--format", "fasttext"]) == 0
    assert (tmp_path / "cli.bin").read_bytes() == path.read_bytes()
    top3 = ["vectors", "export", str(path), str(tmp_path / "top3.bin"), "--format", "fasttext", "--limit", "3"]
    assert main(top3) == 0
    top = KeyedVectors.load(tmp_path / "top3.bin")
    assert top.index_to_key == ours.index_to_key[:3]
    dropped = ours.index_to_key[5]  # now outside the vocabulary: the mean of its n-gram rows alone
    np.testing.assert_allclose(top[dropped], model.input[model.subword_rows(dropped)[1:]].mean(0), rtol=1e-6)


def test_vectors_without_subwords_cannot_be_a_bin(tmp_path):
    with pytest.raises(DataError, match="no fastText subwords"):
        FastTextKeyedVectors(["a"], np.ones((1, 2))).save_fasttext_bin(tmp_path / "x.bin")


# -- the fastText package and gensim, where installed -------------------------------------------


@pytest.fixture(scope="module")
def fasttext_package():
    return pytest.importorskip("fasttext", reason="the fastText package (the 'bench' extra) is not installed")


def train(fasttext_package, method: str, *args, **kwargs):
    """Train with the fastText package, again when it stops with 'Encountered NaN': fastText 0.9.3 does so
    now and then on tiny corpora, from one run to the next with the same seed and one thread."""
    for _ in range(7):
        try:
            return getattr(fasttext_package, method)(*args, thread=1, verbose=0, **kwargs)
        except RuntimeError as error:
            if "NaN" not in str(error):
                raise
    pytest.fail("fastText's trainer stopped with 'Encountered NaN' seven times in a row")


def test_fasttext_reads_the_hand_made_bin_as_zoo_does(fasttext_package, hand_bin):
    path, matrix, _ = hand_bin
    loaded = fasttext_package.load_model(str(path))
    kv = FastTextKeyedVectors.load_fasttext_bin(path, encoding="latin-1")
    for word in ["hello", "</s>", "hellö", "x", "", "ab"]:  # utf-8 queries, as the package sends them
        expected = reference_vector(matrix, kv.key_to_index.get(word), word.encode(), len(ENTRIES), ARGS)
        np.testing.assert_allclose(loaded.get_word_vector(word), expected, rtol=1e-6, atol=1e-7)
        if word.isascii():
            np.testing.assert_array_equal(kv[word], loaded.get_word_vector(word))


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    rng = np.random.default_rng(1)
    words = ["walk", "walks", "walked", "jump", "jumps", "café", "naïve", "日本", "über", "paint", "painting"]
    path = tmp_path_factory.mktemp("ft") / "text.txt"
    path.write_text("\n".join(" ".join(rng.choice(words, 8)) for _ in range(1500)) + "\n", encoding="utf-8")
    return path


def test_vectors_equal_the_fasttext_packages(fasttext_package, text_file, tmp_path):
    trained = train(
        fasttext_package, "train_unsupervised", str(text_file), model="skipgram", dim=10, epoch=1, minCount=1,
        bucket=20000, minn=2, maxn=4,
    )  # fmt: skip
    path = tmp_path / "ft.bin"
    trained.save_model(str(path))
    kv = KeyedVectors.load(path)
    assert kv.index_to_key == trained.get_words()
    for word in kv.index_to_key + OOV + ["", "ü"]:
        np.testing.assert_allclose(kv[word], trained.get_word_vector(word), rtol=1e-5, atol=1e-5)
    model = read_fasttext_bin(path)
    np.testing.assert_array_equal(model.input, trained.get_input_matrix())
    np.testing.assert_array_equal(model.output, trained.get_output_matrix())
    assert write_fasttext_bin(tmp_path / "again.bin", model).read_bytes() == path.read_bytes()


def test_a_supervised_fasttext_model_reads(fasttext_package, tmp_path):
    data = tmp_path / "sup.txt"
    data.write_text("__label__a good fine film\n__label__b bad poor film\n" * 20)
    trained = train(fasttext_package, "train_supervised", str(data), dim=5, epoch=2, wordNgrams=2, bucket=1000)
    trained.save_model(str(tmp_path / "sup.bin"))
    model = read_fasttext_bin(tmp_path / "sup.bin")
    assert sorted(model.labels) == ["__label__a", "__label__b"]
    for word in [*model.words, "unseen"]:
        np.testing.assert_allclose(model(word), trained.get_word_vector(word), rtol=1e-5, atol=1e-5)


def test_fasttext_loads_what_zoo_writes(fasttext_package, zoo_fasttext, tmp_path):
    ours = KeyedVectors.from_model(zoo_fasttext)
    loaded = fasttext_package.load_model(str(ours.save_fasttext_bin(tmp_path / "zoo.bin")))
    assert loaded.get_words() == ours.index_to_key
    for word in ours.index_to_key + OOV:
        np.testing.assert_allclose(loaded.get_word_vector(word), ours[word], rtol=1e-5, atol=1e-5)


def test_gensim_loads_what_zoo_writes_and_zoo_what_gensim_writes(zoo_fasttext, tmp_path):
    fasttext = pytest.importorskip("gensim.models.fasttext", reason="gensim (the 'bench' extra) is not installed")
    ours = KeyedVectors.from_model(zoo_fasttext)
    theirs = fasttext.load_facebook_vectors(str(ours.save_fasttext_bin(tmp_path / "zoo.bin")))
    assert theirs.index_to_key == ours.index_to_key
    for word in ours.index_to_key + OOV:
        np.testing.assert_allclose(theirs[word], ours[word], rtol=1e-5, atol=1e-5)
    trained = fasttext.FastText(
        [s.split() for s in ["walk walks walked", "paint painting café", "jump jumps naïve"] * 20],
        vector_size=6, min_count=1, bucket=300, epochs=1, min_n=2, max_n=5, seed=0, workers=1,
    )  # fmt: skip
    fasttext.save_facebook_model(trained, str(tmp_path / "gensim.bin"))
    back = KeyedVectors.load(tmp_path / "gensim.bin")
    assert back.index_to_key == trained.wv.index_to_key
    for word in trained.wv.index_to_key + OOV:
        np.testing.assert_allclose(back[word], trained.wv[word], rtol=1e-5, atol=1e-5)
