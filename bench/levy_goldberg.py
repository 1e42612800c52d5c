"""Skip-gram as implicit matrix factorisation: does w · c track PMI(w, c) − log k?

Levy & Goldberg (2014) show that skip-gram with k negative samples drawn from
P_n reaches its optimum at ``w · c = log (P(w, c) / (P(w) P_n(c))) − log k``.
This script trains zoo's skip-gram (no subsampling, as in their analysis),
counts the co-occurrences its dynamic window sees (distance d weighted
(window + 1 − d) / window, the chance a window of uniform size 1..window reaches
d), and correlates the trained input·output dot products with the shifted PMI
over frequent pairs of frequent words.

    python bench/levy_goldberg.py                     # en-mix, 5 epochs, top 2000 words
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def cooccurrences(corpus, vocab, *, window: int, top: int, tokenizer=None) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic-window co-occurrence counts among the `top` words ``[top, top]`` and every
    word's total context weight ``[V]`` (over all contexts, not only the top words)."""
    from zoo.data.corpus import iter_ids

    pairs = np.zeros((top, top))
    totals = np.zeros(len(vocab))
    weights = (window + 1 - np.arange(1, window + 1)) / window
    for ids in iter_ids(corpus, vocab, tokenizer):
        for d, weight in enumerate(weights, start=1):
            if ids.size <= d:
                break
            left, right = ids[:-d], ids[d:]
            np.add.at(totals, left, weight)
            np.add.at(totals, right, weight)
            inside = (left < top) & (right < top)
            np.add.at(pairs, (left[inside], right[inside]), weight)
            np.add.at(pairs, (right[inside], left[inside]), weight)
    return pairs, totals


def shifted_pmi(pairs: np.ndarray, totals: np.ndarray, noise: np.ndarray, negative: int) -> np.ndarray:
    """``log #(w,c) − log #(w) − log P_n(c) − log k`` for the top words (−inf where #(w,c) = 0)."""
    top = pairs.shape[0]
    with np.errstate(divide="ignore"):
        return np.log(pairs) - np.log(totals[:top])[:, None] - np.log(noise[:top])[None, :] - np.log(negative)


def main(argv: list[str] | None = None) -> None:
    import jax

    import zoo
    from zoo.data.paths import shared_data
    from zoo.eval import pearson, spearman
    from zoo_word2vec.fit import build_vocab, fit
    from zoo_word2vec.sampling import noise_distribution

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: zoo's locator)")
    parser.add_argument("--corpus", default="corpus/en-mix.txt.gz")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--top", type=int, default=2000, help="pairs among this many most frequent words")
    parser.add_argument("--min-pair", type=float, default=100.0, help="smallest co-occurrence weight kept")
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
    pairs, totals = cooccurrences(corpus, vocab, window=args.window, top=args.top)
    target = shifted_pmi(pairs, totals, noise_distribution(vocab.counts), args.negative)
    dots = np.asarray(model.input[: args.top]) @ np.asarray(model.output[: args.top]).T
    frequent = pairs >= args.min_pair
    x, y = dots[frequent], target[frequent]
    print(f"{int(frequent.sum()):,} pairs (weight >= {args.min_pair:g}) among the {args.top} most frequent words")
    print(f"Pearson r   (w·c, PMI − log k) = {pearson(x, y):.3f}")
    print(f"Spearman rho(w·c, PMI − log k) = {spearman(x, y):.3f}")
    print(f"mean w·c {x.mean():.3f}, mean PMI − log k {y.mean():.3f}, mean |difference| {np.abs(x - y).mean():.3f}")


if __name__ == "__main__":
    main()
