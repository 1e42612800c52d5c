"""fastText's product-quantized matrices: the input (and output) matrix of a ``.ftz`` model.

``fasttext quantize`` (Jégou, Douze & Schmid 2011, as fastText applies it: Joulin et al.
2016, FastText.zip) splits each row of ``dim`` values into ``nsubq`` sub-vectors of ``dsub``
values (the last of ``lastdsub``), and keeps, per sub-vector, the number of the nearest of 256
centroids learnt for that position: a row becomes ``nsubq`` bytes. With ``qnorm`` the rows
are normalised first and their norms quantized too, by a quantizer of one value.

The layout, little-endian, as fastText writes a quantized matrix:

- bool ``qnorm`` (one byte), int64 ``m`` (rows), int64 ``n`` (= dim), int32 ``codesize``
  (= ``m * nsubq``), then ``codesize`` bytes of codes: row i's are ``codes[i*nsubq:(i+1)*nsubq]``;
- the quantizer: int32 ``dim``, ``nsubq``, ``dsub``, ``lastdsub``, then ``256 * dim`` float32
  centroids: sub-quantizer ``j < nsubq - 1`` holds its 256 centroids of ``dsub`` values from
  ``j * 256 * dsub`` on, the last its 256 of ``lastdsub`` values after them;
- with ``qnorm``: ``m`` bytes of norm codes, then a quantizer of dim 1 (the 256 norms).

Row i decoded is, per sub-quantizer j, centroid ``codes[i, j]`` of j, times the row's norm (1
without ``qnorm``): exactly what fastText adds when it sums a quantized row.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from zoo.plugin_api import DataError

__all__ = ["KSUB", "ProductQuantizer", "QuantizedMatrix", "read_quantized", "write_quantized"]

KSUB = 256
"""Centroids per sub-quantizer (8-bit codes)."""

_MATRIX = struct.Struct("<?qqi")
_QUANTIZER = struct.Struct("<4i")


@dataclass(frozen=True, eq=False)
class ProductQuantizer:
    """`KSUB` centroids per sub-vector: ``centroids`` ``[256 * dim]`` float32 in fastText's layout."""

    dim: int
    nsubq: int
    dsub: int
    lastdsub: int
    centroids: np.ndarray

    def check(self, where: str) -> None:
        ok = self.dim >= 1 and self.dsub >= 1 and 1 <= self.lastdsub <= self.dsub and self.nsubq >= 1
        if not ok or (self.nsubq - 1) * self.dsub + self.lastdsub != self.dim:
            raise DataError(
                f"{where}: a product quantizer of dim {self.dim} with {self.nsubq} sub-quantizers of {self.dsub} "
                f"(the last {self.lastdsub}) does not add up: a damaged or crafted file"
            )
        if self.centroids.shape != (KSUB * self.dim,):
            raise DataError(f"{where}: {self.centroids.size} centroid values, expected {KSUB * self.dim}")

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The vectors of `codes` ``[n, nsubq]`` uint8 ``[n, dim]`` float32."""
        codes = np.asarray(codes, dtype=np.uint8).reshape(-1, self.nsubq)
        split = (self.nsubq - 1) * KSUB * self.dsub
        main = self.centroids[:split].reshape(self.nsubq - 1, KSUB, self.dsub)
        head = main[np.arange(self.nsubq - 1), codes[:, :-1]].reshape(codes.shape[0], (self.nsubq - 1) * self.dsub)
        tail = self.centroids[split:].reshape(KSUB, self.lastdsub)[codes[:, -1]]
        return np.concatenate([head, tail], axis=1)


@dataclass(frozen=True, eq=False)
class QuantizedMatrix:
    """A quantized ``[rows, dim]`` matrix: ``codes`` ``[rows, nsubq]`` uint8 and the quantizer; with
    normalised rows, ``norm_codes`` ``[rows]`` uint8 and the norms' quantizer (dim 1)."""

    codes: np.ndarray
    quantizer: ProductQuantizer
    norm_codes: np.ndarray | None = None
    norm_quantizer: ProductQuantizer | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape[0], self.quantizer.dim

    def norms(self, rows: Any = slice(None)) -> np.ndarray:
        """The norms of `rows` (ones without ``qnorm``) ``[n]`` float32."""
        if self.norm_codes is None:
            return np.ones(len(self.codes[rows]), dtype=np.float32)
        return self.norm_quantizer.centroids[self.norm_codes[rows]]

    def __getitem__(self, rows: Any) -> np.ndarray:
        """Rows `rows` decoded, float32 (one index: ``[dim]``; many: ``[n, dim]``)."""
        one = np.ndim(rows) == 0 and not isinstance(rows, slice)
        picked = np.atleast_1d(np.arange(self.shape[0])[rows])
        vectors = self.quantizer.decode(self.codes[picked]) * self.norms(picked)[:, None]
        return vectors[0] if one else vectors

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self[:], dtype=dtype)


