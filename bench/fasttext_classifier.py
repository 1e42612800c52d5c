"""fastText's supervised classifier: zoo's ``fasttext-classifier`` against the ``fasttext`` package.

    python bench/fasttext_classifier.py                                  # wordNgrams 2, bucket 2M, 1 thread
    python bench/fasttext_classifier.py --threads 2
    python bench/fasttext_classifier.py --word-ngrams 1 --lr 0.1
    python bench/fasttext_classifier.py --corpus langid --seeds 0 --rounds 3   # 10x the tokens

Corpora: ``mr``, the movie-review sentences (label = the sign of the score, zeros dropped;
214,597 training tokens a split); ``langid``, the English and the Spanish sides of the
Tatoeba pairs labelled by language (2.1M training tokens a split, 10x as many). Text is
lowercased and split into words and single marks, written in fastText's ``__label__X text``
format; each seed draws its own 90/10 split, and both sides train on the same files with the
same epochs, lr, wordNgrams, dim, bucket and threads (fastText: seed = the seed; zoo: ``--seed``).

Every training runs in a process of its own (``nice``), the sides alternating (fastText,
zoo, fastText, zoo, ...) seed after seed for `--rounds` rounds; a process reports test accuracy (P@1),
training seconds (wall and CPU: fastText's ``train_supervised`` call; zoo's reading and
``fit``, its numba kernels compiled before the clock starts, on a few lines), tokens a
second (fastText's count: every token of every line and its end, times the epochs, over
the wall seconds), its peak RSS and its RSS before training. Load averages are printed before
and after every process; the table gives the medians over rounds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from conditions import peer_line, run_reporting_conditions

_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\s\w]")


def _reviews(data_dir: Path) -> list[str]:
    lines = []
    with (data_dir / "classify" / "movie-review-sentences.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for row in handle:
            _, score, text = row.rstrip("\n").split("\t", 2)
            if float(score) != 0:
                lines.append(f"__label__{'positive' if float(score) > 0 else 'negative'} {text}")
    return lines


def _languages(data_dir: Path) -> list[str]:
    lines = []
    with gzip.open(data_dir / "seq2seq" / "spa-eng.tsv.gz", "rt", encoding="utf-8") as handle:
        for row in handle:
            english, spanish, _ = row.rstrip("\n").split("\t", 2)
            lines += [f"__label__en {english}", f"__label__es {spanish}"]
    return lines


CORPORA = {"mr": _reviews, "langid": _languages}


def prepare(lines: list[str], folder: Path, seeds: list[int], test_fraction: float) -> None:
    """Write one (train, test) pair of fastText-format files per seed under `folder`."""
    lines = [
        " ".join([label, *_TOKEN.findall(text.lower())]) + "\n" for label, text in (ln.split(" ", 1) for ln in lines)
    ]
    for seed in seeds:
        order = np.random.default_rng(seed).permutation(len(lines))
        n_test = round(len(lines) * test_fraction)
        (folder / f"train{seed}.txt").write_text("".join(lines[i] for i in order[n_test:]), encoding="utf-8")
        (folder / f"test{seed}.txt").write_text("".join(lines[i] for i in order[:n_test]), encoding="utf-8")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _tokens(path: Path) -> int:
    """fastText's token count of a file: every token and one end of line per line."""
    with path.open("rb") as handle:
        return sum(len(line.split()) + 1 for line in handle)


