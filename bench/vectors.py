"""GloVe and PPMI-SVD on a real corpus: speed, peak memory and embedding quality.

    python bench/vectors.py                         # en-mix, dim 100, window 5, min_count 5
    python bench/vectors.py --repeat 4 --models ppmi-svd     # memory must not grow with the corpus
    python bench/vectors.py --gensim                # add gensim skip-gram (needs gensim) as the reference

Each model trains in its own process (so peak memory is its own), back to
back, and the script prints one table: corpus words per second over the whole
run (counting passes included), peak resident memory, Google analogy accuracy
(restrict_vocab 30000, 3CosAdd), WordSim-353 and SimLex-999 Spearman, and the
ratios to the reference row. `run_model` is importable by other benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conditions import peer_line, run_reporting_conditions

REFERENCE = {"model": "gensim skip-gram (issue)", "analogy": 0.175, "wordsim353": 0.55, "simlex999": 0.27}


def evaluate(kv) -> dict[str, float]:
    """Google analogies (restrict 30000), WordSim-353 and SimLex-999 Spearman."""
    analogy = kv.analogy_report("google", restrict_vocab=30000)
    return {
        "analogy": analogy.score,
        "analogy_covered": analogy.covered,
        "wordsim353": kv.word_pairs_report("wordsim353").spearman,
        "simlex999": kv.word_pairs_report("simlex999").spearman,
    }


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB on Linux


def run_model(model: str, corpus: list[Path], options: argparse.Namespace) -> dict[str, Any]:
    """Train `model` (``glove``, ``ppmi-svd`` or ``gensim``) on `corpus` and measure it."""
    if model == "gensim":
        return _run_gensim(corpus, options)
    import jax

    import zoo
    from zoo.data.cooccurrence import cooccurrence_matrix
    from zoo.data.corpus import build_word_vocab, count_tokens
    from zoo.vectors import KeyedVectors

    start = time.perf_counter()
    counts = count_tokens(corpus, options.tokenizer)
    vocab = build_word_vocab(counts, min_count=options.min_count)
    params = {"embedding_size": options.dim, "window": options.window}
    if model == "glove" and getattr(options, "glove_x_max", None) is not None:
        params["x_max"] = options.glove_x_max
    built = zoo.build(model, key=jax.random.key(options.seed), vocab={"words": vocab}, **params)
    p = built.spec.params
    cooc = cooccurrence_matrix(corpus, vocab, window=p["window"], weighting=p["weighting"], tokenizer=options.tokenizer)
    counted = time.perf_counter() - start
    if model == "glove":
        from zoo_glove.train import entries_from_matrix, fit_glove

        entries = entries_from_matrix(cooc, x_max=p["x_max"], alpha=p["alpha"])
        nnz = cooc.nnz
        del cooc
        log = lambda e, cost, rate: print(
            f"  glove epoch {e}: cost {cost:.4f}, {rate / 1e6:.2f}M entries/s", flush=True
        )
        trained, _ = fit_glove(
            built,
            entries,
            epochs=options.glove_epochs,
            batch_size=options.batch_size,
            learning_rate=options.glove_lr,
            key=jax.random.key(options.seed + 1),
            callback=log,
        )
    else:
        from zoo_ppmi.svd import fit_ppmi_svd

        nnz = cooc.nnz
        trained = fit_ppmi_svd(built, cooc, seed=options.seed)
    elapsed = time.perf_counter() - start
    kv = KeyedVectors.from_model(trained)
    if options.save:
        zoo.save(trained, Path(options.save) / f"{model}.safetensors")
    return {
        "model": model,
        "words": counts.total(),
        "vocab": len(vocab),
        "nnz": nnz,
        "count_s": counted,
        "seconds": elapsed,
        "words_per_s": counts.total() / elapsed,
        "peak_gb": _peak_gb(),
        **evaluate(kv),
    }


def _run_gensim(corpus: list[Path], options: argparse.Namespace) -> dict[str, Any]:
    from gensim.models import Word2Vec

    from zoo.data.corpus import iter_sentences
    from zoo.vectors import KeyedVectors

    class Sentences:
        def __iter__(self):
            return iter_sentences(corpus, options.tokenizer)

    start = time.perf_counter()
    w2v = Word2Vec(
        Sentences(),
        vector_size=options.dim,
        window=options.window,
        min_count=options.min_count,
        negative=5,
        sample=1e-3,
        sg=1,
        workers=2,
        epochs=5,
        seed=options.seed,
    )
    elapsed = time.perf_counter() - start
    kv = KeyedVectors(w2v.wv.index_to_key, w2v.wv.vectors)
    return {
        "model": "gensim skip-gram",
        "words": w2v.corpus_total_words,
        "vocab": len(kv),
        "nnz": 0,
        "count_s": 0.0,
        "seconds": elapsed,
        "words_per_s": w2v.corpus_total_words * 5 / elapsed,
        "peak_gb": _peak_gb(),
        **evaluate(kv),
    }


def _table(rows: list[dict[str, Any]], reference: dict[str, Any]) -> str:
    header = f"{'model':26s} {'words':>9s} {'vocab':>7s} {'time s':>8s} {'words/s':>10s} {'peak GB':>8s} "
    header += f"{'analogy':>8s} {'(cov.)':>7s} {'WS353':>6s} {'SimLex':>6s}   ratios to {reference['model']}"
    lines = [header]
    for r in rows:
        ratios = " ".join(
            f"{key} {r[key] / reference[key]:.2f}x" for key in ("analogy", "wordsim353", "simlex999") if reference[key]
        )
        lines.append(
            f"{r['model']:26s} {r['words']:9d} {r['vocab']:7d} {r['seconds']:8.1f} {r['words_per_s']:10.0f} "
            f"{r['peak_gb']:8.2f} {100 * r['analogy']:7.2f}% {r['analogy_covered']:7d} {r['wordsim353']:6.3f} "
            f"{r['simlex999']:6.3f}   {ratios}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: ZOO_DATA_DIR)")
    parser.add_argument("--corpus", default="corpus/en-mix.txt.gz", help="corpus path inside --data-dir")
    parser.add_argument("--repeat", type=int, default=1, help="read the corpus this many times (memory check)")
    parser.add_argument("--models", default="glove,ppmi-svd", help="comma-separated: glove, ppmi-svd, gensim")
    parser.add_argument("--gensim", action="store_true", help="also train gensim skip-gram as the reference")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--tokenizer", default="ascii-words", help="how the corpus words were counted")
    parser.add_argument("--glove-epochs", type=int, default=25)
    parser.add_argument("--glove-lr", type=float, default=0.05)
    parser.add_argument("--glove-x-max", type=float, default=None, help="GloVe's x_max (default: the model's, 100)")
    parser.add_argument("--batch-size", type=int, default=16384, help="GloVe entries per step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="folder to save the trained models in")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # run one model in this process, print JSON
    options = parser.parse_args(argv)
    if options.data_dir is not None:
        os.environ["ZOO_DATA_DIR"] = str(options.data_dir)
    from zoo.data.paths import require_shared_data

    corpus = [require_shared_data(*options.corpus.split("/"))] * options.repeat
    if options.one:
        print("RESULT " + json.dumps(run_model(options.one, corpus, options)), flush=True)
        return 0
    models = [m for m in options.models.split(",") if m] + (["gensim"] if options.gensim else [])
    rows = []
    if options.gensim:
        print(peer_line("gensim", None) + " (the quality reference; this benchmark times no peer)", flush=True)
    for model in models:
        print(f"== {model} on {corpus[0].name} x{options.repeat}", flush=True)
        args = list(argv if argv is not None else sys.argv[1:])
        with subprocess.Popen(
            [sys.executable, __file__, *args, "--one", model], stdout=subprocess.PIPE, text=True
        ) as child:
            for line in child.stdout:  # stream progress; the last line is the result
                if line.startswith("RESULT "):
                    rows.append(json.loads(line[7:]))
                else:
                    print(line, end="", flush=True)
    reference = next((r for r in rows if r["model"] == "gensim skip-gram"), REFERENCE)
    print(_table(rows, reference))
    return 0


if __name__ == "__main__":
    run_reporting_conditions(main)
