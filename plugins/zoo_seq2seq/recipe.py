"""``zoo train seq2seq+... --data FILE`` (or ``--task reversal|sorting|dates``) and
``zoo eval MODEL --data FILE`` (sacreBLEU's BLEU and chrF, exact match).

Training prints a data summary first (pairs read, kept and dropped and why,
vocabulary sizes, unknown-token rates), scores held-out pairs (``--valid FILE``,
or ``--valid-size`` pairs held out of the training data) every ``--eval-every``
steps, saves the best of those evaluations (``--keep-best-by``), stops after
``--patience`` evaluations without a better one, and stops on time with
``--minutes``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zoo.plugin_api import (
    DataError,
    InvalidParameterError,
    StopTraining,
    Vocab,
    add_alias,
    add_common_arguments,
    add_encoding_argument,
    add_valid_size_argument,
    argument_type,
    build,
    get_tokenizer,
    given,
    held_out_size,
    last_kept_line,
    resolve_spec,
)
from zoo_seq2seq.data import build_vocabs, pair_batches, read_pair_file, unknown_rate
from zoo_seq2seq.settings import METRICS
from zoo_seq2seq.tasks import TASKS, get_task

if TYPE_CHECKING:
    import optax

    from zoo_seq2seq.scoring import HeldOut

__all__ = ["Seq2SeqRecipe", "exact_match", "recipe"]

STEPS = 3000
"""Optimiser steps when neither ``--steps`` nor ``--epochs`` is given."""


def exact_match(model: Any, ids: np.ndarray, mask: np.ndarray, wanted: list[list[str]], **decode: Any) -> float:
    """Fraction of sources whose best decoded output equals the wanted tokens."""
    tgt_vocab = model.vocabs["tgt"]
    tokens = np.asarray(model.decode(ids, mask, **decode).tokens[:, 0])
    return float(np.mean([tgt_vocab.decode(row) == w for row, w in zip(tokens, wanted, strict=True)]))


@dataclass
class _Corpus:
    """The training pairs, the held-out ones, the vocabularies and the summary lines of a run."""

    src_vocab: Vocab
    tgt_vocab: Vocab
    sources: list[list[str]]
    targets: list[list[str]]
    valid: HeldOut | None
    summary: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=8)
def _optimizer(lr: float) -> optax.GradientTransformation:
    """Adam with gradients clipped at norm 5; one object per rate, so runs in one process
    share `zoo.train`'s compiled step."""
    import optax

    return optax.chain(optax.clip_by_global_norm(5.0), optax.adam(lr))


def _figures(metrics: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.4g}" for k, v in metrics.items())


def _percent(rate: float) -> str:
    return "n/a" if rate != rate else f"{rate:.2%}"


