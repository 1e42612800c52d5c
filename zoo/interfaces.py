"""The abstract interfaces every algorithm implements.

All shapes are per example: there is no batch axis; batch with `jax.vmap`.
Masks are ``Bool[Array, "seq"]`` with True on real tokens. Keys are keyword-only
and optional: ``key=None`` means inference (no dropout, no sampling noise): the same
outputs every call; dropout is drawn only from a key passed in. A strategy that draws (a
sampler at temperature > 0) cannot infer without noise, so it refuses ``key=None`` with an
error asking for a key.
Every module is either abstract (these) or final (a plugin's class).

The conformance kit (`zoo.testing`, ``zoo check PLUGIN``) checks each contract stated
here; each interface's docstring names the checks that enforce its own. What every
component passes, whatever its kind (`zoo.testing.ComponentChecks`): loading the plugin,
importing its factory and building leave JAX's global configuration (`jax.config`:
``jax_enable_x64``, the default precision, every flag) as it was
(``test_jax_configuration_is_unchanged``, run first); it is reached through an entry
point of group ``zoo.plugins`` (``test_plugin_loaded_through_entry_point``); its factory
is a final subclass of its interface (``test_factory_is_a_final_subclass_of_its_interface``)
taking its registered hyperparameters and its wired arguments (``test_params_match_factory_signature``);
every numeric hyperparameter declares a domain that is enforced
(``test_hyperparameter_domains_are_declared_and_enforced``); its names in host models
round-trip (``test_names_round_trip``); its shapes follow from the spec alone, not from a
number held in its plugin's code (a module constant, an argument default the table does
not register), so a later release still loads the files saved now (``test_shapes_follow_the_spec``).
A decoder is checked inside the models that host it (see `Model`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray, PyTree

from zoo.naming.spec import ModelSpec

__all__ = [
    "KINDS",
    "Attention",
    "AttentionReporter",
    "Classifier",
    "LabelRanker",
    "Kind",
    "SubwordVectors",
    "Tagger",
    "Translator",
    "WordVectors",
    "ContextualEmbedder",
    "Decoder",
    "DecoderOutput",
    "DecoderStrategy",
    "Embedder",
    "Encoder",
    "EncoderOutput",
    "Hypotheses",
    "LanguageModel",
    "LinearInValues",
    "Memory",
    "Model",
    "RecurrentCell",
    "StepFn",
]


class EncoderOutput(NamedTuple):
    """What an encoder gives a decoder.

    - `states`: ``[src, output_size]``, zero at padded positions.
    - `final`: ``[final_size]``, a summary of the whole input (for a recurrent
      encoder: the last real state of the top layer, both directions concatenated).
    """

    states: Float[Array, "src out"]
    final: Float[Array, " final"]


class Memory(NamedTuple):
    """What attention reads: values, their precomputed keys, and the mask.

    - `values`: ``[src, value]``, the encoder states (``value = key_size``); only a
      `LinearInValues` attention may be handed values a decoder has projected, of another width.
    - `keys`: ``[src, proj]`` from `Attention.precompute`; `mask`: ``[src]``, True on real positions.
    """

    values: Float[Array, "src value"]
    keys: Float[Array, "src proj"]
    mask: Bool[Array, " src"]


class DecoderOutput(NamedTuple):
    """Teacher-forced decoder output: `logits` ``[tgt, vocab]`` and the attention
    weights ``[tgt, src]`` (None for a decoder without attention).

    Row t is a distribution over the real source positions. For an attention with per-head
    weights ``[heads, src]`` it is their mean over heads (still a distribution), which is what
    ``zoo translate --attention``, unknown-word replacement and the heatmaps show.
    """

    logits: Float[Array, "tgt vocab"]
    attention: Float[Array, "tgt src"] | None


class Hypotheses(NamedTuple):
    """Decoded sequences, best first.

    - `tokens`: ``[n_best, max_len]``, `pad` after the end-of-sequence token.
    - `scores`: ``[n_best]``, the strategy's ranking score (e.g. length-normalised log-prob).
    - `lengths`: ``[n_best]``, tokens up to and including end-of-sequence.
    """

    tokens: Int[Array, "n_best max_len"]
    scores: Float[Array, " n_best"]
    lengths: Int[Array, " n_best"]


StepFn = Callable[[Int[Array, ""], PyTree], tuple[Float[Array, " vocab"], PyTree]]
"""``step_fn(token, state) -> (logits[vocab], state)``: one decoding step."""


class Embedder(eqx.Module):
    """Maps token ids to vectors.

    Factories are called as ``factory(num_embeddings=V, *, key, **params)``
    when used as a component.

    Checked by `zoo.testing.EmbedderTests` (``key=None`` is inference: with the parameter its
    table gives the ``dropout`` role at 0.5, the outputs without a key equal those at 0,
    ``test_key_none_is_inference``): ``[seq, embedding_size]`` finite vectors
    (``test_shapes_and_dtype``); `vectors` is what a static embedder gives each id
    (``test_a_static_embedder_gives_its_vectors``); padding never changes the vectors of real
    tokens (``test_padding_does_not_change_real_positions``); jit and vmap change nothing
    (``test_jit_matches_eager``, ``test_vmap_equals_loop``); gradients reach every parameter
    (``test_gradients_reach_every_parameter``).
    Like every component it builds under `eqx.filter_eval_shape` (``test_init_traces_under_eval_shape``),
    draws every parameter but constants from `key` (``test_every_parameter_depends_on_the_key``), keeps
    float32 parameters and outputs unless it declares a `dtype` (``test_parameters_are_float32``,
    ``test_outputs_are_float32``) and gives the same outputs for the same inputs
    (``test_same_inputs_same_outputs``).
    """

    num_embeddings: eqx.AbstractVar[int]
    embedding_size: eqx.AbstractVar[int]

    @abc.abstractmethod
    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "seq dim"]:
        """Embed `ids` ``[seq]`` into ``[seq, embedding_size]``; rows at masked
        positions are unspecified but finite. Contextual embedders must not let
        padding change the vectors of real tokens."""

    @abc.abstractmethod
    def vectors(self) -> Float[Array, "vocab dim"]:
        """The static vector of every id, ``[num_embeddings, embedding_size]``: what
        the embedder gives each id without a key, unless it is a `ContextualEmbedder`
        (decoders build per-vocabulary tables from it)."""


class ContextualEmbedder(Embedder):
    """An embedder whose vectors depend on the whole sentence, built from layers.

    `layers` gives every layer's vectors (the context-independent token layer
    first); `__call__` mixes them with the model's default weights, and a task
    model can learn its own mix instead (ELMo's γ Σ_j s_j h_{k,j}). Stateless:
    the same sentence always gives the same vectors, and padding never changes
    the vectors of real tokens.
    """

    num_layers: eqx.AbstractVar[int]

    @abc.abstractmethod
    def layers(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        chars: Int[Array, "seq chars"] | None = None,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "layers seq dim"]:
        """Every layer's vectors ``[num_layers, seq, embedding_size]``.

        `chars` spell the tokens in `zoo.data.chars` ids; a model that reads
        characters uses them instead of looking `ids` up, so words outside its
        vocabulary get vectors of their own.
        """


class RecurrentCell(eqx.Module):
    """One step of a recurrence, split so the input projection leaves the loop.

    ``cell(x, state) == cell.recur(cell.project(x), state)``; a scan computes
    `project` for all positions as one matrix product, then runs only `recur`.
    Factories are called as ``factory(input_size=, hidden_size=, *, key, **params)``.

    Checked by `zoo.testing.CellTests`: the split (``test_step_equals_project_then_recur``);
    `scan` and `run` hold the state on padding in both directions and equal stepping the cell over
    the real positions, last to first with ``reverse=True`` (``test_state_is_held_on_padding``,
    ``test_reverse_with_padding_starts_at_the_last_real_position``); `run` equals `project` then
    `scan` (``test_run_equals_project_then_scan``); jit and vmap (``test_scan_jit_and_vmap``);
    gradients reach every parameter (``test_gradients_reach_every_parameter``).
    Like every component it builds under `eqx.filter_eval_shape` (``test_init_traces_under_eval_shape``),
    draws every parameter but constants from `key` (``test_every_parameter_depends_on_the_key``), keeps
    float32 parameters and outputs unless it declares a `dtype` (``test_parameters_are_float32``,
    ``test_outputs_are_float32``) and gives the same outputs for the same inputs
    (``test_same_inputs_same_outputs``).
    """

    input_size: eqx.AbstractVar[int]
    hidden_size: eqx.AbstractVar[int]

    @abc.abstractmethod
    def init_state(self) -> PyTree:
        """The zero state (a PyTree of arrays)."""

    @abc.abstractmethod
    def project(self, x: Float[Array, " input"]) -> Float[Array, " proj"]:
        """The input's contribution, ``[input_size] -> [proj]``."""

    @abc.abstractmethod
    def recur(self, projected: Float[Array, " proj"], state: PyTree) -> PyTree:
        """The next state from the projected input and the previous state."""

    @abc.abstractmethod
    def output(self, state: PyTree) -> Float[Array, " hidden"]:
        """The visible output ``[hidden_size]`` of a state."""

    def __call__(self, x: Float[Array, " input"], state: PyTree) -> PyTree:
        return self.recur(self.project(x), state)

    def scan(
        self, projected: Float[Array, "seq proj"], mask: Bool[Array, " seq"], state: PyTree, *, reverse: bool = False
    ) -> tuple[Float[Array, "seq hidden"], PyTree]:
        """`recur` over every position, holding the state where `mask` is False.

        With `reverse`, positions are read last to first and each keeps its own mask entry: on a
        right-padded sequence the scan holds the initial state over the pads, then reads the real
        positions backwards.

        **Returns:** ``(output of the state after each position [seq, hidden], final state)``.
        A cell may replace this with a fused implementation computing the same
        values (e.g. a hand-written backward pass); `run` calls it.
        """

        def body(carry, inputs):
            p, m = inputs
            carry = jax.tree.map(lambda new, old: jnp.where(m, new, old), self.recur(p, carry), carry)
            return carry, self.output(carry)

        final, outputs = jax.lax.scan(body, state, (projected, mask), reverse=reverse)
        return outputs, final

    def run(
        self, xs: Float[Array, "seq input"], mask: Bool[Array, " seq"], state: PyTree, *, reverse: bool = False
    ) -> tuple[Float[Array, "seq hidden"], PyTree]:
        """`project` every position, then `scan`: the same returns as `scan`, from raw inputs.

        A cell may replace this with one that fuses the projection into its scan;
        `zoo.nn.run_cell` calls it.
        """
        return self.scan(jax.vmap(self.project)(xs), mask, state, reverse=reverse)


class Encoder(eqx.Module):
    """Reads a padded sequence of vectors.

    Factories are called as ``factory(input_size=, cell=<cell factory or None>, *,
    key, **params)``. Padded positions never change the result at real positions.

    Checked by `zoo.testing.EncoderTests` (``key=None`` is inference: with the parameter its
    table gives the ``dropout`` role at 0.5, the outputs without a key equal those at 0,
    ``test_key_none_is_inference``): an `EncoderOutput` of the declared sizes
    (``test_is_an_encoder_with_declared_sizes``); zero states at padded positions
    (``test_padded_positions_are_zero``); padding never changes states or `final`
    (``test_padding_invariance``); vmap equals a loop (``test_vmap_equals_loop``); the same dropout
    key gives the same result (``test_dropout_key_is_deterministic``); gradients reach every
    parameter (``test_gradients_reach_every_parameter``).
    Like every component it builds under `eqx.filter_eval_shape` (``test_init_traces_under_eval_shape``),
    draws every parameter but constants from `key` (``test_every_parameter_depends_on_the_key``), keeps
    float32 parameters and outputs unless it declares a `dtype` (``test_parameters_are_float32``,
    ``test_outputs_are_float32``) and gives the same outputs for the same inputs
    (``test_same_inputs_same_outputs``).
    """

    input_size: eqx.AbstractVar[int]
    output_size: eqx.AbstractVar[int]
    final_size: eqx.AbstractVar[int]

    @abc.abstractmethod
    def __call__(
        self,
        x: Float[Array, "src input"],
        mask: Bool[Array, " src"],
        *,
        key: PRNGKeyArray | None = None,
    ) -> EncoderOutput:
        """Encode `x` ``[src, input_size]`` under `mask` ``[src]``."""


class Attention(eqx.Module):
    """Scores memory positions against a query and reads a context from them, as the
    literature defines the mechanism.

    ``attention(query [query_size], memory) -> (context, weights)``:

    - `context`: ``[context_size]``, what the decoder reads. `context_size` is `key_size` (the
      width of the encoder states the memory holds) unless the attention overrides the
      `context_size` property (an output projection to another width, say); the decoder sizes
      what reads the context from it.
    - `weights`: ``[src]``, or ``[heads, src]`` for an attention with several heads (one
      distribution per head, each mixing its own projection or slice of the values, as in
      Vaswani et al. 2017's multi-head attention).

    The scores read the query and the memory's keys; how the context comes from the values (per-head
    value slices, an output projection, ...) is the attention's own. An attention whose context is
    exactly ``weights @ memory.values``, for values of any width, may declare so by subclassing
    `LinearInValues`: a decoder may then hand it values it has already projected (a faster search),
    and the kit checks that property for it. Nothing else may rely on it.

    Factories are called as ``factory(query_size=, key_size=, *, key, **params)``.
    The weights (each head's) sum to 1 over real positions, are exactly 0 on masked ones, and are
    never NaN (mask with ``finfo.min``, softmax in float32); with every position masked they are all
    0 and the context is 0 (so nothing is added to the context but what the weights mix). Stateless:
    what `precompute` computes travels in the `Memory`, never on the module, so one attention serves
    many sources in any order. `reads_previous_state` says which decoder state the query is: True for
    Bahdanau (s_{t-1}, before the recurrent step), False for Luong (s_t, after it).

    Checked by `zoo.testing.AttentionTests` (built with query_size 6 and key_size 4, where it
    takes unequal sizes, the context is ``[context_size]``: ``test_context_width_is_context_size``):
    statelessness, interleaved sources equal fresh
    calls and no attribute but the fields (``test_is_stateless``); a context ``[context_size]`` and
    weights ``[src]`` or ``[heads, src]`` whose (mean over heads) is a distribution over real
    positions with exact zeros on masked ones (``test_weights_form_a_distribution_over_real_positions``);
    each head's weights a distribution of their own (``test_each_head_weights_form_a_distribution``,
    for ``[heads, src]`` weights); all masked, zero weights and context and finite gradients
    (``test_fully_masked_memory_gives_zero_weights_and_context``); for a `LinearInValues`, the
    context is ``weights @ values`` for values of any width
    (``test_context_is_the_weighted_sum_of_any_values``); padding never changes a result
    (``test_padding_invariance``); vmap and jit (``test_vmap_equals_loop_and_jit``); gradients reach
    every parameter (``test_gradients_reach_every_parameter``).
    Like every component it builds under `eqx.filter_eval_shape` (``test_init_traces_under_eval_shape``),
    draws every parameter but constants from `key` (``test_every_parameter_depends_on_the_key``), keeps
    float32 parameters and outputs unless it declares a `dtype` (``test_parameters_are_float32``,
    ``test_outputs_are_float32``) and gives the same outputs for the same inputs
    (``test_same_inputs_same_outputs``).
    """

    query_size: eqx.AbstractVar[int]
    key_size: eqx.AbstractVar[int]
    reads_previous_state: eqx.AbstractClassVar[bool]

    @property
    def context_size(self) -> int:
        """The width of the context `__call__` returns: `key_size`, unless an attention overrides
        this property."""
        return self.key_size

    @abc.abstractmethod
    def precompute(self, values: Float[Array, "src key"]) -> Float[Array, "src proj"]:
        """Query-independent projection of the memory, done once per source."""

    @abc.abstractmethod
    def __call__(
        self, query: Float[Array, " query"], memory: Memory
    ) -> tuple[Float[Array, " context"], Float[Array, " src"] | Float[Array, "heads src"]]:
        """Return `(context [context_size], weights [src] or [heads, src])` for one query."""


class LinearInValues(Attention):
    """The capability an attention declares (by subclassing this instead of `Attention`) when its
    context is exactly ``weights @ memory.values``, with ``[src]`` weights, for values of ANY width.

    The scores then read only the query and the keys, and the values enter only through that
    weighted sum, so a decoder may hand the attention values it has already projected: with Luong's
    attentional layer ``tanh(W_c [c_t; s_t])``, `RecurrentDecoder`'s search passes the encoder states
    through the context half of ``W_c`` once per source, not once per hypothesis and step. The
    context's width is then the width of the values handed in (`context_size`, `key_size`, for the
    encoder states themselves). Bahdanau's and Luong's dot, general and concat attentions declare
    it; an attention with per-head value projections or an output projection (multi-head
    attention) does not, and a decoder calls it on the real memory and projects its context itself.

    Checked by ``test_context_is_the_weighted_sum_of_any_values`` (values of another width give the
    same weights and the weighted sum of those values), on top of every `Attention` check.
    """


class Decoder(eqx.Module):
    """Generates tokens conditioned on an encoder's output."""

    vocab_size: eqx.AbstractVar[int]

    @abc.abstractmethod
    def memory(self, enc: EncoderOutput, mask: Bool[Array, " src"]) -> Memory:
        """Build the attention memory for one source (keys precomputed once)."""

    @abc.abstractmethod
    def init_state(self, enc: EncoderOutput) -> PyTree:
        """The decoder state before the first token."""

    @abc.abstractmethod
    def step(
        self,
        token: Int[Array, ""],
        state: PyTree,
        memory: Memory,
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, " vocab"], PyTree]:
        """Consume the previous token; return next-token logits and the new state."""

    def search_memory(self, enc: EncoderOutput, mask: Bool[Array, " src"]) -> Memory:
        """The memory `search_step`'s function reads (by default `memory`'s): a decoder may
        move per-token work into it, done once per source."""
        return self.memory(enc, mask)

    def search_step(self, lookups: int) -> Callable[[Int[Array, ""], PyTree, Memory], tuple[Array, PyTree]]:
        """`step` without dropout, as ``fn(token, state, memory)`` over `search_memory`'s
        memory, for a search feeding it tokens.

        `lookups` bounds the tokens the search will feed in all (sources x
        hypotheses x steps). A decoder may spend work here, once per search, that
        saves more than that across the lookups (a projection of every vocabulary
        entry, say); what it computes is shared by the whole batch. By default: `step`.
        """
        return lambda token, state, memory: self.step(token, state, memory)

    @abc.abstractmethod
    def __call__(
        self,
        tokens: Int[Array, " tgt"],
        enc: EncoderOutput,
        memory: Memory,
        *,
        key: PRNGKeyArray | None = None,
    ) -> DecoderOutput:
        """Teacher forcing: `tokens` ``[tgt]`` are the inputs (BOS first);
        row t of the logits predicts the token after ``tokens[t]``."""