def _timed(train) -> tuple[object, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = train()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def side_fasttext(args: argparse.Namespace, train: Path, test: Path, seed: int) -> dict:
    import fasttext

    before = _rss_mb()
    model, wall, cpu = _timed(
        lambda: fasttext.train_supervised(
            input=str(train),
            epoch=args.epoch,
            lr=args.lr,
            wordNgrams=args.word_ngrams,
            dim=args.dim,
            bucket=args.bucket,
            thread=args.threads,
            seed=seed,
            verbose=0,
            loss=args.loss,
        )
    )
    _, precision, _ = model.test(str(test))
    return {"accuracy": precision, "seconds": wall, "cpu": cpu, "rss_before": before, "rss_peak": _rss_mb()}


def side_zoo(args: argparse.Namespace, train: Path, test: Path, seed: int) -> dict:
    from zoo_word2vec.classifier.data import read_labelled
    from zoo_word2vec.classifier.fit import fit
    from zoo_word2vec.classifier.recipe import score

    settings = {"dim": args.dim, "bucket": args.bucket, "word_ngrams": args.word_ngrams, "loss": args.loss}
    warm = read_labelled(train).subset(range(20))  # compile (or load) the kernels off the clock
    fit("fasttext-classifier", warm, epochs=1, lr=args.lr, threads=args.threads, overrides={**settings, "bucket": 10})
    before = _rss_mb()
    (model, _), wall, cpu = _timed(
        lambda: fit(
            "fasttext-classifier",
            read_labelled(train),
            epochs=args.epoch,
            lr=args.lr,
            threads=args.threads,
            seed=seed,
            overrides=settings,
        )
    )
    accuracy = score(model, read_labelled(test), k=1)["P@1"]
    return {"accuracy": accuracy, "seconds": wall, "cpu": cpu, "rss_before": before, "rss_peak": _rss_mb()}


def _run_side(side: str, folder: str, seed: int) -> dict:
    child = [sys.executable, *sys.argv, "--side", side, "--folder", folder, "--seeds", str(seed)]
    load = os.getloadavg()[0]
    done = subprocess.run(["nice", "-n", "10", *child], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the {side} side failed:\n{done.stderr}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{side} seed {seed}: {row['seconds']:.3f} s (CPU {row['cpu']:.3f}), load average {load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after", file=sys.stderr)  # fmt: skip
    return {**row, "seed": seed, "tokens": _tokens(Path(folder) / f"train{seed}.txt")}


def _report(args: argparse.Namespace, results: dict[str, list[list[dict]]]) -> None:
    settings = f"{args.corpus}: loss {args.loss}, epoch {args.epoch}, lr {args.lr}, wordNgrams {args.word_ngrams}, "
    settings += f"dim {args.dim}, "
    print(settings + f"bucket {args.bucket}, threads {args.threads}, seeds {args.seeds}, rounds {args.rounds}")
    print(peer_line("fasttext", args.threads))
    print("| side | accuracy % (mean ± sd) | train s | CPU s | tokens/s | peak RSS MB | RSS before MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    speeds = {}
    for side, rounds in results.items():
        rows = [row for one in rounds for row in one]
        acc = np.asarray([r["accuracy"] for r in rounds[0]]) * 100
        median = lambda key, rows=rows: float(np.median([r[key] for r in rows]))
        speeds[side] = float(np.median([args.epoch * r["tokens"] / r["seconds"] for r in rows]))
        spread = acc.std(ddof=1) if len(acc) > 1 else 0.0
        print(
            f"| {side} | {acc.mean():.2f} ± {spread:.2f} | {median('seconds'):.3f} | {median('cpu'):.3f} | "
            f"{speeds[side]:,.0f} | {median('rss_peak'):.0f} | {median('rss_before'):.0f} |"
        )
    accuracy = {side: np.mean([r["accuracy"] for r in rounds[0]]) for side, rounds in results.items()}
    print(f"zoo - fasttext: {(accuracy['zoo'] - accuracy['fasttext']) * 100:+.2f} points; "
          f"zoo's speed {speeds['zoo'] / speeds['fasttext']:.2f}x fastText's (median tokens/s)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("ZOO_DATA_DIR", "../shared/data")))
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="mr")
    parser.add_argument("--epoch", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--word-ngrams", type=int, default=2)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--bucket", type=int, default=2000000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--loss", choices=["softmax", "ova", "hs", "ns"], default="softmax")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rounds", type=int, default=1, help="alternating processes per side")
    parser.add_argument("--test-fraction", type=float, default=0.1)
    parser.add_argument("--side", choices=["fasttext", "zoo"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:  # a child: train and score one side on one split, print JSON
        seed = args.seeds[0]
        run = side_fasttext if args.side == "fasttext" else side_zoo
        print(json.dumps(run(args, args.folder / f"train{seed}.txt", args.folder / f"test{seed}.txt", seed)))
        return
    with tempfile.TemporaryDirectory() as folder:
        prepare(CORPORA[args.corpus](args.data_dir), Path(folder), args.seeds, args.test_fraction)
        results: dict[str, list[list[dict]]] = {"fasttext": [], "zoo": []}
        for _ in range(args.rounds):
            for side in results:
                results[side].append([])
            for seed in args.seeds:
                for side in results:
                    results[side][-1].append(_run_side(side, folder, seed))
    _report(args, results)


if __name__ == "__main__":
    run_reporting_conditions(main)
