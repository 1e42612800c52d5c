"""fastText's ``.bin`` model files, as the fastText tool and gensim's ``save_facebook_model`` write them.

All numbers are little-endian. In order:

- the signature: int32 magic 793712314, int32 version (12; 11 is read too);
- the Args block: int32 dim, ws, epoch, minCount, neg, wordNgrams, loss
  (1 hs, 2 ns, 3 softmax, 4 ova), model (1 cbow, 2 sg, 3 supervised), bucket,
  minn, maxn, lrUpdateRate, then float64 t;
- the Dictionary: int32 size, nwords, nlabels, int64 ntokens, int64
  pruneidx_size (-1 unless pruned); `size` entries of a NUL-terminated word,
  int64 count and int8 type (0 word, 1 label), words first; pruneidx_size pairs
  of int32;
- a bool (one byte): the input matrix is quantized (a ``.ftz`` file, from ``fasttext
  quantize``: `zoo_word2vec.fasttext_files.quantized`);
- the input matrix: int64 rows, int64 cols (= dim), rows x cols float32; its rows
  are the nwords words, then `bucket` n-gram buckets (a pruned dictionary: the
  pruneidx_size buckets its pairs ``(bucket, row)`` keep);
- a bool: the output matrix is quantized (read as such only when the input is); the
  output matrix, stored the same way (nwords rows, or nlabels for a supervised model).

The model read is a `zoo_word2vec.fasttext_files.model.FastTextModel`, which gives
every word, in the vocabulary or not, fastText's vector.

Reading trusts no size in the file: every count is checked against the bytes the
file still holds before anything is allocated (a gzipped file is read in chunks,
so what is allocated never exceeds what was decompressed), words are at most
64 KiB, and the n-grams that `minn`/`maxn` ask for are bounded by the file's
size, so a damaged or crafted file ends in a `DataError`, quickly.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from zoo.plugin_api import (
    CORRUPT_GZIP,
    MAX_WORD_BYTES,
    DataError,
    check_memory,
    corrupt_gzip,
    decode_word,
    is_safetensors,
    locate,
    open_binary,
    read_if_vectors,
)
from zoo_word2vec.fasttext_files.model import SUPERVISED, FastTextArgs, FastTextModel, fasttext_from_zoo
from zoo_word2vec.fasttext_files.quantized import read_quantized

__all__ = [
    "FASTTEXT_MAGIC",
    "is_fasttext_bin",
    "load_fasttext_model",
    "read_args",
    "read_fasttext_bin",
    "write_fasttext_bin",
]

FASTTEXT_MAGIC = 793712314
"""The int32 every fastText model file starts with."""

_VERSION = 12
_ARGS = struct.Struct("<12id")
_DICTIONARY = struct.Struct("<3i2q")
_OLD_ARGS_TAIL = struct.Struct("<10id")  # the Args after dim and ws, in fastText's first layout
_OLD_DICTIONARY = struct.Struct("<3iq")
_ENTRY_TAIL = struct.Struct("<qb")
_SHAPE = struct.Struct("<2q")
_SIGNATURE = struct.Struct("<2i")
_FLAG = struct.Struct("<B")
_READ = 1 << 16
_CHUNK = 1 << 20  # bytes read at a time into a matrix (a read allocates its size before it gets any)
_NGRAMS_PER_BYTE = 2  # the most n-grams a file may ask for, per byte it holds (real files: well under 1)
_LONGEST_NGRAM = 512  # characters: hashing takes a pass per character of the longest n-gram
_BYTES_PER_NGRAM = 64  # what listing one n-gram costs at peak (its hash, start, length, row; their sorting)


# -- reading ------------------------------------------------------------------------------


class _Source:
    """Exact reads from a (possibly gzipped) binary stream: every size is checked against the
    bytes left (plain files) or read in bounded chunks (gzip) before it is trusted."""

    def __init__(self, handle: BinaryIO, path: Path, size: int | None) -> None:
        self.handle, self.path, self.size = handle, path, size
        self.buffer, self.pos, self.pulled = b"", 0, 0

    @property
    def consumed(self) -> int:
        return self.pulled - (len(self.buffer) - self.pos)

    def short(self, what: str) -> DataError:
        return DataError(
            f"{self.path}: the file ends inside {what}: it is truncated (cut short while downloading or "
            "copying?) or not a fastText model; fetch it again"
        )

    def need(self, count: int, what: str) -> None:
        """Fail now, before allocating, if a plain file cannot hold `count` more bytes."""
        if count < 0:
            raise DataError(f"{self.path}: {what} has a negative size: a damaged file?")
        if self.size is not None and count > self.size - self.consumed:
            raise DataError(
                f"{self.path}: {what} needs {count} bytes but the file has {self.size - self.consumed} left "
                "(truncated, or a damaged or crafted header)"
            )

    def _pull(self, what: str) -> None:
        more = self.handle.read(_READ)
        if not more:
            raise self.short(what)
        self.pulled += len(more)
        self.buffer, self.pos = self.buffer[self.pos :] + more, 0

    def unpack(self, layout: struct.Struct, what: str) -> tuple:
        while len(self.buffer) - self.pos < layout.size:
            self._pull(what)
        values = layout.unpack_from(self.buffer, self.pos)
        self.pos += layout.size
        return values

    def until_nul(self, what: str) -> bytes:
        while (end := self.buffer.find(b"\0", self.pos)) < 0:
            if len(self.buffer) - self.pos > MAX_WORD_BYTES:
                raise DataError(f"{self.path}: {what} is longer than {MAX_WORD_BYTES} bytes: a damaged file?")
            self._pull(what)
        if end - self.pos > MAX_WORD_BYTES:
            raise DataError(f"{self.path}: {what} is longer than {MAX_WORD_BYTES} bytes: a damaged file?")
        word, self.pos = self.buffer[self.pos : end], end + 1
        return word

    def _drain(self, count: int) -> bytes:
        """Up to `count` bytes from the buffer."""
        taken = self.buffer[self.pos : self.pos + count]
        self.pos += len(taken)
        return taken

    def floats(self, count: int, what: str) -> np.ndarray:
        """`count` float32 ``[count]``."""
        return self.raw(count, what, dtype="<f4")

    def raw(self, count: int, what: str, dtype: str = "u1") -> np.ndarray:
        """`count` values of `dtype` ``[count]`` (bytes by default)."""
        width = np.dtype(dtype).itemsize
        self.need(width * count, what)
        if self.size is not None:  # a plain file holds them: allocate, then fill
            data = np.empty(count, dtype=dtype)
            view = memoryview(data).cast("B")
            filled = len(head := self._drain(view.nbytes))
            view[:filled] = head
            while filled < view.nbytes:
                got = self.handle.readinto(view[filled : filled + _CHUNK])
                if not got:
                    raise self.short(what)
                filled += got
                self.pulled += got
            return data
        data = bytearray(self._drain(width * count))  # gzip: grow with what actually arrives
        while len(data) < width * count:
            more = self.handle.read(min(_CHUNK, width * count - len(data)))
            if not more:
                raise self.short(what)
            self.pulled += len(more)
            data += more
        return np.frombuffer(data, dtype=dtype)

    def skip(self, count: int, what: str) -> None:
        self.need(count, what)
        left = count - len(self._drain(count))
        if self.size is not None:
            self.handle.seek(left, os.SEEK_CUR)
            self.pulled += left
            return
        while left:
            more = self.handle.read(min(_CHUNK, left))
            if not more:
                raise self.short(what)
            self.pulled += len(more)
            left -= len(more)

    def expect_end(self) -> None:
        extra = (len(self.buffer) - self.pos) + len(self.handle.read(_READ))
        if extra:
            raise DataError(
                f"{self.path}: more bytes follow the output matrix, where a fastText model ends: "
                "a damaged file, or one that is not a fastText model"
            )


def is_fasttext_bin(path: str | os.PathLike) -> bool:
    """Whether `path` (plain or gzipped) starts with fastText's magic number."""
    with open_binary(Path(path), "fastText .bin file") as handle:
        try:
            head = handle.read(4)
        except CORRUPT_GZIP:
            return False
    return len(head) == 4 and int.from_bytes(head, "little") == FASTTEXT_MAGIC


