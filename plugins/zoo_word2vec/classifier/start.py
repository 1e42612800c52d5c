"""Where training starts: the input and output matrices, holding only the hashed rows a corpus uses.

fastText allocates all ``nwords + bucket`` input rows (2M buckets: 800 MB at dim 100) and
draws them before the first step, though a corpus touches few of them (116,894 of 2,000,000
for the movie-review sentences with word bigrams) and an untouched row never moves. Here
the rows the featurised lines use are found first (`stored_buckets`); only the words' rows and
those are allocated and drawn, each as it would be drawn in the full matrix (`uniform_rows`
keys a row's values by its index), and the model keeps them with their bucket numbers.
A built model continues from its own rows (a model that stores some buckets gains the new
ones its lines use, drawn the same way).
"""

from __future__ import annotations

import json
from typing import Any

import equinox as eqx
import jax
import numpy as np

from zoo.plugin_api import DataError, ModelSpec, build_from_spec, check_memory
from zoo_word2vec.classifier.kernels import dense_buckets, stored_buckets, uniform_rows
from zoo_word2vec.classifier.model import hashed_rows

__all__ = ["aligned", "starting_point"]


def aligned(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float32 array on a 64-byte boundary, which JAX on CPU takes without a copy."""
    size = int(np.prod(shape)) * 4
    raw = np.empty(size + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + size].view(np.float32).reshape(shape)


def _with_buckets(model: Any, stored: int) -> Any:
    """The skeleton of `model`'s architecture storing `stored` buckets (nothing allocated)."""
    record = json.loads(model.spec.to_json())
    record["params"]["stored_buckets"] = stored
    spec = ModelSpec.from_json(json.dumps(record))
    return eqx.filter_eval_shape(lambda key: build_from_spec(spec, key=key, vocabs=model.vocabs), jax.random.key(0))


def _drawn(rows: np.ndarray, dim: int, seed: int) -> np.ndarray:
    """Rows `rows` of fastText's starting input matrix: uniform in ``±1/dim``, from `seed`."""
    out = aligned((rows.size, dim))
    uniform_rows(out, rows, 1.0 / dim, 2 * seed + 1)
    return out


def _output(model: Any, seed: int) -> np.ndarray:
    out = aligned(tuple(model.output.shape))
    if isinstance(model.output, jax.ShapeDtypeStruct):  # fastText's start: zero (or uniform on request)
        if model.spec["output_init"] == "uniform":
            uniform_rows(out, np.arange(out.shape[0]), 1.0 / model.spec["dim"], 2 * seed + 2)
        else:
            out[:] = 0.0
    else:
        out[:] = np.asarray(model.output)
    return out


def _check_start_memory(model: Any, rows: np.ndarray, nwords: int, buckets: int, dim: int) -> None:
    """Refuse, before allocating, a start that passes the memory budget: the input rows (the words'
    and at most every bucket the lines use), the output rows, and `stored_buckets`' work: two
    tables of `bucket` entries, or a sorted copy of the rows."""
    used = min(buckets, int(rows.size)) if model.bucket_ids is None or buckets == 0 else buckets
    inputs = (nwords + used) * dim * 4 if model.bucket_ids is not None or buckets else nwords * dim * 4
    if model.bucket_ids is None and not isinstance(model.input, jax.ShapeDtypeStruct):
        inputs = int(np.prod(model.input.shape, dtype=np.float64)) * 4
    outputs = int(np.prod(model.output.shape, dtype=np.float64)) * 4
    check_memory(
        inputs + outputs + 12 * (buckets if dense_buckets(buckets, int(rows.size)) else int(rows.size)),
        f"training the classifier ({nwords} words + up to {used} of bucket={buckets} n-gram rows, dim={dim}, "
        f"{model.output.shape[0]} output rows)",
    )


def starting_point(model: Any, rows: np.ndarray, seed: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """``(model, input, output, rows)``: the model (a skeleton with the buckets to store, when they
    change), writable float32 copies of its matrices to train, and `rows` (fastText's layout) as
    rows of that input. `model` is a built model or its skeleton (``jax.ShapeDtypeStruct`` leaves)."""
    if model.spec["quantize_dsub"]:
        raise DataError(
            "a quantized classifier (quantize_dsub > 0, a .ftz) predicts but does not train: train the full model, "
            "or a new one"
        )
    nwords, buckets, dim = model.spec["vocab_size"], hashed_rows(model.spec.params), model.spec["dim"]
    skeleton = isinstance(model.input, jax.ShapeDtypeStruct)
    _check_start_memory(model, rows, nwords, buckets, dim)
    output = _output(model, seed)
    if not skeleton and model.bucket_ids is None:  # all rows stored (fastText's layout): go on from them
        inputs = aligned(tuple(model.input.shape))
        inputs[:] = np.asarray(model.input)
        return model, inputs, output, rows
    if buckets == 0:  # no n-grams: the words' rows are all there is
        return model, _drawn(np.arange(nwords), dim, seed), output, rows
    if skeleton:
        kept, rows = stored_buckets(rows, nwords, buckets)
        inputs = aligned((nwords + kept.size, dim))
        uniform_rows(inputs, np.concatenate([np.arange(nwords), nwords + kept]), 1.0 / dim, 2 * seed + 1)
    else:
        had = np.asarray(model.bucket_ids).astype(np.int64)
        kept = np.union1d(had, stored_buckets(rows, nwords, buckets)[0])
        inputs = aligned((nwords + kept.size, dim))
        matrix = np.asarray(model.input)
        inputs[:nwords] = matrix[:nwords]
        fresh = ~np.isin(kept, had)
        inputs[nwords:][fresh] = _drawn(nwords + kept[fresh], dim, seed)
        inputs[nwords:][~fresh] = matrix[nwords:]
        rows = np.where(rows < nwords, rows, nwords + np.searchsorted(kept, rows - nwords))
    model = _with_buckets(model, int(kept.size))
    model = eqx.tree_at(lambda m: m.bucket_ids, model, jax.numpy.asarray(kept.astype(np.int32)))
    return model, inputs, output, rows
