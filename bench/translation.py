"""Spanish -> English translation on Tatoeba: train a seq2seq model, report BLEU.

    python bench/translation.py --model seq2seq+luong-general --minutes 45
    python bench/translation.py --model seq2seq+luong-general seq2seq+multihead --steps 1000

With several models, each is trained in turn with the same settings, data order and
step count (``--steps``, or the count ``--minutes`` gives the first), then their BLEUs
are printed side by side.

Reads ``seq2seq/spa-eng.tsv.gz`` (``en<TAB>es<TAB>attribution``) from the shared
data folder, drops duplicate pairs, and holds out 2,000 test pairs whose
Spanish sentence never occurs in training (all its English translations go to
the test side together). Trains for a wall-clock budget (the step count is
fixed from the measured speed before training, so the learning-rate schedule
ends on time), then reports sacreBLEU (13a tokenisation, lowercased: the model
is lowercased) of greedy and beam search against the raw English references:
one reference per pair, and all references per distinct source. Needs the
``sacrebleu`` package.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import jax
import numpy as np
import optax
from conditions import run_reporting_conditions

from zoo.building.builder import build
from zoo.building.weights import save
from zoo.data.paths import require_shared_data
from zoo.data.text import tokenize
from zoo.training.trainer import train
from zoo_seq2seq.data import build_vocabs, pair_batches
from zoo_seq2seq.translate import translate_texts


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: ZOO_DATA_DIR)")
    p.add_argument(
        "--model",
        nargs="+",
        default=["seq2seq+luong-general"],
        help="one or more model names, trained in turn with the same settings and step count",
    )
    p.add_argument("--minutes", type=float, default=45.0, help="training budget (wall clock)")
    p.add_argument("--steps", type=int, default=0, help="train exactly this many steps instead")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--embedding-size", type=int, default=256)
    p.add_argument("--hidden-size", type=int, default=384)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--max-length", type=int, default=25, help="drop training pairs with a longer side")
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--test-size", type=int, default=2000)
    p.add_argument("--beam-size", type=int, default=5)
    p.add_argument("--length-penalty", dest="alpha", type=float, default=0.6, help="beam's length penalty (alpha)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--dev-evals",
        type=int,
        default=6,
        help="greedy BLEU on 300 test pairs this often in training (0: never)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("translation-spa-eng.safetensors"),
        help="the trained model (with several models: one file each, the model's name before the suffix)",
    )
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    return p.parse_args()


def load_split(path: Path, test_size: int, seed: int):
    """Unique (es, en) pairs split so that no test source occurs in training."""
    import gzip

    pairs = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            columns = line.rstrip("\n").split("\t")
            if len(columns) >= 2 and columns[0].strip() and columns[1].strip():
                pairs.setdefault((columns[1].strip(), columns[0].strip()), None)
    by_source = defaultdict(list)
    for es, en in pairs:
        by_source[" ".join(tokenize(es))].append((es, en))
    sources = sorted(by_source)
    np.random.default_rng(seed).shuffle(sources)
    test, train, taken = [], [], 0
    for key in sources:
        if taken < test_size:
            test.extend(by_source[key][: test_size - taken])
            taken = len(test)
        else:
            train.extend(by_source[key])
    return train, test, by_source


def bleu(model, sources, references, **decode):
    import sacrebleu

    started = time.perf_counter()
    outputs = [options[0].text if options else "" for options in translate_texts(model, sources, **decode)]
    seconds = time.perf_counter() - started
    return sacrebleu.corpus_bleu(outputs, [references], lowercase=True).score, outputs, seconds


def main() -> None:
    args = parse_args()
    if args.data_dir is not None:
        import os

        os.environ["ZOO_DATA_DIR"] = str(args.data_dir)
    train_pairs, test, by_source = load_split(
        require_shared_data("seq2seq", "spa-eng.tsv.gz"), args.test_size, args.seed
    )
    src = [tokenize(es) for es, _ in train_pairs]
    tgt = [tokenize(en) for _, en in train_pairs]
    keep = [i for i in range(len(src)) if max(len(src[i]), len(tgt[i])) <= args.max_length]
    src, tgt = [src[i] for i in keep], [tgt[i] for i in keep]
    src_vocab, tgt_vocab = build_vocabs(src, tgt, min_count=args.min_count)
    print(f"{len(src):,} training pairs, {len(test):,} test pairs; vocab es {len(src_vocab):,} en {len(tgt_vocab):,}")
    data = pair_batches(src_vocab, tgt_vocab, src, tgt, batch_size=args.batch_size, seed=args.seed)
    overrides = {
        "embedding_size": args.embedding_size,
        "hidden_size": args.hidden_size,
        "decoder.dropout": args.dropout,
        "label_smoothing": args.label_smoothing,
        "strategy.max_length": args.max_length + 10,
    }
    reports, steps = [], args.steps
    for name in args.model:
        model = build(name, key=jax.random.key(args.seed), vocab={"src": src_vocab, "tgt": tgt_vocab}, **overrides)
        steps = steps or estimate_steps(model, data, args)
        out = args.out if len(args.model) == 1 else args.out.with_stem(f"{args.out.stem}-{name.replace('+', '-')}")
        reports.append(train_and_evaluate(model, data, steps, test, by_source, len(src), out, args))
    for report in reports:
        print(json.dumps(report, indent=2))
    if len(reports) > 1:
        print(f"\n{'model':<32} {'steps':>6} {'minutes':>8} {'greedy':>7} {f'beam{args.beam_size}':>7}")
        for r in reports:
            print(
                f"{r['model']:<32} {r['steps']:>6} {r['train_minutes']:>8.1f} {r['bleu_greedy']:>7.2f} "
                f"{r[f'bleu_beam{args.beam_size}']:>7.2f}"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))


def train_and_evaluate(model, data, steps, test, by_source, train_size, out, args) -> dict:
    """Train `model` for `steps` steps, save it to `out`, and report its BLEUs."""
    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, min(500, steps // 10), steps, args.lr / 20)
    optimizer = optax.chain(optax.clip_by_global_norm(5.0), optax.adam(schedule))
    dev_src = [es for es, _ in test[:300]]
    dev_ref = [en for _, en in test[:300]]
    started = time.perf_counter()
    result = train(
        model,
        data,
        steps=steps,
        key=jax.random.key(args.seed + 1),
        optimizer=optimizer,
        units="tgt_mask",
        evaluate=(lambda m: {"dev_bleu_greedy": bleu(m, dev_src, dev_ref)[0]}) if args.dev_evals else None,
        eval_every=max(steps // max(args.dev_evals, 1), 1),
        log_every=200,
    )
    train_seconds = time.perf_counter() - started
    model = result.model
    save(model, out)
    report = evaluate(model, test, by_source, args)
    report.update(
        model=model.spec.name,
        steps=steps,
        train_minutes=train_seconds / 60,
        epochs=steps * args.batch_size / train_size,
        compilations=result.compilations,
        tokens_per_s=float(np.mean([h["units_per_s"] for h in result.history if "units_per_s" in h][1:] or [0])),
    )
    return report


def estimate_steps(model, data, args) -> int:
    """Steps that fit the budget, from the speed of a short probe run."""
    probe = train(model, data, steps=100, key=jax.random.key(0), progress=False, log_every=25, units="tgt_mask")
    rate = np.mean([h["units_per_s"] for h in probe.history[1:]])
    tokens_per_step = np.mean([np.sum(b["tgt_mask"]) for b, _ in zip(data, range(50), strict=False)])
    per_step = tokens_per_step / rate
    steps = int(args.minutes * 60 * 0.9 / per_step / 100) * 100
    print(
        f"about {per_step * 1000:.0f} ms a step ({rate:,.0f} target tokens/s): {steps:,} steps fit {args.minutes:g} min"
    )
    return max(steps, 100)


def evaluate(model, test, by_source, args) -> dict:
    sources = [es for es, _ in test]
    references = [en for _, en in test]
    distinct = sorted({es for es in sources})
    keys = {es: " ".join(tokenize(es)) for es in distinct}
    report = {}
    for label, decode in [
        ("greedy", {}),
        (f"beam{args.beam_size}", {"strategy": "beam", "beam_size": args.beam_size, "alpha": args.alpha}),
    ]:
        score, outputs, seconds = bleu(model, sources, references, **decode)
        report[f"bleu_{label}"] = score
        report[f"sentences_per_s_{label}"] = len(sources) / seconds
        best = dict(zip(sources, outputs, strict=True))
        refs = [[en for _, en in by_source[keys[es]]] for es in distinct]
        width = max(len(r) for r in refs)
        streams = [[r[i] if i < len(r) else r[0] for r in refs] for i in range(width)]
        import sacrebleu

        report[f"bleu_{label}_all_refs"] = sacrebleu.corpus_bleu(
            [best[es] for es in distinct], streams, lowercase=True
        ).score
        print(f"{label}: BLEU {score:.2f} (all references {report[f'bleu_{label}_all_refs']:.2f})")
    for es, en in test[:8]:
        print(f"  {es}\n    ref: {en}\n    out: {model.translate(es, strategy='beam', beam_size=args.beam_size)}")
    return report


if __name__ == "__main__":
    run_reporting_conditions(main)