class DecoderStrategy(eqx.Module):
    """Turns a step function into hypotheses; knows nothing of the decoder.

    Factories are called as ``factory(**params)``. The whole search runs under
    one `lax.while_loop` with fixed shapes, so it jits and vmaps over a batch.
    It returns `Hypotheses` best first: ``tokens [n, max_length]``, each row pad after
    its first eos, ``lengths`` counting the tokens up to and including that eos
    (`max_length` when none came), no eos before `min_length` tokens.

    Checked by `zoo.testing.StrategyTests` on step functions where eos comes at different
    steps for different hypotheses (each check asserts some hypothesis ended early), whole
    rows compared, pads included: shapes (``test_shapes``); pad after eos and lengths that
    match the tokens, empty slots all pad (``test_pad_after_eos_and_lengths``); scores
    sorted best first (``test_scores_sorted_best_first``); `min_length`
    (``test_min_length_is_respected``); the same rows for the same inputs and key
    (``test_same_inputs_same_outputs``); jit and vmap change nothing (``test_eager_matches_jit``,
    ``test_batch_size_invariance``); on a fair coin at every step, different keys draw different
    rows (``test_the_key_decides_the_draw``) and each step, and each hypothesis of one call, is
    an independent draw (``test_draws_at_different_steps_are_independent``); a strategy that
    draws nothing skips these two, unless its table declares a sampler's role. Roles are
    declared in the table (``roles = { top_p = "p" }``, `zoo.naming.tables.ROLES`), never
    guessed from names; a class whose role a strategy does not declare skips, saying so.
    A strategy declaring the ``beam_size`` role (`zoo.testing.WidthSearchTests`):
    width 1 with ``alpha = 0`` is greedy exactly, tokens, length and score, also where a
    second finishing candidate would beat greedy (``test_width_one_without_length_penalty_equals_greedy``);
    ``n_best`` rows sorted and distinct (``test_n_best_sorted_and_distinct``); a width-2
    search finds what greedy misses (``test_wider_search_finds_what_greedy_misses``); no stop
    while a longer hypothesis can still win under length normalisation
    (``test_length_penalty_stopping_case``); a width covering every prefix returns exactly
    the n best of exhaustive search, scores ``log P(y) / |y|^alpha``
    (``test_width_covering_every_prefix_is_exact``). A strategy declaring the ``temperature``
    role (`zoo.testing.SamplerTests`): temperature 0 and -> 0 are greedy exactly
    (``test_temperature_to_zero_equals_greedy``); draws follow the model's distribution
    (``test_draws_follow_the_distribution``) and ``top_k``/``top_p`` keep only the head
    (``test_truncation_keeps_only_the_head``).
    """

    max_length: eqx.AbstractVar[int]

    @property
    def width(self) -> int:
        """Hypotheses the search extends at each step, per source (1: greedy; k: beam)."""
        return 1

    @abc.abstractmethod
    def __call__(
        self,
        step_fn: StepFn,
        init_state: PyTree,
        *,
        bos: int,
        eos: int,
        pad: int,
        key: PRNGKeyArray | None = None,
    ) -> Hypotheses:
        """Decode from `init_state`, starting with `bos`."""


