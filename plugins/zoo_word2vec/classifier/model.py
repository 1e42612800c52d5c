"""fastText's supervised classifier: a mean of word and n-gram vectors, then a linear softmax."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int, PRNGKeyArray

from zoo.plugin_api import DataError, Model, ModelSpec, Vocabularies, get_tokenizer, uniform_rows
from zoo_word2vec.classifier.features import Featurizer
from zoo_word2vec.classifier.kernels import LOSSES, map_buckets
from zoo_word2vec.classifier.objectives import label_probabilities, line_losses
from zoo_word2vec.classifier.prediction import fasttext_probabilities, hs_search, k_best
from zoo_word2vec.classifier.quantized_rows import QuantizedRows, mean_input
from zoo_word2vec.fasttext_files.quantized import QuantizedMatrix
from zoo_word2vec.huffman import huffman_tree

__all__ = ["LABEL_PREFIX", "FastTextClassifier", "hashed_rows", "input_rows"]

LABEL_PREFIX = "__label__"
"""fastText's label prefix: a token of a line that starts with it is a label, not a word."""


def hashed_rows(params: Mapping[str, Any]) -> int:
    """The hashed rows of the input matrix: `bucket` when word or character n-grams are on, else
    none (fastText's supervised mode drops the buckets with ``wordNgrams <= 1`` and ``maxn == 0``)."""
    return int(params["bucket"]) if params["word_ngrams"] > 1 or params["maxn"] > 0 else 0


def input_rows(params: Mapping[str, Any]) -> int:
    """Rows of the input matrix: a row per word, then every hashed row (``stored_buckets = -1``,
    fastText's layout) or the `stored_buckets` rows the model keeps."""
    stored = int(params["stored_buckets"])
    return int(params["vocab_size"]) + (hashed_rows(params) if stored < 0 else stored)


