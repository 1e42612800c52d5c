"""A classifier's input matrix in product-quantized form (`QuantizedRows`), as a ``.ftz`` keeps it.

Row i is, for each of the ``nsubq`` sub-vectors, one of 256 centroids (`codes` ``[rows,
nsubq]`` uint8 into `centroids`, fastText's layout: `zoo_word2vec.fasttext_files.quantized`),
times the row's norm when the norms are quantized too (`norm_codes` into `norms`). The
model's hyperparameters ``quantize_dsub`` (the sub-vector size; 0: a plain matrix) and
``quantize_norm`` fix the shapes. `mean_input` averages rows of either kind in NumPy, adding
each decoded row as fastText adds a quantized row.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, UInt8

from zoo_word2vec.classifier.kernels import mean_rows
from zoo_word2vec.fasttext_files.quantized import KSUB, ProductQuantizer, QuantizedMatrix

__all__ = ["QuantizedRows", "mean_input", "sub_quantizers"]


def sub_quantizers(dim: int, dsub: int) -> tuple[int, int]:
    """``(nsubq, lastdsub)`` of rows of `dim` values cut into sub-vectors of `dsub` (fastText's rule)."""
    nsubq, last = dim // dsub, dim % dsub
    return (nsubq + 1, last) if last else (nsubq, dsub)


class QuantizedRows(eqx.Module):
    """``[rows, dim]`` product-quantized; ``rows[ids]`` decodes (JAX)."""

    codes: UInt8[Array, "rows nsubq"]
    centroids: Float[Array, " centroids"]
    norm_codes: UInt8[Array, " rows"] | None
    norms: Float[Array, " 256"] | None
    dim: int = eqx.field(static=True)
    dsub: int = eqx.field(static=True)

    def __init__(self, codes: Any, centroids: Any, norm_codes: Any = None, norms: Any = None, *, dsub: int) -> None:
        self.codes, self.centroids = jnp.asarray(codes, jnp.uint8), jnp.asarray(centroids, jnp.float32)
        self.norm_codes = None if norm_codes is None else jnp.asarray(norm_codes, jnp.uint8)
        self.norms = None if norms is None else jnp.asarray(norms, jnp.float32)
        self.dim, self.dsub = self.centroids.shape[0] // KSUB, dsub

    @classmethod
    def empty(cls, rows: int, dim: int, dsub: int, norm: bool) -> QuantizedRows:
        """`rows` rows of zeros (every code 0 into zero centroids; norms 1): what a build starts from."""
        nsubq, _ = sub_quantizers(dim, dsub)
        norm_codes, norms = (jnp.zeros((rows,), jnp.uint8), jnp.ones((KSUB,), jnp.float32)) if norm else (None, None)
        return cls(
            jnp.zeros((rows, nsubq), jnp.uint8), jnp.zeros((KSUB * dim,), jnp.float32), norm_codes, norms, dsub=dsub
        )

    @classmethod
    def from_matrix(cls, matrix: QuantizedMatrix) -> QuantizedRows:
        """The rows of a `QuantizedMatrix` (as a ``.ftz`` holds them)."""
        norms = None if matrix.norm_quantizer is None else matrix.norm_quantizer.centroids
        return cls(matrix.codes, matrix.quantizer.centroids, matrix.norm_codes, norms, dsub=matrix.quantizer.dsub)

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape[0], self.dim

    def __getitem__(self, ids: Array) -> Float[Array, "... dim"]:
        nsubq, last = sub_quantizers(self.dim, self.dsub)
        codes = self.codes[ids].astype(jnp.int32)  # [..., nsubq]
        split = (nsubq - 1) * KSUB * self.dsub
        main = self.centroids[:split].reshape(nsubq - 1, KSUB, self.dsub)
        head = main[jnp.arange(nsubq - 1), codes[..., :-1]].reshape(*codes.shape[:-1], (nsubq - 1) * self.dsub)
        tail = self.centroids[split:].reshape(KSUB, last)[codes[..., -1]]
        rows = jnp.concatenate([head, tail], axis=-1)
        return rows if self.norms is None else rows * self.norms[self.norm_codes[ids]][..., None]

    def to_numpy(self) -> QuantizedMatrix:
        """The same matrix as a `QuantizedMatrix` of NumPy arrays."""
        nsubq, last = sub_quantizers(self.dim, self.dsub)
        quantizer = ProductQuantizer(self.dim, nsubq, self.dsub, last, np.asarray(self.centroids))
        if self.norms is None:
            return QuantizedMatrix(np.asarray(self.codes), quantizer)
        norms = ProductQuantizer(1, 1, 1, 1, np.asarray(self.norms))
        return QuantizedMatrix(np.asarray(self.codes), quantizer, np.asarray(self.norm_codes), norms)


def mean_input(table: np.ndarray | QuantizedMatrix, offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The mean of each line's rows of `table` ``[n, dim]`` float32, a plain or a quantized matrix
    (a row -1 is a zero row: it counts in the mean)."""
    if isinstance(table, np.ndarray):
        return mean_rows(table, offsets, rows)
    real = rows >= 0
    local = np.full(rows.shape, -1, dtype=np.int64)
    local[real] = np.arange(int(real.sum()))
    return mean_rows(np.ascontiguousarray(table[rows[real]], dtype=np.float32), offsets, local)