class Model(eqx.Module):
    """An architecture: a final module that owns its components and its spec.

    Built by ``factory(spec, *, key, vocabs)``; `vocabs` maps a vocabulary role
    (``"src"``, ``"tgt"``, ``"words"``) to a `zoo.data.Vocab` and may be empty.

    Checked by `zoo.testing.ModelTests` (every architecture, and each component in a model
    that hosts it): it builds a final `Model` (``test_builds_a_final_model``) without changing
    JAX's global configuration (``test_jax_configuration_is_unchanged``); it builds under
    `eqx.filter_eval_shape` with the leaves, shapes and dtypes of a real build, as `zoo.load`
    builds it, so no NumPy work on the key (``test_init_traces_under_eval_shape``); its spec
    round-trips through JSON and its canonical name (``test_spec_round_trips``); numeric
    hyperparameters declare enforced domains (``test_hyperparameter_domains_are_declared_and_enforced``);
    the same key gives the same parameters (``test_same_key_same_parameters``) and every
    parameter but a constant (zeros, ones) depends on the key (``test_every_parameter_depends_on_the_key``);
    parameters and loss are float32 unless it or a component declares a `dtype`
    (``test_parameters_and_loss_are_float32``); its shapes follow from the spec alone
    (``test_shapes_follow_the_spec``); the training loss is a finite scalar
    (``test_loss_is_a_finite_scalar``) whose gradients reach every parameter
    (``test_gradients_reach_every_parameter``); more padding leaves the loss unchanged
    (``test_padding_invariance``); it saves and loads exactly (``test_save_load_is_exact``),
    and a file that does not fit is refused (``test_wrong_shape_and_missing_tensor_are_rejected``).
    """

    spec: eqx.AbstractVar[ModelSpec]
    vocabs: eqx.AbstractVar[Mapping[str, Any]]

    @abc.abstractmethod
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """The training loss of a batch (a mapping of batched arrays), a scalar."""

    @abc.abstractmethod
    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        """A random, valid batch in this model's format, for tests and shape checks.

        The real content depends only on `key` and `batch_size`; `length` only
        sets the padded width (sequences are at most `length` - 2 real tokens
        long, at least 1), so the same key at a larger `length` is the same
        batch with more padding, and the loss must not change.
        """