class FastTextClassifier(Model):
    """``p(y | text) = softmax(B A x / |x|)`` (Joulin et al. 2017), one sigmoid per label (``ova``,
    ``ns``), or a Huffman tree's products of sigmoids (``hs``).

    `input` ``[vocab_size + buckets, dim]`` holds a row per word of ``vocabs["words"]`` and
    the hashed rows of word n-grams (``word_ngrams``) and character n-grams
    (``minn``..``maxn``) when either is on; `output` ``[num_classes, dim]`` a row per label of
    ``vocabs["labels"]`` (hs: a row per inner node of the tree, the last row unused). A
    text's inputs are its words' rows, their character n-grams', and its word n-grams'
    (`zoo_word2vec.classifier.features.Featurizer`), ``</s>`` closing it.

    Of the `bucket` hashed rows the model stores all (``stored_buckets = -1``, fastText's
    layout) or ``stored_buckets`` of them, those whose bucket numbers `bucket_ids` lists
    (sorted): a trained model keeps the rows its training touched, the others never moved
    from where they started. An n-gram whose row is not stored counts as a zero row
    (``unstored_buckets = "zero"``: a row never trained) or not at all (``"drop"``: fastText's
    pruned dictionary, ``quantize -cutoff``). With ``quantize_dsub > 0`` the input matrix is
    product-quantized (`QuantizedRows`, a ``.ftz``'s: sub-vectors of ``quantize_dsub`` values,
    norms quantized too with ``quantize_norm``); such a model predicts but does not train.

    Hyperparameters: ``vocab_size``, ``num_classes``, ``dim``, ``bucket``, ``word_ngrams``,
    ``minn``, ``maxn``, ``loss`` (``softmax``, ``ova``, ``hs`` or ``ns``), ``neg`` (noise labels
    per step with ``ns``), ``stored_buckets``, ``unstored_buckets``, ``quantize_dsub``,
    ``quantize_norm``, ``tokenizer``
    (``fasttext``: split as fastText splits), ``lowercase``, ``output_init`` (``zeros`` as
    fastText, or ``uniform``). Trained by `zoo_word2vec.classifier.fit.fit` (numba, Hogwild
    threads); `loss` is the same objective in JAX (`zoo_word2vec.classifier.objectives`), for
    batches of ``inputs [B, S]`` rows, ``inputs_mask [B, S]`` and ``labels [B, C]`` (0/1).

    ??? cite
        Joulin, Grave, Bojanowski & Mikolov 2017, Bag of Tricks for Efficient Text Classification.
    """

    input: Float[Array, "rows dim"] | QuantizedRows
    output: Float[Array, "classes dim"]
    bucket_ids: Int[Array, " stored"] | None
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if p["loss"] not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {p['loss']!r}")
        stored = p["stored_buckets"]
        if stored > hashed_rows(p):
            raise ValueError(f"stored_buckets={stored} is more than the {hashed_rows(p)} hashed rows there are")
        k_in, k_out = jax.random.split(key)
        dim = p["dim"]
        if p["quantize_dsub"] > dim:
            raise ValueError(f"quantize_dsub={p['quantize_dsub']} is more than the {dim} values of a row")
        if p["quantize_dsub"]:  # a quantized model (a .ftz) is read, not trained: its rows start at zero
            self.input = QuantizedRows.empty(input_rows(p), dim, p["quantize_dsub"], p["quantize_norm"])
        else:
            self.input = uniform_rows(k_in, (input_rows(p), dim), -1.0 / dim, 1.0 / dim)
        self.bucket_ids = None if stored < 0 else jnp.arange(stored, dtype=jnp.int32)
        if p["output_init"] == "zeros":  # fastText starts the output at zero
            self.output = jnp.zeros((p["num_classes"], dim), jnp.float32)
        elif p["output_init"] == "uniform":
            self.output = jax.random.uniform(k_out, (p["num_classes"], dim), jnp.float32, -1.0 / dim, 1.0 / dim)
        else:
            raise ValueError(f"output_init must be 'zeros' or 'uniform', got {p['output_init']!r}")
        self.spec, self.vocabs = spec, vocabs

    # -- the objective in JAX --------------------------------------------------------------

    def hidden(self, rows: Array, mask: Array) -> Float[Array, "batch dim"]:
        """Mean input row of each line: `rows` ``[B, S]`` int, `mask` ``[B, S]`` -> ``[B, dim]``."""
        weights = mask.astype(jnp.float32)
        summed = jnp.einsum("bs,bsd->bd", weights, self.input[rows])
        return summed / jnp.maximum(weights.sum(-1, keepdims=True), 1.0)

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean over the lines with inputs and labels of the expected loss of fastText's step
        (`zoo_word2vec.classifier.objectives.line_losses`)."""
        mask, labels = batch["inputs_mask"], batch["labels"].astype(jnp.float32)
        logits = self.hidden(batch["inputs"], mask) @ self.output.T
        per_line = line_losses(logits, labels, self.spec["loss"], self.label_counts(), self.spec["neg"])
        real = (jnp.any(mask, -1) & (labels.sum(-1) > 0)).astype(jnp.float32)
        return jnp.sum(per_line * real) / jnp.maximum(real.sum(), 1.0)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_len, k_rows, k_lab = jax.random.split(key, 3)
        longest = max(1, min(length - 2, 6))
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        rows = jax.random.randint(k_rows, (batch_size, longest), 0, self.input.shape[0])
        mask = jnp.arange(longest)[None, :] < lengths[:, None]
        pad = length - longest
        labels = jax.nn.one_hot(jax.random.randint(k_lab, (batch_size,), 0, p["num_classes"]), p["num_classes"])
        return {
            "inputs": jnp.pad(jnp.where(mask, rows, 0), ((0, 0), (0, pad))).astype(jnp.int32),
            "inputs_mask": jnp.pad(mask, ((0, 0), (0, pad))),
            "labels": labels.astype(jnp.float32),
        }

    # -- text in ---------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        """Split raw text as the training data was split (the spec's tokenizer and case); tokens
        starting with fastText's label prefix are left out, as fastText leaves them out of a line."""
        tokens = get_tokenizer(self.spec["tokenizer"])(text.lower() if self.spec["lowercase"] else text)
        return [t for t in tokens if not t.startswith(LABEL_PREFIX)]

    def featurizer(self) -> Featurizer:
        """The input rows of lines of tokens for this model, in fastText's layout (cached on the instance)."""
        cached = self.__dict__.get("_featurizer")
        if cached is None:
            p = self.spec.params
            words, bucket = self.vocabs["words"], hashed_rows(p)
            cached = Featurizer(words, bucket=bucket, word_ngrams=p["word_ngrams"], minn=p["minn"], maxn=p["maxn"])
            object.__setattr__(self, "_featurizer", cached)
        return cached

    def stored_rows(self, offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows in fastText's layout (`Featurizer`) as rows of `input`: ``(offsets, rows)``, -1 for a
        zero row (a bucket not stored, ``unstored_buckets = "zero"``)."""
        if self.bucket_ids is None:
            return offsets, rows
        kept = self._numpy()[2]
        drop = self.spec["unstored_buckets"] == "drop"
        return map_buckets(offsets, rows, self.spec["vocab_size"], kept, drop)

    def input_rows(self, texts: Sequence[str | Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """The rows of `input` each text averages (raw strings are tokenised; token lists taken as
        they are): ``(offsets [n + 1], rows [R])``, -1 for a zero row."""
        lines = [self.tokenize(t) if isinstance(t, str) else list(t) for t in texts]
        return self.stored_rows(*self.featurizer().rows(lines))

    def _hidden(self, texts: Sequence[str | Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Mean input row of each text ``[n, dim]`` (zeros for a text without inputs) and how many
        rows each has ``[n]``, in NumPy."""
        offsets, rows = self.input_rows(texts)
        return mean_input(self._numpy()[0], offsets, rows), np.diff(offsets)

    def _numpy(self) -> tuple[np.ndarray | QuantizedMatrix, np.ndarray, np.ndarray | None]:
        """`input`, `output` and `bucket_ids` as NumPy arrays, converted once per model (cached on
        the instance); `bucket_ids` checked to be sorted bucket numbers (a file may be crafted)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            kept = None if self.bucket_ids is None else np.asarray(self.bucket_ids).astype(np.int64)
            if (
                kept is not None
                and kept.size
                and (np.any(np.diff(kept) <= 0) or kept[0] < 0 or kept[-1] >= hashed_rows(self.spec.params))
            ):
                raise DataError(
                    f"the model's bucket_ids must be increasing bucket numbers below {hashed_rows(self.spec.params)}"
                )
            table = self.input.to_numpy() if isinstance(self.input, QuantizedRows) else np.asarray(self.input)
            cached = (table, np.asarray(self.output), kept)
            object.__setattr__(self, "_arrays", cached)
        return cached

    def label_counts(self) -> np.ndarray:
        """The labels' counts ``[num_classes]`` (the tree of hs and the noise of ns are built on
        them; ones when the labels vocabulary has none)."""
        labels = self.vocabs.get("labels") if self.vocabs else None
        if labels is None or labels.counts is None:
            return np.ones(self.spec["num_classes"], dtype=np.int64)
        return np.asarray(labels.counts, dtype=np.int64)

    def _logits(self, texts: Sequence[str | Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        hidden, sizes = self._hidden(texts)
        return hidden @ self._numpy()[1].T, sizes

    # -- fastText's API --------------------------------------------------------------------

    def get_sentence_vector(self, text: str | Sequence[str]) -> np.ndarray:
        """fastText's sentence vector of a supervised model ``[dim]``: the mean of the text's input
        rows (words, n-grams and ``</s>``), which is what the classifier sees."""
        return self._hidden([text])[0][0]

    def predict_proba(self, texts: Sequence[str | Sequence[str]], *, batch_size: int = 4096) -> np.ndarray:
        """Label probabilities ``[n, num_classes]``, columns in ``vocabs["labels"]`` order: a softmax,
        one independent sigmoid per label (``ova``, ``ns``), or each label's product of sigmoids
        along its path (``hs``). A text is a string or its tokens."""
        out = np.zeros((len(texts), self.spec["num_classes"]), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            logits, _ = self._logits(texts[start : start + batch_size])
            out[start : start + len(logits)] = label_probabilities(logits, self.spec["loss"], self.label_counts())
        return out

    def top_labels(
        self, texts: Sequence[str | Sequence[str]], *, k: int = 1, threshold: float = 0.0, batch_size: int = 4096
    ) -> list[tuple[tuple[str, ...], np.ndarray]]:
        """fastText's ``predict`` of each text: the `k` best labels (``k = -1``: all) that pass
        `threshold`, best first, with the probabilities fastText reports for them, float32
        (`zoo_word2vec.classifier.prediction`: about ``p + 1e-5``); none for a text without inputs."""
        if isinstance(k, bool) or not isinstance(k, int) or (k < 1 and k != -1):
            raise ValueError(f"k must be a positive integer or -1 (all labels), got {k!r}")
        names, loss = self.vocabs["labels"].tokens, self.spec["loss"]
        k = self.spec["num_classes"] if k == -1 else k
        tree = huffman_tree(self.label_counts()) if loss == "hs" else None
        out = []
        for start in range(0, len(texts), batch_size):
            logits, sizes = self._logits(texts[start : start + batch_size])
            if tree is None:
                logits = fasttext_probabilities(logits, loss)
            for row, size in zip(logits, sizes, strict=True):
                if not size:  # fastText predicts nothing for a line without inputs
                    out.append(((), np.zeros(0, np.float32)))
                    continue
                if tree is None:
                    scores, labels = k_best(row, k, np.float32(threshold))
                else:
                    scores, labels = hs_search(row.astype(np.float32), tree.left, tree.right, k, np.float32(threshold))
                out.append((tuple(names[i] for i in labels), np.exp(scores).astype(np.float32)))
        return out

    def predict(self, text: str | Sequence[str], k: int = 1, threshold: float = 0.0) -> Any:
        """fastText's ``predict``: the `k` most probable labels (``k = -1``: all) whose probability is
        at least `threshold`, most probable first, and the probabilities fastText reports (`top_labels`).

        One string gives ``(labels tuple, probabilities [m])``; a list of strings gives
        ``([labels tuple, ...], [probabilities, ...])``, one pair per text.
        """
        single = isinstance(text, str)
        found = self.top_labels([text] if single else list(text), k=k, threshold=threshold)
        labels = [labels for labels, _ in found]
        values = [probs.astype(np.float64) for _, probs in found]
        return (labels[0], values[0]) if single else (labels, values)

    def classify(self, texts: Sequence[str | Sequence[str]]) -> list[str]:
        """The most probable label of each text."""
        if "labels" not in self.vocabs:
            raise DataError("this model was built without a 'labels' vocabulary; build it with vocab={'labels': ...}")
        names = self.vocabs["labels"].tokens
        return [names[int(i)] for i in np.argmax(self.predict_proba(texts), -1)]