def _read_quantizer(source: Any, what: str) -> ProductQuantizer:
    dim, nsubq, dsub, lastdsub = source.unpack(_QUANTIZER, f"the quantizer of {what}")
    if not 1 <= dim <= 1 << 20:
        raise DataError(f"{source.path}: the quantizer of {what} has dim {dim}: a damaged or crafted file")
    centroids = source.floats(KSUB * dim, f"the centroids of {what}")
    quantizer = ProductQuantizer(dim, nsubq, dsub, lastdsub, centroids)
    quantizer.check(f"{source.path}: {what}")
    return quantizer


def read_quantized(source: Any, rows: int, dim: int, what: str) -> QuantizedMatrix:
    """A quantized matrix of `rows` x `dim` from `source` (``zoo_word2vec.fasttext_files.bin``'s reader,
    which checks each size against the bytes left before it allocates)."""
    qnorm, m, n, codesize = source.unpack(_MATRIX, f"the header of {what}")
    if (m, n) != (rows, dim):
        raise DataError(f"{source.path}: {what} is {m} x {n}; the Args and dictionary make it {rows} x {dim}")
    if codesize < 0 or (m and codesize % m) or codesize > m * n:
        raise DataError(
            f"{source.path}: {what} has {codesize} code bytes for {m} rows of dim {n}: a damaged or crafted file"
        )
    codes = source.raw(codesize, f"the codes of {what}")
    quantizer = _read_quantizer(source, what)
    if codesize != m * quantizer.nsubq:
        raise DataError(f"{source.path}: {what} has {codesize} code bytes, expected {m} x {quantizer.nsubq}")
    if not qnorm:
        return QuantizedMatrix(codes.reshape(m, quantizer.nsubq), quantizer)
    norm_codes = source.raw(m, f"the norm codes of {what}")
    norms = _read_quantizer(source, f"the norms of {what}")
    if (norms.dim, norms.nsubq, norms.dsub) != (1, 1, 1):
        raise DataError(f"{source.path}: the norms of {what} are quantized in dim {norms.dim}, expected 1")
    return QuantizedMatrix(codes.reshape(m, quantizer.nsubq), quantizer, norm_codes, norms)


def _write_quantizer(out: BinaryIO, quantizer: ProductQuantizer) -> None:
    out.write(_QUANTIZER.pack(quantizer.dim, quantizer.nsubq, quantizer.dsub, quantizer.lastdsub))
    out.write(np.ascontiguousarray(quantizer.centroids, dtype="<f4").tobytes())


def write_quantized(out: BinaryIO, matrix: QuantizedMatrix) -> None:
    """Write `matrix` to `out` as fastText writes a quantized matrix."""
    rows, dim = matrix.shape
    out.write(_MATRIX.pack(matrix.norm_codes is not None, rows, dim, matrix.codes.size))
    out.write(np.ascontiguousarray(matrix.codes, dtype=np.uint8).tobytes())
    _write_quantizer(out, matrix.quantizer)
    if matrix.norm_codes is not None:
        out.write(np.ascontiguousarray(matrix.norm_codes, dtype=np.uint8).tobytes())
        _write_quantizer(out, matrix.norm_quantizer)