class LanguageModel(Model):
    """Reads tokens left to right and predicts the next one at every position.

    Causal: the logits at position t depend only on ``ids[: t + 1]`` and the
    state passed in. So a long stream can be read in chunks, each starting from
    the state the previous one ended in (truncated backpropagation through
    time), and generation is `step` in a loop. A final subclass implements
    `init_state` and `__call__`; losses, batches and `step` are shared.

    Batches hold ``ids [B, T]``, ``targets [B, T]`` (the token after each
    position), ``mask [B, T]`` (True on real positions) and, optionally,
    ``reset [B]`` (True: that row starts from `init_state`, not from the carry).
    `level` says how text splits into tokens: ``"word"`` (whitespace) or ``"char"``.
    The vocabulary role is ``"tokens"``.

    Checked by `zoo.testing.CausalModelTests`, besides `Model`'s checks: causality, with and
    without dropout (``test_later_tokens_never_change_earlier_outputs``); carried state equals
    one pass (``test_carried_state_equals_one_pass``) and so does `step` in a loop
    (``test_step_by_step_equals_one_pass``); float32 logits unless it declares a `dtype`
    (``test_logits_are_float32``); pads hold the state (``test_padding_holds_the_state``);
    ``reset`` rows ignore the carry (``test_reset_rows_ignore_the_carry``); `carried_loss` and
    its gradients equal those of the logits (``test_loss_and_gradients_equal_the_logits``).
    """

    vocab_size: eqx.AbstractVar[int]
    level: eqx.AbstractVar[str]

    @abc.abstractmethod
    def init_state(self) -> PyTree:
        """The state before the first token (a PyTree of arrays, per example)."""

    @abc.abstractmethod
    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"],
        state: PyTree,
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq vocab"], PyTree]:
        """Next-token logits ``[seq, vocab_size]`` at every position, and the state
        after the last real one. Padded positions hold the state, so pads never
        change a result; their logits are finite but meaningless."""

    def step(self, token: Int[Array, ""], state: PyTree) -> tuple[Float[Array, " vocab"], PyTree]:
        """Consume one token: the logits of the next one ``[vocab_size]`` and the new state."""
        logits, state = self(token[None], jnp.ones(1, bool), state)
        return logits[0], state

    def initial_carry(self, batch_size: int) -> PyTree:
        """`init_state` for every row of a batch (leaves ``[batch_size, ...]``)."""
        return jax.tree.map(lambda a: jnp.broadcast_to(a, (batch_size, *a.shape)), self.init_state())

    def _over_batch(self, fn, batch: Mapping[str, Array], carry: PyTree, key: PRNGKeyArray | None):
        """``fn(ids, mask, state, key=...)`` on every row of `batch` (rows flagged in
        ``reset`` start from `init_state`): its stacked outputs and the carry."""
        ids, mask = batch["ids"], batch["mask"]
        if "reset" in batch:
            fresh = self.initial_carry(ids.shape[0])
            carry = jax.tree.map(
                lambda new, old: jnp.where(batch["reset"].reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
                fresh,
                carry,
            )
        if key is None:
            return jax.vmap(lambda i, m, s: fn(i, m, s))(ids, mask, carry)
        keys = jax.random.split(key, ids.shape[0])
        return jax.vmap(lambda i, m, s, k: fn(i, m, s, key=k))(ids, mask, carry, keys)

    def token_nll(
        self, batch: Mapping[str, Array], carry: PyTree, *, key: PRNGKeyArray | None = None
    ) -> tuple[Float[Array, "batch seq"], PyTree]:
        """Negative log-likelihood of every target ``[B, T]`` (0 on pads) and the carry after the batch."""
        logits, carry = self._over_batch(self, batch, carry, key)
        logits = logits.astype(jnp.float32)
        target_logit = jnp.take_along_axis(logits, batch["targets"][..., None], axis=-1)[..., 0]
        nll = jax.nn.logsumexp(logits, axis=-1) - target_logit
        return jnp.where(batch["mask"], nll, 0.0), carry

    def carried_loss(
        self, batch: Mapping[str, Array], carry: PyTree, *, key: PRNGKeyArray | None = None
    ) -> tuple[Float[Array, ""], PyTree]:
        """Mean NLL per real target starting from `carry`, and the carry for the next batch."""
        nll, carry = self.token_nll(batch, carry, key=key)
        return jnp.sum(nll) / jnp.maximum(jnp.sum(batch["mask"]), 1), carry

    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean NLL per real target, every row starting from `init_state`."""
        return self.carried_loss(batch, self.initial_carry(batch["ids"].shape[0]), key=key)[0]

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        longest = max(1, min(length - 2, 6))
        k_len, k_ids = jax.random.split(key)
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        tokens = jax.random.randint(k_ids, (batch_size, longest + 1), 0, self.vocab_size)
        mask = jnp.arange(longest) < lengths[:, None]
        ids = jnp.where(mask, tokens[:, :-1], 0)
        targets = jnp.where(mask, tokens[:, 1:], 0)
        pad = ((0, 0), (0, length - longest))
        return {
            "ids": jnp.pad(ids, pad).astype(jnp.int32),
            "targets": jnp.pad(targets, pad).astype(jnp.int32),
            "mask": jnp.pad(mask, pad),
        }


class Kind(NamedTuple):
    """A component kind: the interface its factory subclasses, and the arguments an architecture
    wires into that factory (besides the component's registered hyperparameters)."""

    interface: type
    wired: frozenset[str]


KINDS: Mapping[str, Kind] = MappingProxyType(
    {
        "attention": Kind(Attention, frozenset({"query_size", "key_size", "key"})),
        "cell": Kind(RecurrentCell, frozenset({"input_size", "hidden_size", "key"})),
        "decoder": Kind(Decoder, frozenset({"key"})),
        "embedder": Kind(Embedder, frozenset({"num_embeddings", "key"})),
        "encoder": Kind(Encoder, frozenset({"input_size", "cell", "key"})),
        "strategy": Kind(DecoderStrategy, frozenset()),
    }
)
"""Every component kind a table may declare (``kind = "attention"``); registering any other is
an error. An architecture is a `Model`, built as ``factory(spec, *, key, vocabs)``."""


# --- capabilities: what a model may offer besides its kind, checked with isinstance ----------


@runtime_checkable
class WordVectors(Protocol):
    """A model with one vector per word: ``vectors() -> [vocab, dim]``, rows in the order of
    ``vocabs["words"]``. `zoo.vectors.KeyedVectors.from_model` and ``zoo vectors`` read it."""

    vocabs: Mapping[str, Any]

    def vectors(self) -> Float[Array, "vocab dim"]: ...


@runtime_checkable
class SubwordVectors(WordVectors, Protocol):
    """Word vectors that also compose a vector for a word outside the vocabulary
    (FastText's character n-grams): ``oov_vector(word) -> [dim]``."""

    def oov_vector(self, word: str) -> Any: ...


@runtime_checkable
class Translator(Protocol):
    """A sequence-to-sequence model that maps text to text with its own vocabularies
    (``zoo translate``): one string in, one out; a list in, a list out; with ``with_scores``
    each output is a list of ``(text, score)``, best first. `decode_params` choose the
    strategy and its settings (``strategy="beam", beam_size=5``)."""

    def translate(self, sources: Any, *, with_scores: bool = False, **decode_params: Any) -> Any: ...


@runtime_checkable
class AttentionReporter(Protocol):
    """A model that shows where it looked: ``attention_weights(src [src], tokens [tgt]) ->
    [tgt, src]`` (row t: the weights behind ``tokens[t]``; None without attention).
    ``zoo translate --attention`` and ``zoo plot attention`` read it."""

    def attention_weights(self, src: Any, tokens: Any) -> Any: ...


@runtime_checkable
class Tagger(Protocol):
    """A model giving one label per token: ``tag(sentences) -> [[tag, ...], ...]`` for
    tokenised sentences (``zoo tag``)."""

    def tag(self, sentences: Any, *, batch_size: int = 64) -> list[list[str]]: ...


@runtime_checkable
class Classifier(Protocol):
    """A model giving one label per text: ``predict_proba(texts) -> [n, classes]``, columns in
    the order of ``vocabs["labels"]`` (``zoo classify``)."""

    def predict_proba(self, texts: Any, *, batch_size: int = 256) -> Any: ...


@runtime_checkable
class LabelRanker(Protocol):
    """A classifier that picks each text's labels itself: ``top_labels(texts, k=, threshold=) ->
    [(labels, probabilities), ...]``, the `k` best labels (-1: all) whose probability reaches
    `threshold`, best first (``zoo classify --k``). A classifier without it is ranked by its
    `Classifier.predict_proba`."""

    def top_labels(self, texts: Any, *, k: int = 1, threshold: float = 0.0) -> list[tuple[tuple[str, ...], Any]]: ...