def read_args(path: str | os.PathLike) -> FastTextArgs:
    """The Args block of the fastText model at `path` (plain or gzipped), read from its header alone."""
    path = Path(path)
    with open_binary(path, "fastText .bin file") as handle:
        source = _Source(handle, path, None)
        try:
            magic, version = source.unpack(_SIGNATURE, "the signature")
            if magic != FASTTEXT_MAGIC:
                raise DataError(f"{path}: not a fastText model (it does not start with fastText's magic number)")
            args = FastTextArgs(*source.unpack(_ARGS, "the Args block"))
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None
    args.check(str(path))
    if version == 11 and args.model == SUPERVISED:
        args = dataclasses.replace(args, maxn=0)  # as fastText: version-11 classifiers have no n-grams
    return args


def read_fasttext_bin(
    path: str | os.PathLike,
    *,
    output: bool = True,
    encoding: str = "utf-8",
    unicode_errors: str = "strict",
    quantized: bool = False,
) -> FastTextModel:
    """Read a fastText ``.bin`` model (plain or gzipped) whole: Args, dictionary, matrices.

    **Arguments:**

    - `output`: read the output matrix too (False skips it: half the memory, enough for vectors).
    - `encoding`, `unicode_errors`: how words are decoded; n-grams use the bytes themselves.
    - `quantized`: read a quantized ``.ftz`` classifier too: its input matrix is then a
      `QuantizedMatrix`, its output matrix decoded, and a pruned dictionary's buckets are in
      the model's `pruned` (without it, such a file is a `DataError` pointing to ``zoo.load``).

    A truncated or damaged file raises `DataError`.
    """
    path = Path(path)
    with open_binary(path, "fastText .bin file") as handle:
        size = None if isinstance(handle, gzip.GzipFile) else path.stat().st_size
        source = _Source(handle, path, size)
        try:
            return _read(source, output, encoding, unicode_errors, quantized)
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None


