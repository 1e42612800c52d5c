"""Property-based fuzzing of the vector readers, the fastText ``.bin`` reader and the model store.

Every generated file ends in a `ZooError` or a table whose every value is finite (unless asked
otherwise), quickly and without allocating what a header claims; a damaged store index lists
the entries' files still, and a damaged entry is refused when served.
"""

from __future__ import annotations

import struct
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zoo.building.intake import import_file
from zoo.building.store import Store
from zoo.errors import ZooError
from zoo.vectors import KeyedVectors
from zoo.vectors.formats import read_word2vec, write_word2vec
from zoo_word2vec.fasttext_files.bin import read_fasttext_bin

fuzz = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
    st.integers(-(10**40), 10**40).map(str),
    st.sampled_from(["1e39", "-1e39", "nan", "inf", "0x10", "1,5", "", "--1", "1e-50"]),
)


def _refused_or_finite(read, path):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        words, vectors = read(path)
    except ZooError:
        return
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert time.perf_counter() - started < 2
        assert peak < 16 * max(path.stat().st_size, 1) + (8 << 20)
    assert len(words) == len(vectors) and np.isfinite(vectors).all()


@fuzz
@given(
    header=st.tuples(st.integers(-5, 10**12), st.integers(-5, 10**12)) | st.none(),
    rows=st.lists(st.tuples(st.text(min_size=0, max_size=8), st.lists(NUMBERS, max_size=5)), max_size=6),
)
def test_any_text_vectors_file_is_refused_or_read_finite(header, rows, tmp_path):
    path = tmp_path / "v.txt"
    lines = [f"{header[0]} {header[1]}"] if header else []
    lines += [" ".join([word, *values]) for word, values in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    _refused_or_finite(read_word2vec, path)
    _refused_or_finite(lambda p: read_word2vec(p, binary=True), path)


@fuzz
@given(data=st.data())
def test_any_damage_to_a_binary_vectors_file_is_refused_or_read_finite(data, tmp_path):
    path = write_word2vec(
        tmp_path / "v.bin", ["ab", "cd", "ef"], np.arange(12, dtype=np.float32).reshape(3, 4), binary=True
    )
    raw = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(raw)))
    path.write_bytes(bytes(raw[:cut]))
    _refused_or_finite(read_word2vec, path)


def _bin(dim: int, bucket: int, minn: int, maxn: int, words: list[bytes]) -> bytes:
    head = struct.pack("<2i", 793712314, 12) + struct.pack(
        "<12id", dim, 5, 5, 1, 5, 1, 2, 2, bucket, minn, maxn, 100, 1e-4
    )
    entries = b"".join(w + b"\0" + struct.pack("<qb", 1, 0) for w in words)
    rows = (len(words) + bucket) * dim
    return (head + struct.pack("<3i2q", len(words), len(words), 0, 10, -1) + entries
            + b"\0" + struct.pack("<2q", len(words) + bucket, dim) + np.full(rows, 0.25, "<f4").tobytes()
            + b"\0" + struct.pack("<2q", len(words), dim) + np.zeros(len(words) * dim, "<f4").tobytes())  # fmt: skip


@fuzz
@given(
    dim=st.integers(1, 4), bucket=st.integers(1, 50), minn=st.integers(0, 2000), maxn=st.integers(0, 3000),
    words=st.lists(st.binary(min_size=1, max_size=2000).filter(lambda w: b"\0" not in w), min_size=1, max_size=3),
    data=st.data(),
)  # fmt: skip
def test_any_fasttext_bin_is_refused_or_read_finite(dim, bucket, minn, maxn, words, data, tmp_path):
    raw = bytearray(_bin(dim, bucket, minn, maxn, words))
    for _ in range(data.draw(st.integers(0, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    path = tmp_path / "m.bin"
    path.write_bytes(bytes(raw))

    def read(p):
        keyed = KeyedVectors.load(p)
        return keyed.index_to_key, keyed.vectors

    _refused_or_finite(read, path)
    try:
        read_fasttext_bin(path)
    except ZooError:
        pass


@fuzz
@given(index=st.binary(max_size=300), data=st.data())
def test_a_damaged_store_lists_its_files_and_refuses_a_damaged_entry(index, data, tmp_path):
    home = Path(tempfile.mkdtemp(dir=tmp_path)) / "home"  # a fresh store per example
    store = Store(home)
    source = tmp_path / "g.txt"
    source.write_text("king 1 0\nqueen 0 1\n")
    import_file(source, "glove.v1", store=store)
    (home / "index.json").write_bytes(index)
    assert list(store.entries()) == ["glove.v1"]
    entry = store.path_of("glove.v1")
    raw = bytearray(entry.read_bytes())
    raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    entry.write_bytes(bytes(raw))
    try:
        keyed = KeyedVectors.load(entry)
    except ZooError:
        return
    assert keyed.index_to_key == ["king", "queen"] and np.isfinite(keyed.vectors).all()


@fuzz
@given(
    dim=st.integers(1, 4),
    rows=st.lists(st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.lists(NUMBERS, min_size=4, max_size=4)),
                  min_size=1, max_size=4, unique_by=lambda r: r[0]),
    separator=st.sampled_from([" ", "  ", "\t"]),
)  # fmt: skip
def test_a_text_vectors_file_is_read_as_its_text_says_or_refused(dim, rows, separator, tmp_path):
    """Never values of ~1e-19 from a damaged text file taken for binary: what is read is what the text says."""
    path = tmp_path / "v.txt"
    lines = [f"{len(rows)} {dim}", *(separator.join([word, *values[:dim]]) for word, values in rows)]
    path.write_text("\n".join(lines) + "\n")
    try:
        words, vectors = read_word2vec(path, allow_nonfinite=True)
    except ZooError:
        return
    assert words == [word for word, _ in rows]
    expected = np.array([[float(v) for v in values[:dim]] for _, values in rows], dtype=np.float64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(vectors, expected.astype(np.float32))


@fuzz
@given(
    text=st.text(st.sampled_from("ab \t\n\r\u00e9\u2028"), max_size=60),
    max_length=st.integers(1, 4),
    limit=st.none() | st.integers(0, 4),
    suffix=st.sampled_from(["", ".gz", ".bz2", ".xz"]),
)
def test_line_sentence_reads_a_file_as_gensim_reads_its_lines(text, max_length, limit, suffix, tmp_path):
    """Read in bounded pieces (a 3 GB line is no longer held whole), the sentences are gensim's."""
    import bz2
    import gzip
    import io
    import lzma

    from zoo_word2vec.gensim_api.corpora import LineSentence, Text8Corpus, _sentences

    raw = text.encode()
    packed = {"": raw, ".gz": gzip.compress(raw), ".bz2": bz2.compress(raw), ".xz": lzma.compress(raw)}[suffix]
    path = tmp_path / f"corpus.txt{suffix}"
    path.write_bytes(packed)
    lines = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline=None)  # gensim's, with zoo's line ends
    expected = list(_sentences(lines, max_length, limit))
    assert list(LineSentence(path, max_length, limit)) == expected
    words = raw.decode().split()
    assert list(Text8Corpus(path, max_length)) == [words[i : i + max_length] for i in range(0, len(words), max_length)]
