"""Word-level language models on Penn Treebank (Mikolov's split) against Zaremba et al. 2014.

Trains a zoo language model with truncated BPTT (state carried across
batches), scores validation perplexity after every epoch and test perplexity
at the end (one row, every token predicted from all before it), and prints
them beside the paper's figures with tokens/s and wall time. A time budget
(`--minutes`) stops training after the epoch that crosses it.

    python bench/lm_ptb.py --model lstm-lm-small                       # 13 epochs, target 114.5
    python bench/lm_ptb.py --model lstm-lm-medium --epochs 39 --decay-after 6 --lr-decay 0.8333 --minutes 60
    python bench/lm_ptb.py --model tcn-lm --optimizer adam --lr 0.002 --epochs 6
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from conditions import run_reporting_conditions

PAPER = {"lstm-lm-small": 114.5, "lstm-lm-medium": 82.7}


def default_data_dir() -> Path:
    return Path(os.environ.get("ZOO_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="lstm-lm-small", help="a zoo language model name")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a hyperparameter override")
    p.add_argument("--data-dir", type=Path, default=default_data_dir())
    p.add_argument("--epochs", type=int, default=13)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--unroll", type=int, default=35)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--lr-decay", type=float, default=0.5, help="factor per epoch after --decay-after")
    p.add_argument("--decay-after", type=int, default=4)
    p.add_argument("--clip", type=float, default=5.0)
    p.add_argument("--minutes", type=float, default=None, help="stop after the epoch that crosses this budget")
    p.add_argument("--train-tokens", type=int, default=None, help="use only the first N training tokens (smoke runs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--save", type=Path, help="save the trained model here")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args()


def make_optimizer(args: argparse.Namespace, per_epoch: int):
    import jax.numpy as jnp
    import optax

    from zoo_lm.recipe import zaremba_sgd

    if args.optimizer == "adam":

        def schedule(step):
            epoch = step // per_epoch
            return args.lr * args.lr_decay ** jnp.maximum(0, epoch + 1 - args.decay_after).astype(jnp.float32)

        return optax.chain(optax.clip_by_global_norm(args.clip), optax.adam(schedule))
    return zaremba_sgd(
        args.lr,
        steps_per_epoch=per_epoch,
        unroll=args.unroll,
        decay=args.lr_decay,
        decay_after=args.decay_after,
        clip=args.clip,
    )


def main() -> int:
    args = parse_args()
    import jax

    import zoo
    from zoo.cli.common import parse_overrides
    from zoo_lm.perplexity import perplexity
    from zoo_lm.recipe import build_vocab, train_language_model
    from zoo_lm.stream import StreamBatches, read_tokens

    lm = args.data_dir / "lm"
    splits = {name: read_tokens(lm / f"ptb.{name}.txt", "word") for name in ("train", "valid", "test")}
    vocab = build_vocab(splits["train"], "word")
    ids = {name: vocab.encode(tokens) for name, tokens in splits.items()}
    ids["train"] = ids["train"][: args.train_tokens]
    model = zoo.build(args.model, key=jax.random.key(args.seed), vocab={"tokens": vocab}, **parse_overrides(args.set))
    per_epoch = StreamBatches(ids["train"], batch_size=args.batch_size, unroll=args.unroll).batches_per_epoch()
    params = sum(x.size for x in jax.tree.leaves(zoo_arrays(model)))
    print(f"{model.spec.name}: {params / 1e6:.2f}M parameters, vocabulary {len(vocab)}, {per_epoch} steps per epoch")
    history, started, train_seconds, trained_tokens = [], time.perf_counter(), 0.0, 0
    with tempfile.TemporaryDirectory() as folder:
        checkpoint = Path(folder) / "state.safetensors"
        for epoch in range(1, args.epochs + 1):
            epoch_start = time.perf_counter()
            result = train_language_model(
                model,
                ids["train"],
                key=jax.random.key(args.seed + 1),
                batch_size=args.batch_size,
                unroll=args.unroll,
                steps=epoch * per_epoch,
                optimizer=lambda n: make_optimizer(args, n),
                checkpoint=checkpoint,
                checkpoint_every=per_epoch,
                resume=True,
                progress=not args.quiet,
                description=f"epoch {epoch}",
                log_every=100,
            )
            train_seconds += time.perf_counter() - epoch_start
            trained_tokens += per_epoch * args.batch_size * args.unroll
            valid = perplexity(result.model, ids["valid"])["perplexity"]
            rates = [r["units_per_s"] for r in result.history if "units_per_s" in r][1:]
            rate = sum(rates) / len(rates) if rates else float("nan")
            history.append({"epoch": epoch, "train_loss": result.history[-1]["loss"], "valid": valid, "tok_s": rate})
            elapsed = (time.perf_counter() - started) / 60
            print(f"epoch {epoch}: valid perplexity {valid:.1f}, {rate:,.0f} tokens/s, {elapsed:.1f} min", flush=True)
            model = result.model
            if args.minutes is not None and elapsed >= args.minutes:
                print(f"time budget of {args.minutes:g} min reached after epoch {epoch}")
                break
    test = perplexity(model, ids["test"])
    wall = time.perf_counter() - started
    summary = {
        "model": model.spec.name,
        "overrides": args.set,
        "epochs": len(history),
        "valid_perplexity": history[-1]["valid"],
        "test_perplexity": test["perplexity"],
        "paper_test_perplexity": PAPER.get(args.model),
        "train_tokens_per_s": trained_tokens / train_seconds,
        "wall_minutes": wall / 60,
        "history": history,
        "command": " ".join(sys.argv),
    }
    print(f"\n{'model':24s} {'epochs':>6s} {'valid':>8s} {'test':>8s} {'paper':>8s} {'tokens/s':>9s} {'wall':>8s}")
    paper = f"{summary['paper_test_perplexity']:.1f}" if summary["paper_test_perplexity"] else "-"
    print(
        f"{summary['model']:24s} {summary['epochs']:6d} {summary['valid_perplexity']:8.1f} "
        f"{summary['test_perplexity']:8.1f} {paper:>8s} {summary['train_tokens_per_s']:9,.0f} {wall / 60:7.1f}m"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    if args.save:
        zoo.save(model, args.save)
    return 0


def zoo_arrays(model):
    import equinox as eqx

    return eqx.filter(model, eqx.is_inexact_array)


if __name__ == "__main__":
    run_reporting_conditions(main)