def _read(source: _Source, output: bool, encoding: str, unicode_errors: str, allow_quantized: bool) -> FastTextModel:
    path = source.path
    magic, version = source.unpack(_SIGNATURE, "the signature")
    if magic != FASTTEXT_MAGIC:  # fastText before its file version 11 wrote no signature: Args come first
        return _read_unsigned(source, (magic, version), output, encoding, unicode_errors)
    if version not in (11, _VERSION):
        raise DataError(
            f"{path}: fastText file format version {version}; this reader knows versions 11 and 12 "
            "(what fastText 0.9 and gensim write)"
        )
    args = FastTextArgs(*source.unpack(_ARGS, "the Args block"))
    args.check(str(path))
    if version == 11 and args.model == SUPERVISED:
        args = dataclasses.replace(args, maxn=0)  # as fastText: version-11 classifiers have no n-grams
    spellings, counts, nwords, ntokens, pruned = _read_dictionary(source)
    quantized = _flag(source, "the input quantization flag")
    if quantized and not allow_quantized:
        raise DataError(
            f"{path} is a quantized fastText model (.ftz, from `fasttext quantize`), a classifier: its rows are "
            "compressed for predicting labels, not for word vectors. Load it as a classifier (zoo.load, zoo classify), "
            "or use the full .bin it was made from"
        )
    if pruned is not None and not quantized:
        raise DataError(
            f"{path}: the dictionary is marked pruned but the model is not quantized; fastText refuses such files too "
            "('Invalid model file': models written before mid-2017 look like this): fetch the updated model"
        )
    in_rows = nwords + (args.bucket if pruned is None else len(pruned))
    if quantized:  # a .ftz: product-quantized rows (fasttext_files.quantized)
        input_matrix = read_quantized(source, in_rows, args.dim, "the input matrix")
    else:
        input_matrix = _read_matrix(source, in_rows, args.dim, "the input matrix")
    quantized_output = _flag(source, "the output quantization flag") and quantized
    out_rows = len(spellings) - nwords if args.model == SUPERVISED else nwords
    if quantized_output:  # small (a row per label): decoded
        output_matrix = np.asarray(read_quantized(source, out_rows, args.dim, "the output matrix"))
    else:
        output_matrix = _output_matrix(source, out_rows, args.dim, output)
    source.expect_end()
    words = [decode_word(s, path, f"dictionary entry {i}", encoding, unicode_errors) for i, s in enumerate(spellings)]
    model = FastTextModel(
        args,
        words[:nwords],
        counts[:nwords],
        input_matrix,
        output_matrix,
        labels=words[nwords:],
        label_counts=counts[nwords:],
        ntokens=ntokens,
        spellings=spellings,
        encoding=encoding,
        pruned=pruned,
    )
    _check_ngram_budget(model, source)
    return model