class Seq2SeqRecipe:
    """Train an encoder-decoder on a parallel corpus or a generated task; score it with sacreBLEU."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=STEPS, batch_size=64, lr=1e-3)  # a given --steps: `given`
        data = parser.add_mutually_exclusive_group(required=True)
        pairs = data.add_argument(
            "--data", dest="pairs", type=Path, metavar="FILE", help="src<TAB>tgt[<TAB>...] lines, plain or gzip"
        )
        add_alias(data, pairs, "--pairs")
        data.add_argument("--task", choices=sorted(TASKS), help="a generated task")
        parser.add_argument(
            "--task-size", type=argument_type("[1, inf)"), default=20000, help="pairs generated for --task"
        )
        parser.add_argument("--swap", action="store_true", help="read the second column as the source")
        add_encoding_argument(parser)
        parser.add_argument("--tokenizer", default=None, help="tokeniser name for --data (default: punct)")
        parser.add_argument(
            "--max-length", type=argument_type("[1, inf)"), default=50, help="drop pairs with a longer side (tokens)"
        )
        parser.add_argument("--joint-vocab", action="store_true", help="one vocabulary for source and target")
        parser.add_argument("--min-count", type=argument_type("[1, inf)"), default=1, help="rarer tokens become <unk>")
        parser.add_argument(
            "--max-vocab", type=argument_type("[1, inf)"), default=None, help="keep at most this many tokens per side"
        )
        parser.add_argument("--reverse-source", action="store_true", help="feed the source backwards (Sutskever)")
        parser.add_argument(
            "--valid", type=Path, help="held-out pairs, as --data (default: --valid-size of the training pairs)"
        )
        add_valid_size_argument(parser, what="pairs", at_most=500, source="the training data")
        parser.add_argument(
            "--epochs",
            type=argument_type("[1, inf)"),
            default=None,
            help="passes over the training pairs, instead of --steps (default: --steps decides)",
        )
        parser.add_argument(
            "--patience",
            type=argument_type("[0, inf)"),
            default=5,
            help="stop after this many evaluations without a better --keep-best-by score (0: never)",
        )
        parser.add_argument(
            "--keep-best-by",
            choices=METRICS,
            default="bleu",
            help="the held-out metric choosing the saved model (default bleu; valid_loss: the lowest)",
        )

    def _corpus(self, options: argparse.Namespace) -> _Corpus:
        summary, texts, fixed = [], None, None
        tokenizer = get_tokenizer(options.tokenizer or "punct")
        if options.task is not None:
            task = get_task(options.task)
            src, tgt = task.make(options.task_size, seed=options.seed)
            fixed = task.fixed_vocab() if task.fixed_vocab is not None else None
            summary.append(f"task {task.name}: {len(src):,} pairs generated")
        else:
            pairs = read_pair_file(
                options.pairs,
                swap=options.swap,
                max_length=options.max_length,
                tokenizer=tokenizer,
                encoding=options.encoding,
            )
            src, tgt, texts = pairs.sources, pairs.targets, pairs.texts
            summary.append(pairs.summary(options.max_length))
        from zoo_seq2seq.scoring import HeldOut  # JAX: once the data is read

        if options.valid is not None:
            held = read_pair_file(options.valid, swap=options.swap, tokenizer=tokenizer, encoding=options.encoding)
            summary.append(held.summary())
            valid = HeldOut(held.sources, held.targets, [t for _, t in held.texts])
            train_ids, where = list(range(len(src))), f"--valid {options.valid}"
        else:
            order = [int(i) for i in np.random.default_rng(options.seed).permutation(len(src))]
            n_valid = held_out_size(options.valid_size, len(src), "pairs")
            valid_ids, train_ids = order[:n_valid], order[n_valid:]
            references = [texts[i][1] for i in valid_ids] if texts is not None else None
            valid = HeldOut([src[i] for i in valid_ids], [tgt[i] for i in valid_ids], references) if n_valid else None
            how = getattr(options.valid_size, "rule", f"--valid-size {options.valid_size}")
            where = f"held out of the {len(src):,} pairs: {how}"
            where += "" if n_valid else "; the last step is kept"
        sources, targets = [src[i] for i in train_ids], [tgt[i] for i in train_ids]
        summary.append(f"{len(sources):,} training pairs, {len(valid) if valid else 0:,} validation pairs ({where})")
        if fixed is not None:
            src_vocab = tgt_vocab = fixed
        else:
            src_vocab, tgt_vocab = build_vocabs(
                sources, targets, joint=options.joint_vocab, min_count=options.min_count, max_size=options.max_vocab
            )
        if src_vocab is tgt_vocab:
            summary.append(f"vocabulary: one for both sides, {len(src_vocab):,} tokens (reserved ones included)")
        else:
            summary.append(
                f"vocabulary: source {len(src_vocab):,} tokens, target {len(tgt_vocab):,} (reserved ones included)"
            )
        rates = f"training source {_percent(unknown_rate(src_vocab, sources))}, "
        rates += f"target {_percent(unknown_rate(tgt_vocab, targets))}"
        if valid is not None:
            rates += f"; validation source {_percent(unknown_rate(src_vocab, valid.sources))}, "
            rates += f"target {_percent(unknown_rate(tgt_vocab, valid.targets))}"
        summary.append(f"unknown tokens: {rates}")
        return _Corpus(src_vocab, tgt_vocab, sources, targets, valid, summary)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        if options.reverse_source:
            overrides["reverse_source"] = True
        if options.tokenizer is not None:
            overrides["tokenizer"] = options.tokenizer
        resolve_spec(name, options, overrides)
        if given(options, "steps") and options.epochs is not None:
            raise InvalidParameterError("give --steps or --epochs, not both")
        corpus = self._corpus(options)
        for line in corpus.summary:
            print(f"data: {line}")
        if len(corpus.sources) < options.batch_size:
            raise DataError(f"{len(corpus.sources)} training pairs are too few for batches of {options.batch_size}")
        data = pair_batches(
            corpus.src_vocab,
            corpus.tgt_vocab,
            corpus.sources,
            corpus.targets,
            batch_size=options.batch_size,
            seed=options.seed,
        )
        per_epoch = data.batches_per_epoch()
        steps = options.steps
        if options.epochs is not None:
            steps = options.epochs * per_epoch
            print(f"{options.epochs} epochs of {per_epoch:,} batches: {steps:,} steps")
        targets = [*corpus.targets, *(corpus.valid.targets if corpus.valid is not None else [])]
        overrides.setdefault("strategy.max_length", max(len(t) for t in targets) + 1)
        import jax

        from zoo.plugin_api import save, train
        from zoo_seq2seq.scoring import Validation

        vocab = {"src": corpus.src_vocab, "tgt": corpus.tgt_vocab}
        model = build(name, key=jax.random.key(options.seed), vocab=vocab, **overrides)
        validation = None
        if corpus.valid is not None:
            validation = Validation(corpus.valid, select=options.keep_best_by, patience=options.patience or None)
            if options.resume and options.checkpoint is not None:
                validation.restore(Path(options.checkpoint))  # the best so far, as the uninterrupted run has it
        eval_every = options.eval_every or None
        try:
            result = train(
                model,
                data,
                steps=steps,
                key=jax.random.key(options.seed + 1),
                optimizer=_optimizer(options.lr),
                evaluate=validation,
                eval_every=eval_every,
                checkpoint=options.checkpoint,
                checkpoint_every=options.checkpoint_every,
                resume=options.resume,
                units="tgt_mask",
                progress=not options.quiet,
                description=name,
                time_limit=options.minutes * 60 if options.minutes is not None else None,
            )
        except StopTraining:
            result = None
        if validation is None:
            print(last_kept_line(result.step, steps, "step", on_time=result.stopped_on_time))
            return save(result.model, options.out)
        if result is not None:  # each evaluation's step: those before a resume, then the run's history
            at = validation.steps + [int(h["step"]) for h in result.history if "valid_loss" in h]
            on_time = f"the time budget ran out after step {result.step:,} of {steps:,}"
            print(on_time if result.stopped_on_time else f"trained all {steps:,} steps")
        else:  # stopped early, at an evaluation every eval_every steps (the loop showed its scores)
            every, since = eval_every or steps, validation.restored_step
            fresh = len(validation.history) - len(validation.steps)
            at = validation.steps + [min((since // every + k) * every, steps) for k in range(1, fresh + 1)]
            print(
                f"stopped after step {at[-1]}: no {options.keep_best_by} improvement for {options.patience} evaluations"
            )
        print(
            f"saving the best of {len(validation.history)} evaluations by {options.keep_best_by}: "
            f"step {at[validation.best_at - 1]} ({_figures(validation.history[validation.best_at - 1])})"
        )
        return save(validation.best, options.out)

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        data = parser.add_argument(
            "--data", type=Path, required=True, metavar="FILE", help="source<TAB>reference lines"
        )
        add_alias(parser, data, "--pairs")
        parser.add_argument("--swap", action="store_true", help="read the second column as the source")
        parser.add_argument("--beam", type=argument_type("[1, inf)"), metavar="K", help="beam search of width K")
        penalty = parser.add_argument(
            "--length-penalty",
            dest="alpha",
            type=argument_type("[0, inf)", float),
            metavar="A",
            help="beam: log-probabilities divided by length^A, 0: none (default 0.6, beam's alpha)",
        )
        add_alias(parser, penalty, "--alpha")
        parser.add_argument(
            "--max-length",
            type=argument_type("[1, 100000]"),
            help="most output tokens (default: the strategy.max_length it was trained with)",
        )
        parser.add_argument(
            "--batch-size", type=argument_type("[1, inf)"), default=64, help="sources decoded at once (default 64)"
        )
        parser.add_argument(
            "--case",
            choices=["auto", "mixed", "lc"],
            default="auto",
            help="BLEU and chrF case: lc ignores it (auto: lc when the tokeniser it was trained with lowercases)",
        )

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float | str]:
        if options.alpha is not None and options.beam is None:
            raise DataError("--length-penalty needs --beam K")
        decode: dict[str, Any] = {}
        if options.beam is not None:
            decode = {"strategy": "beam", "beam_size": options.beam}
            if options.alpha is not None:
                decode["alpha"] = options.alpha
        if options.max_length is not None or options.beam is not None:
            decode["max_length"] = options.max_length or model.strategy.max_length
        tokenizer = get_tokenizer(model.spec.params.get("tokenizer", "punct"))
        pairs = read_pair_file(
            options.data, swap=options.swap, tokenizer=tokenizer, encoding=options.encoding, strict=True
        )
        if pairs.read > len(pairs.sources):
            print(f"note: {pairs.summary()}", file=sys.stderr)
        from zoo_seq2seq.scoring import HeldOut

        lowercase = {"auto": None, "mixed": False, "lc": True}[options.case]
        references = [t for _, t in pairs.texts]
        held = HeldOut(pairs.sources, pairs.targets, references, batch_size=options.batch_size, lowercase=lowercase)
        scores = held.scores(model, **decode)
        return {
            "bleu": scores["bleu"],
            "chrf": scores["chrf"],
            "exact_match": scores["exact_match"],
            "pairs": float(len(held)),
            "bleu_signature": scores["bleu_signature"],
            "chrf_signature": scores["chrf_signature"],
        }


recipe = Seq2SeqRecipe()
