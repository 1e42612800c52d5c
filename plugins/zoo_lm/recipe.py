"""Training and scoring any `LanguageModel`: the recipe behind ``zoo train`` and ``zoo eval``.

Training reads one long token stream in truncated-BPTT batches (`StreamBatches`)
and carries every row's state from batch to batch through `zoo.train`; the
default optimiser is Zaremba et al.'s: plain SGD on the loss summed over the
unrolled steps, the gradient norm clipped, the learning rate decayed every
epoch after the first few. Scoring is `zoo_lm.perplexity` on a text file.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zoo.plugin_api import (
    Vocab,
    add_common_arguments,
    add_encoding_argument,
    add_hyperparameter_argument,
    argument_type,
    held_out_line,
    last_kept_line,
    resolve_spec,
)
from zoo_lm.stream import StreamBatches, read_tokens

if TYPE_CHECKING:
    import jax
    import optax

    from zoo.plugin_api import LanguageModel, TrainResult

__all__ = ["LanguageModelRecipe", "build_vocab", "recipe", "train_language_model", "zaremba_sgd"]


def zaremba_sgd(
    lr: float,
    *,
    steps_per_epoch: int,
    unroll: int,
    decay: float = 0.5,
    decay_after: int = 4,
    clip: float = 5.0,
) -> optax.GradientTransformation:
    """SGD as Zaremba et al. train their LSTMs.

    The gradient is that of the NLL summed over the `unroll` steps and averaged
    over rows (`unroll` times the per-token mean `zoo` minimises), its global
    norm clipped to `clip`; the learning rate is `lr` for the first
    `decay_after` epochs, then multiplied by `decay` at every epoch.
    """
    import jax.numpy as jnp
    import optax

    def schedule(step: jax.Array) -> jax.Array:
        epoch = step // steps_per_epoch
        return lr * decay ** jnp.maximum(0, epoch + 1 - decay_after).astype(jnp.float32)

    return optax.chain(optax.scale(float(unroll)), optax.clip_by_global_norm(clip), optax.sgd(schedule))


def build_vocab(tokens: Sequence[str], level: str, *, min_count: int = 1, max_size: int | None = None) -> Vocab:
    """A vocabulary for a token stream: words get pad, unk, bos, eos; characters pad and unk."""
    specials = ("pad", "unk", "bos", "eos") if level == "word" else ("pad", "unk")
    return Vocab.build([tokens], min_count=min_count, max_size=max_size, specials=specials)


def train_language_model(
    model: LanguageModel,
    train_ids: Sequence[int] | np.ndarray,
    *,
    key: jax.Array,
    batch_size: int = 20,
    unroll: int = 35,
    epochs: float = 1.0,
    steps: int | None = None,
    optimizer: optax.GradientTransformation | Callable[[int], optax.GradientTransformation] | None = None,
    valid_ids: Sequence[int] | np.ndarray | None = None,
    eval_every: int | None = None,
    **train_options: Any,
) -> TrainResult:
    """Train `model` on one id stream with carried state (truncated BPTT).

    **Arguments:**

    - `train_ids`: the training stream ``[N]``; `batch_size` rows; `unroll` steps per batch.
    - `epochs` (or `steps`, which wins): how long.
    - `optimizer`: an optax transformation, or a function of the steps per epoch
      returning one (for epoch-based schedules); default `zaremba_sgd` with lr 1.
    - `valid_ids`: scored every `eval_every` steps (default: every epoch) and at the end.
    - `train_options`: passed to `zoo.train` (checkpoint, resume, progress, log_every, ...).

    **Returns:** `zoo.train`'s `TrainResult`; its history holds ``valid_perplexity``.
    """
    import optax

    from zoo.plugin_api import train
    from zoo_lm.perplexity import perplexity

    data = StreamBatches(train_ids, batch_size=batch_size, unroll=unroll)
    per_epoch = data.batches_per_epoch()
    total = steps if steps else max(1, math.ceil(epochs * per_epoch))
    if optimizer is None:
        optimizer = zaremba_sgd(1.0, steps_per_epoch=per_epoch, unroll=unroll)
    elif not isinstance(optimizer, optax.GradientTransformation):
        optimizer = optimizer(per_epoch)
    evaluate = None
    if valid_ids is not None:

        def evaluate(m: LanguageModel) -> dict[str, float]:
            return {"valid_perplexity": perplexity(m, valid_ids)["perplexity"]}

    return train(
        model,
        data,
        steps=total,
        key=key,
        optimizer=optimizer,
        carry=model.initial_carry(batch_size),
        evaluate=evaluate,
        eval_every=eval_every or per_epoch,
        units="mask",
        **train_options,
    )


class LanguageModelRecipe:
    """``zoo train <language model> --data FILE`` and ``zoo eval MODEL --data FILE``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=0, batch_size=20, lr=1.0)
        parser._option_string_actions["--eval-every"].help = "score --valid every N steps (0: every epoch)"
        parser.add_argument("--data", type=Path, required=True, help="training text, plain or .gz")
        parser.add_argument("--valid", type=Path, help="held-out text scored every --eval-every steps")
        add_encoding_argument(parser)
        add_hyperparameter_argument(
            parser, "--level", "level", choices=["word", "char"], help="split text into words or characters"
        )
        parser.add_argument(
            "--epochs",
            type=argument_type("(0, inf)", float),
            default=13.0,
            help="passes over the data (if --steps is 0)",
        )
        parser.add_argument(
            "--unroll", type=argument_type("[1, inf)"), default=35, help="backpropagation window in tokens"
        )
        parser.add_argument(
            "--optimizer",
            choices=["sgd", "adam"],
            default="sgd",
            help="sgd: Zaremba et al.'s schedule (lr 1, decayed); adam: give --lr, e.g. 0.002",
        )
        parser.add_argument(
            "--lr-decay",
            type=argument_type("(0, 1]", float),
            default=0.5,
            help="SGD: lr factor per epoch after --decay-after (1: none)",
        )
        parser.add_argument(
            "--decay-after", type=argument_type("[0, inf)"), default=4, help="SGD: epochs at the full learning rate"
        )
        parser.add_argument("--clip", type=argument_type("(0, inf)", float), default=5.0, help="gradient norm clipping")
        parser.add_argument("--min-count", type=argument_type("[1, inf)"), default=1, help="rarer tokens become <unk>")
        parser.add_argument(
            "--max-vocab", type=argument_type("[1, inf)"), default=None, help="keep at most this many tokens"
        )
        parser.add_argument(
            "--shard-tables",
            action="store_true",
            help="split the embedding table and the softmax's output layer by rows over every device "
            "(of every process) instead of copying them to each; --batch-size a multiple of the devices",
        )

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        import zoo

        level = resolve_spec(name, options, overrides).params["level"]
        tokens = read_tokens(options.data, level, encoding=options.encoding)
        import jax
        import optax

        vocab = build_vocab(tokens, level, min_count=options.min_count, max_size=options.max_vocab)
        model = zoo.build(name, key=jax.random.key(options.seed), vocab={"tokens": vocab}, **overrides)
        valid = vocab.encode(read_tokens(options.valid, level, encoding=options.encoding)) if options.valid else None
        if valid is None:
            print(held_out_line(0, "tokens", "--valid FILE scores held-out text as training goes"))
        else:
            print(held_out_line(len(valid), "tokens", f"--valid {options.valid}: scored by perplexity"))

        def optimizer(per_epoch: int) -> optax.GradientTransformation:
            if options.optimizer == "adam":
                return optax.chain(optax.clip_by_global_norm(options.clip), optax.adam(options.lr))
            return zaremba_sgd(
                options.lr,
                steps_per_epoch=per_epoch,
                unroll=options.unroll,
                decay=options.lr_decay,
                decay_after=options.decay_after,
                clip=options.clip,
            )

        result = train_language_model(
            model,
            vocab.encode(tokens),
            key=jax.random.key(options.seed + 1),
            batch_size=options.batch_size,
            unroll=options.unroll,
            epochs=options.epochs,
            steps=options.steps or None,
            optimizer=optimizer,
            valid_ids=valid,
            eval_every=options.eval_every or None,
            checkpoint=options.checkpoint,
            checkpoint_every=options.checkpoint_every,
            resume=options.resume,
            progress=not options.quiet,
            description=name,
            shard_tables=options.shard_tables,
        )
        scored = [h for h in result.history if "valid_perplexity" in h]
        scores = f"valid_perplexity {scored[-1]['valid_perplexity']:.2f}" if scored else ""
        print(last_kept_line(result.step, None, "step", on_time=result.stopped_on_time, scores=scores))
        return zoo.save(result.model, options.out)

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--batch-size", type=argument_type("[1, inf)"), default=1, help="rows read side by side (1: exact)"
        )
        parser.add_argument("--unroll", type=argument_type("[1, inf)"), default=256, help="chunk length (speed only)")

    def evaluate(self, model: LanguageModel, options: argparse.Namespace) -> Mapping[str, float]:
        from zoo_lm.perplexity import perplexity

        vocab = model.vocabs["tokens"]
        ids = vocab.encode(read_tokens(options.data, model.level, encoding=options.encoding))
        scores = perplexity(model, ids, batch_size=options.batch_size, unroll=options.unroll)
        scores["unknown"] = float(np.mean(ids == vocab.unk_id))
        return scores


recipe = LanguageModelRecipe()