def _output_matrix(source: _Source, rows: int, dim: int, output: bool) -> np.ndarray | None:
    """The output matrix ``[rows, dim]`` when `output`, else checked and skipped (None)."""
    if output:
        return _read_matrix(source, rows, dim, "the output matrix")
    _check_shape(source, rows, dim, "the output matrix")
    source.skip(4 * rows * dim, "the output matrix")
    return None


def _read_unsigned(
    source: _Source, first: tuple[int, int], output: bool, encoding: str, unicode_errors: str
) -> FastTextModel:
    """A model of fastText's first file layout (2016-17; gensim reads it too): Args without the
    signature, a dictionary header without the pruned index, matrices without quantization flags."""
    path = source.path
    try:
        args = FastTextArgs(*first, *source.unpack(_OLD_ARGS_TAIL, "the Args block"))
        args.check(str(path))
    except DataError:
        raise DataError(f"{path}: not a fastText model (it does not start with fastText's magic number)") from None
    if args.model == SUPERVISED:
        raise DataError(f"{path}: a classifier in fastText's first file layout, which zoo does not read")
    size, nwords, nlabels, ntokens = source.unpack(_OLD_DICTIONARY, "the dictionary header")
    if min(size, nwords, nlabels) < 0 or nwords + nlabels != size:
        raise DataError(f"{path}: the dictionary header says {size} entries = {nwords} words + {nlabels} labels")
    source.need(size * (1 + _ENTRY_TAIL.size), f"the {size} dictionary entries")
    spellings, counts = [], []
    for i in range(size):
        spellings.append(source.until_nul(f"dictionary entry {i}"))
        counts.append(source.unpack(_ENTRY_TAIL, f"dictionary entry {i}")[0])
    input_matrix = _read_matrix(source, nwords + args.bucket, args.dim, "the input matrix")
    output_matrix = _output_matrix(source, nwords, args.dim, output)
    source.expect_end()
    words = [decode_word(s, path, f"dictionary entry {i}", encoding, unicode_errors) for i, s in enumerate(spellings)]
    model = FastTextModel(
        args,
        words[:nwords],
        np.asarray(counts[:nwords], dtype=np.int64),
        input_matrix,
        output_matrix,
        ntokens=ntokens,
        spellings=spellings[:nwords],
        encoding=encoding,
    )
    _check_ngram_budget(model, source)
    return model


def _flag(source: _Source, what: str) -> bool:
    (value,) = source.unpack(_FLAG, what)
    if value > 1:
        raise DataError(f"{source.path}: {what} is {value}, expected 0 or 1: a damaged file?")
    return bool(value)


def _read_dictionary(source: _Source) -> tuple[list[bytes], np.ndarray, int, int, np.ndarray | None]:
    """``(spellings, counts, nwords, ntokens, pruned)``, every entry's type checked; `pruned` the
    pruned dictionary's ``(bucket, row)`` pairs ``[k, 2]`` int64 (None: not pruned)."""
    path = source.path
    size, nwords, nlabels, ntokens, pruneidx_size = source.unpack(_DICTIONARY, "the dictionary header")
    if min(size, nwords, nlabels) < 0 or nwords + nlabels != size or pruneidx_size < -1:
        raise DataError(
            f"{path}: the dictionary header says {size} entries = {nwords} words + {nlabels} labels "
            f"(pruned index {pruneidx_size}): inconsistent, a damaged file?"
        )
    source.need(size * (1 + _ENTRY_TAIL.size), f"the {size} dictionary entries")
    spellings, counts = [], []  # grown entry by entry: a gzipped file's claims are not checked ahead
    for i in range(size):
        spellings.append(source.until_nul(f"dictionary entry {i}"))
        count, kind = source.unpack(_ENTRY_TAIL, f"dictionary entry {i}")
        counts.append(count)
        if kind != (i >= nwords):
            raise DataError(
                f"{path}: dictionary entry {i} ({spellings[-1][:40]!r}) has type {kind}; the header's {nwords} words "
                f"(type 0) should come first, then {nlabels} labels (type 1)"
            )
    pruned = None
    if pruneidx_size >= 0:
        pruned = source.raw(2 * pruneidx_size, "the pruned bucket index", dtype="<i4").reshape(-1, 2).astype(np.int64)
    return spellings, np.array(counts, dtype=np.int64), nwords, ntokens, pruned


