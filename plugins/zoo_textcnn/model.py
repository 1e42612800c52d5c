"""TextCNN (Kim 2014): word vectors, convolutions of several widths, max-over-time, softmax."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import DataError, Embedder, Encoder, Model, ModelSpec, Vocabularies, frozen, pad_sequences
from zoo.plugin_api import dropout as apply_dropout
from zoo_textcnn.data import LEGACY_TOKENIZER, tokenize

__all__ = ["TextCNN"]


def _keys(key: PRNGKeyArray | None, n: int) -> list[PRNGKeyArray | None]:
    return [None] * n if key is None else list(jax.random.split(key, n))


class TextCNN(Model):
    """Classify a sentence from the max-pooled responses of convolutional filters.

    ``z = maxpool(conv(E[w_1..w_n]))``, ``p(y | s) = softmax(W dropout(z) + b)``.
    Slots: ``embedder`` (word vectors; random for CNN-rand, or initialised from
    pretrained vectors with `zoo_textcnn.pretrained.initialise_embeddings`) and
    ``encoder`` (``cnn``: widths 3, 4, 5 with 100 maps each and ReLU; any encoder's
    `final` summary works, e.g. ``textcnn+recurrent`` is a recurrent classifier).
    Hyperparameters: ``vocab_size``, ``num_classes``, ``dropout`` (on the pooled
    features, 0.5), ``freeze_embeddings`` (CNN-static: the word vectors get no
    gradient), ``max_norm`` (the l2 bound on each class's weight vector, applied
    by the optimiser: see `zoo_textcnn.optim.max_norm`), ``lowercase`` and
    ``tokenizer`` (how `tokenize` splits raw text for `classify`: Kim's ``"kim"``, ``"words-marks"``
    or any tokeniser zoo knows), ``output_init`` (``"uniform"``, or ``"zeros"`` as in Kim's
    code), ``pad_id``.

    Batches for `loss` hold ``words [B, S]``, ``words_mask [B, S]`` and ``labels [B]``.

    ??? cite
        Kim 2014, Convolutional Neural Networks for Sentence Classification.
    """

    embedder: Embedder
    encoder: Encoder
    output: eqx.nn.Linear
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        k_emb, k_enc, k_out = jax.random.split(key, 3)
        self.embedder = spec.slot("embedder").build(num_embeddings=p["vocab_size"], key=k_emb)
        cell = spec.slot("cell").partial()
        self.encoder = spec.slot("encoder").build(input_size=self.embedder.embedding_size, cell=cell, key=k_enc)
        output = eqx.nn.Linear(self.encoder.final_size, p["num_classes"], key=k_out)
        if p.get("output_init", "uniform") == "zeros":  # Kim's logistic regression starts at zero
            output = eqx.tree_at(lambda o: (o.weight, o.bias), output, (output.weight * 0, output.bias * 0))
        elif p.get("output_init", "uniform") != "uniform":
            raise ValueError(f"output_init must be 'uniform' or 'zeros', got {p['output_init']!r}")
        self.output = output
        self.spec, self.vocabs = spec, vocabs

    @jax.named_scope("textcnn")
    def __call__(
        self, words: Int[Array, " seq"], mask: Bool[Array, " seq"], *, key: PRNGKeyArray | None = None
    ) -> Float[Array, " classes"]:
        """Class logits ``[num_classes]`` of one padded sentence ``[seq]``."""
        k_emb, k_enc, k_drop = _keys(key, 3)
        embedder = frozen(self.embedder) if self.spec["freeze_embeddings"] else self.embedder
        features = self.encoder(embedder(words, mask, key=k_emb), mask, key=k_enc).final
        return self.output(apply_dropout(features, self.spec["dropout"], k_drop))

    def logits(self, words: Int[Array, "batch seq"], mask: Bool[Array, "batch seq"]) -> Float[Array, "batch classes"]:
        """Inference logits of a batch (no dropout)."""
        return jax.vmap(lambda w, m: self(w, m))(words, mask)

    @jax.named_scope("textcnn.loss")
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean cross-entropy over the real rows of the batch (all-pad filler rows weigh 0)."""
        words, mask, labels = batch["words"], batch["words_mask"], batch["labels"]
        if key is None:
            logits = self.logits(words, mask)
        else:
            keys = jax.random.split(key, words.shape[0])
            logits = jax.vmap(lambda w, m, k: self(w, m, key=k))(words, mask, keys)
        logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        nll = -jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
        real = jnp.any(mask, axis=-1).astype(jnp.float32)
        return jnp.sum(nll * real) / jnp.maximum(jnp.sum(real), 1.0)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_len, k_tok, k_lab = jax.random.split(key, 3)
        longest = max(1, min(length - 2, 6))
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        tokens = jax.random.randint(k_tok, (batch_size, longest), 2, max(3, p["vocab_size"]))
        mask = jnp.arange(longest)[None, :] < lengths[:, None]
        tokens = jnp.where(mask, tokens, p["pad_id"])
        pad = length - longest
        return {
            "words": jnp.pad(tokens, ((0, 0), (0, pad)), constant_values=p["pad_id"]).astype(jnp.int32),
            "words_mask": jnp.pad(mask, ((0, 0), (0, pad))),
            "labels": jax.random.randint(k_lab, (batch_size,), 0, p["num_classes"]).astype(jnp.int32),
        }

    # -- text in, labels out ----------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        """Split raw text the way this model's training data was split."""
        return tokenize(
            text, lowercase=self.spec["lowercase"], tokenizer=self.spec.params.get("tokenizer", LEGACY_TOKENIZER)
        )

    def predict_proba(self, texts: Sequence[str | Sequence[str]], *, batch_size: int = 256) -> np.ndarray:
        """Class probabilities ``[n, num_classes]``; a text is a string (tokenised by
        `tokenize`) or a list of tokens.

        Texts are padded to a few fixed widths (powers of two) and run in chunks
        of `batch_size`, so a long list compiles a handful of times, not once per text.
        """
        vocab = self.vocabs["words"]
        encoded = [vocab.encode(self.tokenize(t) if isinstance(t, str) else t) for t in texts]
        out = np.zeros((len(encoded), self.spec["num_classes"]), dtype=np.float32)
        for start in range(0, len(encoded), batch_size):
            chunk = encoded[start : start + batch_size]
            longest = max(1, *(len(e) for e in chunk))
            width = 1 << (longest - 1).bit_length()
            ids, mask = pad_sequences(
                chunk + [[]] * (batch_size - len(chunk)), pad_id=self.spec["pad_id"], length=width
            )
            probs = jax.nn.softmax(_logits(self, jnp.asarray(ids), jnp.asarray(mask)), axis=-1)
            out[start : start + len(chunk)] = np.asarray(probs)[: len(chunk)]
        return out

    def classify(self, texts: Sequence[str | Sequence[str]]) -> list[str]:
        """The most probable label of each text (a string or a list of tokens)."""
        if "labels" not in self.vocabs:
            raise DataError("this TextCNN was built without a 'labels' vocabulary; build it with vocab={'labels': ...}")
        labels = self.vocabs["labels"]
        return [labels.tokens[int(i)] for i in np.argmax(self.predict_proba(texts), axis=-1)]


@eqx.filter_jit
def _logits(model: TextCNN, ids: Array, mask: Array) -> Array:
    return model.logits(ids, mask)
