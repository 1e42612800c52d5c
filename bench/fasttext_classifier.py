"""fastText's supervised classifier: zoo's ``fasttext-classifier`` against the ``fasttext`` package.

    python bench/fasttext_classifier.py                          # defaults: wordNgrams 2, 5 seeds
    python bench/fasttext_classifier.py --word-ngrams 1 --epoch 5 --lr 0.1

The movie-review sentences (label = the sign of the score, zeros dropped) are lowercased,
split into words and single marks, and written in fastText's ``__label__X text`` format;
each seed draws its own 90/10 split, and both sides train on the same files with the same
epochs, lr, wordNgrams, dim, bucket and threads (fastText: seed = the seed; zoo: ``--seed``).
Each side runs in its own process (``nice``), one after the other, and reports test
accuracy (P@1) and training seconds per seed: fastText's ``train_supervised`` call, zoo's
reading and ``fit`` (the numba kernels are compiled before the clock starts, on a few lines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")


def prepare(source: Path, folder: Path, seeds: list[int], test_fraction: float) -> list[tuple[Path, Path]]:
    """Write one (train, test) pair of fastText-format files per seed under `folder`."""
    lines = []
    with source.open(encoding="utf-8") as handle:
        next(handle)
        for row in handle:
            _, score, text = row.rstrip("\n").split("\t", 2)
            if float(score) != 0:
                label = "positive" if float(score) > 0 else "negative"
                lines.append(f"__label__{label} {' '.join(_TOKEN.findall(text.lower()))}\n")
    pairs = []
    for seed in seeds:
        order = np.random.default_rng(seed).permutation(len(lines))
        n_test = round(len(lines) * test_fraction)
        train, test = folder / f"train{seed}.txt", folder / f"test{seed}.txt"
        train.write_text("".join(lines[i] for i in order[n_test:]), encoding="utf-8")
        test.write_text("".join(lines[i] for i in order[:n_test]), encoding="utf-8")
        pairs.append((train, test))
    return pairs


def side_fasttext(args: argparse.Namespace, pairs: list[tuple[Path, Path]]) -> list[dict]:
    import fasttext

    out = []
    for seed, (train, test) in zip(args.seeds, pairs, strict=True):
        started = time.perf_counter()
        model = fasttext.train_supervised(
            input=str(train), epoch=args.epoch, lr=args.lr, wordNgrams=args.word_ngrams, dim=args.dim,
            bucket=args.bucket, thread=args.threads, seed=seed, verbose=0,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        _, precision, _ = model.test(str(test))
        out.append({"seed": seed, "accuracy": precision, "seconds": seconds})
    return out


def side_zoo(args: argparse.Namespace, pairs: list[tuple[Path, Path]]) -> list[dict]:
    from zoo_word2vec.classifier.data import read_labelled
    from zoo_word2vec.classifier.fit import fit
    from zoo_word2vec.classifier.recipe import score

    settings = {"dim": args.dim, "bucket": args.bucket, "word_ngrams": args.word_ngrams}
    warm = read_labelled(pairs[0][0]).subset(range(20))  # compile (or load) the kernels off the clock
    fit("fasttext-classifier", warm, epochs=1, lr=args.lr, threads=args.threads, overrides={**settings, "bucket": 10})
    out = []
    for seed, (train, test) in zip(args.seeds, pairs, strict=True):
        started = time.perf_counter()
        data = read_labelled(train)
        model, _ = fit(
            "fasttext-classifier", data, epochs=args.epoch, lr=args.lr, threads=args.threads, seed=seed,
            overrides=settings,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        accuracy = score(model, read_labelled(test), k=1)["precision@1"]
        out.append({"seed": seed, "accuracy": accuracy, "seconds": seconds})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("ZOO_DATA_DIR", "../shared/data")))
    parser.add_argument("--epoch", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--word-ngrams", type=int, default=2)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--bucket", type=int, default=2000000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--test-fraction", type=float, default=0.1)
    parser.add_argument("--side", choices=["fasttext", "zoo"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:  # a child: train and score one side, print JSON
        pairs = [(args.folder / f"train{s}.txt", args.folder / f"test{s}.txt") for s in args.seeds]
        run = side_fasttext if args.side == "fasttext" else side_zoo
        print(json.dumps(run(args, pairs)))
        return
    source = args.data_dir / "classify" / "movie-review-sentences.tsv"
    with tempfile.TemporaryDirectory() as folder:
        prepare(source, Path(folder), args.seeds, args.test_fraction)
        print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
        results = {}
        for side in ("fasttext", "zoo"):
            child = [sys.executable, *sys.argv, "--side", side, "--folder", folder]
            done = subprocess.run(["nice", "-n", "10", *child], capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"the {side} side failed:\n{done.stderr}")
            results[side] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"load average after {side}: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    settings = f"epoch {args.epoch}, lr {args.lr}, wordNgrams {args.word_ngrams}, dim {args.dim}, "
    print(settings + f"bucket {args.bucket}, threads {args.threads}, seeds {args.seeds}")
    print("| side | accuracy % (mean ± sd) | per seed | train s (median) |")
    print("|---|---:|---|---:|")
    for side, rows in results.items():
        acc = np.asarray([r["accuracy"] for r in rows]) * 100
        seconds = np.median([r["seconds"] for r in rows])
        per_seed = " ".join(f"{a:.2f}" for a in acc)
        print(
            f"| {side} | {acc.mean():.2f} ± {acc.std(ddof=1) if len(acc) > 1 else 0:.2f} | {per_seed} | {seconds:.3f} |"
        )
    gap = np.mean([r["accuracy"] for r in results["zoo"]]) - np.mean([r["accuracy"] for r in results["fasttext"]])
    print(f"zoo - fasttext: {gap * 100:+.2f} points")


if __name__ == "__main__":
    main()