def _check_shape(source: _Source, rows: int, dim: int, what: str) -> None:
    shape = source.unpack(_SHAPE, f"the shape of {what}")
    if shape != (rows, dim):
        raise DataError(
            f"{source.path}: {what} is {shape[0]} x {shape[1]}; the Args and dictionary make it {rows} x {dim}"
        )


def _read_matrix(source: _Source, rows: int, dim: int, what: str) -> np.ndarray:
    _check_shape(source, rows, dim, what)
    return source.floats(rows * dim, what).reshape(rows, dim)


def _check_ngram_budget(model: FastTextModel, source: _Source) -> None:
    a = model.args
    longest = min(a.maxn, 2 + max((len(s) for s in model.spellings[: model.nwords]), default=0))
    if a.has_ngrams and longest > _LONGEST_NGRAM:
        raise DataError(
            f"{source.path}: maxn={a.maxn} asks for n-grams of up to {longest} characters of its words; zoo lists "
            f"n-grams of at most {_LONGEST_NGRAM} (real models: maxn 6 or so): a damaged or crafted file"
        )
    counts = model.ngram_counts()
    total = int(counts.sum())
    if counts.size:  # the words' n-grams are listed a chunk at a time; a chunk holds at least its longest word
        most = max(int(counts.max()), min(total, (1 << 24) // max(model.dim, 1)))
        check_memory(_BYTES_PER_NGRAM * most, f"{source.path}: listing the n-grams of its words ({most} at a time)")
    if total > _NGRAMS_PER_BYTE * source.consumed + (1 << 20):
        raise DataError(
            f"{source.path}: minn={a.minn}, maxn={a.maxn} give its {model.nwords} words {total} n-grams, over "
            f"{_NGRAMS_PER_BYTE} per byte of the file (real models have fewer than one): a damaged or crafted file"
        )


# -- writing ------------------------------------------------------------------------------


def write_fasttext_bin(path: str | os.PathLike, model: Any) -> Path:
    """Write `model` as a fastText ``.bin`` (version 12) that fastText and gensim load; return the path.

    `model` is a `FastTextModel` or a zoo ``fasttext`` model (`fasttext_from_zoo`). Without an
    output matrix, zeros are written in its place (the vectors are whole; training would
    restart its output layer). A path ending in ``.gz`` is gzipped (gensim reads it, fastText not).
    """
    if not isinstance(model, FastTextModel):
        model = fasttext_from_zoo(model)
    path = Path(path)
    for i, spelling in enumerate(model.spellings):
        if not spelling or b"\0" in spelling:
            raise DataError(f"entry {i} ({spelling[:40]!r}) is empty or holds a NUL byte: fastText cannot store it")
    counts = np.concatenate([model.counts, model.label_counts])
    ntokens = int(counts.sum()) if model.ntokens is None else model.ntokens
    output = model.output if model.output is not None else np.zeros(model.output_shape, np.float32)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as out:
        out.write(_SIGNATURE.pack(FASTTEXT_MAGIC, _VERSION))
        out.write(_ARGS.pack(*dataclasses.astuple(model.args)))
        out.write(_DICTIONARY.pack(len(counts), model.nwords, len(model.labels), ntokens, -1))
        for i, (spelling, count) in enumerate(zip(model.spellings, counts.tolist(), strict=True)):
            out.write(spelling + b"\0" + _ENTRY_TAIL.pack(count, int(i >= model.nwords)))
        for matrix in (model.input, output):
            out.write(b"\0" + _SHAPE.pack(*matrix.shape))
            out.write(memoryview(np.ascontiguousarray(matrix, dtype="<f4")).cast("B"))
    return path


def load_fasttext_model(path: str | os.PathLike) -> FastTextModel:
    """A fastText ``.bin`` file, a zoo model file of a ``fasttext`` model, or a zoo vectors file of
    a ``.bin``, as a `FastTextModel`; or the stored name of one of these."""
    import zoo

    path = locate(path)
    if is_fasttext_bin(path):
        return read_fasttext_bin(path)
    if not is_safetensors(path):
        raise DataError(f"{path} is neither a fastText .bin nor a zoo model file: it has no n-gram buckets to write")
    parts = read_if_vectors(path)
    if parts is None:
        return fasttext_from_zoo(zoo.load(path))
    if not isinstance(parts["oov"], FastTextModel):
        raise DataError(f"{path} holds word vectors without fastText's n-gram buckets: export them as word2vec")
    return parts["oov"]
