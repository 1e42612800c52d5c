"""fastText's supervised classifier: a mean of word and n-gram vectors, then a linear softmax."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from zoo.plugin_api import DataError, Model, ModelSpec, Vocabularies, get_tokenizer
from zoo_word2vec.classifier.features import Featurizer
from zoo_word2vec.classifier.kernels import mean_rows

__all__ = ["FastTextClassifier", "hashed_rows"]


def hashed_rows(params: Mapping[str, Any]) -> int:
    """The hashed rows of the input matrix: `bucket` when word or character n-grams are on, else
    none (fastText's supervised mode drops the buckets with ``wordNgrams <= 1`` and ``maxn == 0``)."""
    return int(params["bucket"]) if params["word_ngrams"] > 1 or params["maxn"] > 0 else 0


class FastTextClassifier(Model):
    """``p(y | text) = softmax(B A x / |x|)`` (Joulin et al. 2017), or one sigmoid per label (``ova``).

    `input` ``[vocab_size + buckets, dim]`` holds a row per word of ``vocabs["words"]`` and
    `bucket` hashed rows for word n-grams (``word_ngrams``) and character n-grams
    (``minn``..``maxn``) when either is on; `output` ``[num_classes, dim]`` a row per label of
    ``vocabs["labels"]``. A text's inputs are its words' rows, their character n-grams', and
    its word n-grams' (`zoo_word2vec.classifier.features.Featurizer`), ``</s>`` closing it.

    Hyperparameters: ``vocab_size``, ``num_classes``, ``dim``, ``bucket``, ``word_ngrams``,
    ``minn``, ``maxn``, ``loss`` (``softmax`` or ``ova``), ``tokenizer`` (``whitespace``: fastText
    splits on white space), ``lowercase``, ``output_init`` (``zeros`` as fastText, or ``uniform``).
    Trained by `zoo_word2vec.classifier.fit.fit` (numba, Hogwild threads); `loss` is the same objective
    in JAX, for batches of ``inputs [B, S]`` rows, ``inputs_mask [B, S]`` and ``labels [B, C]`` (0/1).

    ??? cite
        Joulin, Grave, Bojanowski & Mikolov 2017, Bag of Tricks for Efficient Text Classification.
    """

    input: Float[Array, "rows dim"]
    output: Float[Array, "classes dim"]
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if p["loss"] not in ("softmax", "ova"):
            raise ValueError(f"loss must be 'softmax' or 'ova', got {p['loss']!r}")
        k_in, k_out = jax.random.split(key)
        dim, rows = p["dim"], p["vocab_size"] + hashed_rows(p)
        self.input = jax.random.uniform(k_in, (rows, dim), jnp.float32, -1.0 / dim, 1.0 / dim)
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
        """Mean over the lines with inputs and labels of the softmax loss averaged over the line's
        labels (the expectation of fastText's one drawn label), or of the one-vs-all losses summed."""
        mask, labels = batch["inputs_mask"], batch["labels"].astype(jnp.float32)
        logits = self.hidden(batch["inputs"], mask) @ self.output.T
        if self.spec["loss"] == "ova":
            per_line = -jnp.sum(labels * jax.nn.log_sigmoid(logits) + (1 - labels) * jax.nn.log_sigmoid(-logits), -1)
        else:
            nll = -jnp.sum(labels * jax.nn.log_softmax(logits, -1), -1)
            per_line = nll / jnp.maximum(labels.sum(-1), 1.0)
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
        """Split raw text as the training data was split (the spec's tokenizer and case)."""
        return get_tokenizer(self.spec["tokenizer"])(text.lower() if self.spec["lowercase"] else text)

    def featurizer(self) -> Featurizer:
        """The input rows of lines of tokens for this model (cached on the instance)."""
        cached = self.__dict__.get("_featurizer")
        if cached is None:
            p = self.spec.params
            words, bucket = self.vocabs["words"], hashed_rows(p)
            cached = Featurizer(words, bucket=bucket, word_ngrams=p["word_ngrams"], minn=p["minn"], maxn=p["maxn"])
            object.__setattr__(self, "_featurizer", cached)
        return cached

    def _rows(self, texts: Sequence[str | Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        return self.featurizer().rows([self.tokenize(t) if isinstance(t, str) else list(t) for t in texts])

    def _hidden(self, texts: Sequence[str | Sequence[str]]) -> np.ndarray:
        """Mean input row of each text ``[n, dim]`` (zeros for a text without inputs), in NumPy."""
        offsets, rows = self._rows(texts)
        return mean_rows(self._numpy()[0], offsets, rows)

    def _numpy(self) -> tuple[np.ndarray, np.ndarray]:
        """`input` and `output` as NumPy arrays, converted once per model (cached on the instance)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            cached = (np.asarray(self.input), np.asarray(self.output))
            object.__setattr__(self, "_arrays", cached)
        return cached

    # -- fastText's API --------------------------------------------------------------------

    def get_sentence_vector(self, text: str | Sequence[str]) -> np.ndarray:
        """fastText's sentence vector of a supervised model ``[dim]``: the mean of the text's input
        rows (words, n-grams and ``</s>``), which is what the classifier sees."""
        return self._hidden([text])[0]

    def predict_proba(self, texts: Sequence[str | Sequence[str]], *, batch_size: int = 4096) -> np.ndarray:
        """Label probabilities ``[n, num_classes]``, columns in ``vocabs["labels"]`` order: a softmax,
        or with ``loss = "ova"`` one independent sigmoid per label. A text is a string or its tokens."""
        out = np.zeros((len(texts), self.spec["num_classes"]), dtype=np.float32)
        output = self._numpy()[1]
        for start in range(0, len(texts), batch_size):
            logits = self._hidden(texts[start : start + batch_size]) @ output.T
            if self.spec["loss"] == "ova":
                probs = 1.0 / (1.0 + np.exp(-logits))
            else:
                probs = np.exp(logits - logits.max(-1, keepdims=True))
                probs /= probs.sum(-1, keepdims=True)
            out[start : start + len(logits)] = probs
        return out

    def predict(self, text: str | Sequence[str], k: int = 1, threshold: float = 0.0) -> Any:
        """fastText's ``predict``: the `k` most probable labels (``k = -1``: all) whose probability is
        at least `threshold`, most probable first, and their probabilities.

        One string gives ``(labels tuple, probabilities [m])``; a list of strings gives
        ``([labels tuple, ...], [probabilities, ...])``, one pair per text. (fastText reports
        ``p + 1e-5``, the floor of its log; these are the probabilities themselves.)
        """
        if isinstance(k, bool) or not isinstance(k, int) or (k < 1 and k != -1):
            raise ValueError(f"k must be a positive integer or -1 (all labels), got {k!r}")
        single = isinstance(text, str)
        probs = self.predict_proba([text] if single else list(text))
        names = self.vocabs["labels"].tokens
        limit = probs.shape[1] if k == -1 else min(k, probs.shape[1])
        labels, values = [], []
        for row in probs:
            order = np.argsort(-row, kind="stable")[:limit]
            order = order[row[order] >= threshold]
            labels.append(tuple(names[i] for i in order))
            values.append(row[order].astype(np.float64))
        return (labels[0], values[0]) if single else (labels, values)

    def classify(self, texts: Sequence[str | Sequence[str]]) -> list[str]:
        """The most probable label of each text."""
        if "labels" not in self.vocabs:
            raise DataError("this model was built without a 'labels' vocabulary; build it with vocab={'labels': ...}")
        names = self.vocabs["labels"].tokens
        return [names[int(i)] for i in np.argmax(self.predict_proba(texts), -1)]
