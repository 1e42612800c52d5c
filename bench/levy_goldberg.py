"""Skip-gram as implicit matrix factorisation: does w · c track PMI(w, c) − log k?

Levy & Goldberg (2014) show that skip-gram with k negative samples drawn from
P_n reaches its optimum at ``w · c = log (P(w, c) / (P(w) P_n(c))) − log k``.
This script trains zoo's skip-gram (no subsampling, as in their analysis),
counts the co-occurrences its dynamic window sees (`cooccurrence_matrix` with
``weighting="linear"``: distance d weighted (window + 1 − d) / window, the
chance a window of uniform size 1..window reaches d), and measures with
`zoo_word2vec.pmi.levy_goldberg_check` how the trained input·output dot products
follow the shifted PMI (context distribution ^0.75, as the noise) over the most
frequent pairs.

    python bench/levy_goldberg.py                     # en-mix, 5 epochs, the 20,000 most frequent pairs
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from conditions import run_reporting_conditions


def main(argv: list[str] | None = None) -> None:
    import jax

    import zoo
    from zoo.data.cooccurrence import cooccurrence_matrix
    from zoo.data.paths import shared_data
    from zoo_word2vec.fit import build_vocab, fit
    from zoo_word2vec.pmi import levy_goldberg_check

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: zoo's locator)")
    parser.add_argument("--corpus", default="corpus/en-mix.txt.gz")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=20000, help="how many of the most frequent pairs to compare")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    data = args.data_dir or shared_data()
    if data is None:
        raise SystemExit("shared data not found: pass --data-dir")
    corpus = str(data / args.corpus)
    start = time.perf_counter()
    vocab = build_vocab(corpus, min_count=5)
    params = dict(embedding_size=args.dim, window=args.window, negative=args.negative, sample=0.0, epochs=args.epochs)
    model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), **params)
    model, stats = fit(model, corpus, threads=args.threads, progress=False)
    seconds, loss = time.perf_counter() - start, stats.history[-1]["loss"]
    print(f"trained {len(vocab)} words in {seconds:.0f}s, final loss {loss:.4f}")
    counts = cooccurrence_matrix(corpus, vocab, window=args.window, weighting="linear")
    check = levy_goldberg_check(
        np.asarray(model.input), np.asarray(model.output), counts, negative=args.negative, pairs=args.pairs
    )
    print(f"{check.pairs:,} most frequent pairs:")
    print(f"Pearson r   (w·c, PMI − log k) = {check.pearson:.3f}")
    print(f"Spearman rho(w·c, PMI − log k) = {check.spearman:.3f}")
    print(f"least squares: w·c = {check.slope:.3f} (PMI − log k) + {check.intercept:.3f}")
    print(f"mean |w·c − (PMI − log k)| = {check.mean_abs_error:.3f}")


if __name__ == "__main__":
    run_reporting_conditions(main)
