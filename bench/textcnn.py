"""Sentence classification with zoo's textcnn, Kim's (2014) protocol, against his published accuracies.

    python bench/textcnn.py --task mr                                  # CNN-rand, 10-fold CV
    python bench/textcnn.py --task mr --vectors w2v.safetensors --static   # CNN-static
    python bench/textcnn.py --task trec                                # CNN-rand, 5,452 / 500
    python bench/textcnn.py --task trec --seed 3                       # another draw of dev set and batches

Kim's settings: filters of widths 3, 4, 5 with 100 maps each, ReLU, dropout
0.5, l2 max-norm 3 on the class weights, batches of 50, Adadelta; 10% of the
training data is held out as a dev set and the epoch that scores best on it is
kept. Movie reviews (MR): label = the sign of the sentence's sentiment score,
zeros dropped, 10-fold cross-validation. TREC: coarse labels, the standard split.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from conditions import run_reporting_conditions

from zoo.data.paths import shared_data
from zoo.data.vocab import Vocab
from zoo_textcnn.data import LabelledTexts, read_movie_reviews, read_trec
from zoo_textcnn.pretrained import vectors_of
from zoo_textcnn.recipe import accuracy, fit

KIM = {("mr", "rand"): 0.761, ("mr", "static"): 0.810, ("mr", "non-static"): 0.815, ("trec", "rand"): 0.912}
KIM.update({("trec", "static"): 0.928, ("trec", "non-static"): 0.936})


def _variant(args: argparse.Namespace) -> str:
    if not args.vectors:
        return "rand"
    return "static" if args.static else "non-static"


def _run(train: LabelledTexts, test: LabelledTexts, args, keyed, seed: int) -> dict:
    """One training run: dev split off `train`, best dev epoch kept, scored on `test`."""
    order = np.random.default_rng(seed).permutation(len(train))
    n_dev = len(train) // 10
    dev, fold_train = train.subset(order[:n_dev].tolist()), train.subset(order[n_dev:].tolist())
    counts = {w: 1 for t in fold_train.texts for w in t}
    if keyed is not None:  # words the pretrained vectors know (or build from subwords) keep their vector
        known = lambda w: keyed.oov is not None or w in keyed.key_to_index
        counts.update({w: 1 for t in dev.texts + test.texts for w in t if known(w)})
    vocab = Vocab.build(counts, specials=("pad", "unk"))
    overrides = {"lowercase": args.task != "trec", "freeze_embeddings": bool(args.static), "tokenizer": args.tokenizer}
    if keyed is not None:
        overrides["embedding_size"] = keyed.vector_size
    started = time.perf_counter()
    model, info = fit(
        "textcnn",
        fold_train,
        dev,
        epochs=args.epochs,
        batch_size=50,
        seed=seed,
        vectors=keyed,
        vocab=vocab,
        patience=args.patience or None,
        optimizer=args.optimizer,
        pad_to_longest=args.pad_to_longest,
        progress=not args.quiet,
        overrides=overrides,
    )
    seconds = time.perf_counter() - started
    score = accuracy(model, test)
    coverage = info["coverage"].fraction if info["coverage"] is not None else None
    return {"accuracy": score, "dev": info["best_dev"], "epoch": info["best_epoch"], "epochs_run": info["epochs_run"],
            "seconds": seconds, "coverage": coverage, "train_sentences": len(fold_train)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=shared_data(), help="the shared data folder")
    parser.add_argument("--task", choices=["mr", "trec"], default="mr")
    parser.add_argument("--vectors", help="pretrained word vectors: a zoo embedder file or a word2vec file")
    parser.add_argument("--static", action="store_true", help="freeze the pretrained vectors (CNN-static)")
    parser.add_argument("--folds", type=int, default=10, help="MR: cross-validation folds (default 10)")
    parser.add_argument("--only-folds", type=int, help="MR: run only the first N folds (a quick look)")
    parser.add_argument("--epochs", type=int, default=25, help="at most this many epochs (Kim: 25)")
    parser.add_argument("--patience", type=int, default=0, help="stop after N epochs without a dev gain (0: never)")
    parser.add_argument("--tokenizer", default="kim", help="how to split the text (Kim: 'kim'; any zoo tokeniser)")
    parser.add_argument(
        "--optimizer", choices=["adadelta", "adam"], default="adadelta", help="Kim's adadelta (default) or adam"
    )
    parser.add_argument(
        "--pad-to-longest",
        action=argparse.BooleanOptionalAction,
        help="random batches padded to the longest text, as Kim did (default: on for TREC; MR groups "
        "batches by length, which keeps its 10 folds within the hour)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("no shared data folder: pass --data-dir or set ZOO_DATA_DIR")
    if args.static and not args.vectors:
        parser.error("--static needs --vectors")
    if args.pad_to_longest is None:
        args.pad_to_longest = args.task == "trec"
    keyed = vectors_of(args.vectors) if args.vectors else None
    variant = _variant(args)
    started = time.perf_counter()
    runs = []
    if args.task == "mr":
        data = read_movie_reviews(args.data_dir / "classify" / "movie-review-sentences.tsv", tokenizer=args.tokenizer)
        folds = np.array_split(np.random.default_rng(args.seed).permutation(len(data)), args.folds)
        print(f"MR: {len(data):,} sentences, {args.folds}-fold cross-validation, CNN-{variant}", flush=True)
        for k, held in enumerate(folds[: args.only_folds or args.folds]):
            rest = np.setdiff1d(np.arange(len(data)), held)
            run = _run(data.subset(rest.tolist()), data.subset(held.tolist()), args, keyed, args.seed + k)
            runs.append(run)
            print(f"fold {k + 1}: test {run['accuracy']:.2%} (dev {run['dev']:.2%} at epoch {run['epoch']}, "
                  f"{run['seconds']:.0f}s)", flush=True)  # fmt: skip
    else:
        train, test = read_trec(args.data_dir / "classify" / "trec6.csv", tokenizer=args.tokenizer)
        batching = "random batches padded to the longest" if args.pad_to_longest else "batches grouped by length"
        print(f"TREC: {len(train):,} training and {len(test):,} test questions, CNN-{variant}, {batching}", flush=True)
        runs.append(_run(train, test, args, keyed, args.seed))
    wall = time.perf_counter() - started
    scores = np.asarray([r["accuracy"] for r in runs])
    reference = KIM.get((args.task, variant))
    sentences = sum(r["train_sentences"] * r["epochs_run"] for r in runs)
    print(f"\n{'task':<6}{'model':<16}{'runs':>5}{'accuracy':>10}{'std':>7}{'Kim 2014':>10}{'ratio':>7}  time")
    ratio = scores.mean() / reference if reference else float("nan")
    print(
        f"{args.task:<6}{'CNN-' + variant:<16}{len(runs):>5}{scores.mean():>10.2%}{scores.std():>7.2%}"
        f"{reference or float('nan'):>10.1%}{ratio:>7.3f}  {wall / 60:.1f} min, {sentences / wall:.0f} sentences/s"
    )
    if keyed is not None:
        print(f"pretrained vectors ({keyed.vector_size} dims) cover {np.mean([r['coverage'] for r in runs]):.1%} "
              "of the vocabulary")  # fmt: skip
    if args.json:
        payload = {"task": args.task, "variant": variant, "mean": scores.mean(), "std": scores.std(), "runs": runs}
        args.json.write_text(json.dumps({**payload, "reference": reference, "wall_s": wall}, indent=2))
    return 0 if reference is None or scores.mean() >= reference else 1


if __name__ == "__main__":
    run_reporting_conditions(main)
