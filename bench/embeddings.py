"""Word embeddings: zoo against gensim and the fastText package, same corpus, same settings.

    pip install -e '.[bench,fast]'
    python bench/embeddings.py                       # skip-gram, CBOW, fastText, GloVe, PPMI-SVD
    python bench/embeddings.py --models skipgram --repeat 4   # memory: the corpus read 4 times
    python bench/embeddings.py --models skipgram cbow --hs 1 --negative 0   # hierarchical softmax (gensim hs=1)
    python bench/embeddings.py --models fasttext-cbow           # fastText's cbow on both sides

The corpus is tokenised once with zoo's default tokeniser into a temporary file
of space-separated words, which every side then reads (zoo with the
``whitespace`` tokeniser), so all see the same words. Each side trains in its
own process, one after the other; the driver measures the child's peak memory
(``ru_maxrss`` from ``wait4``) and evaluates every side's vectors with the same
code (`zoo.vectors.KeyedVectors`): Google analogies (restrict_vocab 30000),
WordSim-353 and SimLex-999 Spearman.

Each side runs ``--rounds`` times (3 by default), the sides alternating within a
round; the table gives each row's medians over the rounds and the summary the
median of the rounds' ratios with every round's, so a drifting machine shows.

Speed: ``train w/s`` is corpus words × epochs / training seconds (the phase
gensim reports; vocabulary and, for zoo, tokenising the corpus into ids are
left out: ``total s`` has them). The fastText package times its whole run
only, so its ``train w/s`` is over its total time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conditions import add_rounds_argument, median, peer_line, run_reporting_conditions

MODELS = ("skipgram", "cbow", "fasttext", "glove", "ppmi-svd", "fasttext-cbow")
DEFAULT_MODELS = MODELS[:5]
ZOO_NAMES = {
    "skipgram": "word2vec-skipgram",
    "cbow": "word2vec-cbow",
    "fasttext": "fasttext",
    "fasttext-cbow": "fasttext-cbow",
}
PEERS = {"skipgram": "gensim", "cbow": "gensim", "fasttext": "fasttext", "fasttext-cbow": "fasttext"}


def _default_data() -> Path | None:
    from zoo.data.paths import shared_data

    return shared_data()


def tokenise(corpus: Path, out: Path) -> int:
    """Write `corpus` tokenised by zoo's default tokeniser, one sentence a line; return the word count."""
    from zoo.data.corpus import iter_sentences

    words = 0
    with open(out, "w", encoding="utf-8") as handle:
        for sentence in iter_sentences(corpus):
            handle.write(" ".join(sentence) + "\n")
            words += len(sentence)
    return words


# -- workers: each runs in its own process and prints one JSON line ---------------------


def work_zoo(args: argparse.Namespace) -> dict:
    import jax

    import zoo
    from zoo.vectors import KeyedVectors
    from zoo_word2vec.fit import build_vocab, fit

    corpus = [str(args.text)] * args.repeat
    start = time.perf_counter()
    vocab = build_vocab(corpus, min_count=args.min_count, tokenizer="whitespace")
    params = dict(
        embedding_size=args.dim, window=args.window, negative=args.negative, sample=args.sample, epochs=args.epochs,
        hs=bool(args.hs),
    )  # fmt: skip
    model = zoo.build(ZOO_NAMES[args.model], vocab=vocab, key=jax.random.key(args.seed), **params)
    model, stats = fit(
        model,
        corpus,
        threads=args.threads,
        tokenizer="whitespace",
        seed=args.seed,
        progress=False,
        backend=args.backend,
        streams=args.streams or (args.threads if args.model.startswith("fasttext") else 1),
    )
    total = time.perf_counter() - start
    KeyedVectors.from_model(model).save_word2vec_format(args.vectors, binary=True)
    return {"train_s": stats.seconds, "total_s": total, "vocab": len(vocab), "loss": stats.history[-1]["loss"]}


def work_gensim(args: argparse.Namespace) -> dict:
    from gensim.models import Word2Vec
    from gensim.models.word2vec import LineSentence

    model = Word2Vec(
        vector_size=args.dim, window=args.window, negative=args.negative, hs=args.hs, min_count=args.min_count,
        sample=args.sample, sg=int(args.model == "skipgram"), workers=args.threads, seed=args.seed, epochs=args.epochs,
    )  # fmt: skip
    start = time.perf_counter()
    if args.gensim_input == "corpus_file":
        model.build_vocab(corpus_file=str(args.text))
        begin = time.perf_counter()
        model.train(
            corpus_file=str(args.text), total_words=model.corpus_total_words, total_examples=model.corpus_count,
            epochs=args.epochs,
        )  # fmt: skip
    else:
        sentences = LineSentence(str(args.text))
        model.build_vocab(sentences)
        begin = time.perf_counter()
        model.train(sentences, total_examples=model.corpus_count, epochs=args.epochs)
    end = time.perf_counter()
    model.wv.save_word2vec_format(str(args.vectors), binary=True)
    return {"train_s": end - begin, "total_s": end - start, "vocab": len(model.wv)}


def work_fasttext(args: argparse.Namespace) -> dict:
    import fasttext
    import numpy as np

    from zoo.vectors import KeyedVectors

    start = time.perf_counter()
    # fastText trains one loss: hs (its -neg then unused) or negative sampling
    model = fasttext.train_unsupervised(
        str(args.text), model="cbow" if args.model == "fasttext-cbow" else "skipgram", loss="hs" if args.hs else "ns",
        dim=args.dim, ws=args.window, neg=args.negative, minCount=args.min_count,
        t=args.sample, epoch=args.epochs, thread=args.threads, minn=3, maxn=6, bucket=2_000_000, lr=0.05, verbose=0,
    )  # fmt: skip
    total = time.perf_counter() - start
    words = [w for w in model.words if w != "</s>"]
    vectors = np.stack([model.get_word_vector(w) for w in words])
    KeyedVectors(words, vectors).save_word2vec_format(args.vectors, binary=True)
    return {"train_s": total, "total_s": total, "vocab": len(words)}


def work_cli(args: argparse.Namespace) -> dict:
    """GloVe and PPMI-SVD through `run_model` of ``bench/vectors.py`` (their own benchmark).

    GloVe runs with the settings measured best on en-mix (bench/README.md): x_max 10,
    AdaGrad η 0.2, 6 epochs; the paper's x_max 100, η 0.05, 25 epochs underfit this 6M-word corpus.
    """
    import importlib.util

    from zoo.vectors import KeyedVectors

    spec = importlib.util.spec_from_file_location("bench_vectors", Path(__file__).with_name("vectors.py"))
    vectors = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vectors)
    folder = args.vectors.parent / f"{args.model}-models"
    options = argparse.Namespace(
        dim=args.dim, window=args.window, min_count=args.min_count, tokenizer="whitespace", seed=args.seed,
        glove_epochs=6, glove_lr=0.2, glove_x_max=10.0, batch_size=16384, save=str(folder),
    )  # fmt: skip
    folder.mkdir(exist_ok=True)
    result = vectors.run_model(args.model, [args.text] * args.repeat, options)
    keyed = KeyedVectors.load(folder / f"{args.model}.safetensors")
    keyed.save_word2vec_format(args.vectors, binary=True)
    return {"train_s": result["seconds"], "total_s": result["seconds"], "vocab": len(keyed)}


WORKERS = {"zoo": work_zoo, "gensim": work_gensim, "fasttext": work_fasttext, "cli": work_cli}


# -- driver -----------------------------------------------------------------------------


def run_side(side: str, args: argparse.Namespace, text: Path, vectors: Path) -> dict:
    """Run one side in a child process; add its peak memory (MB) from the kernel's accounting."""
    command = [sys.executable, __file__, "--worker", side, "--text", str(text), "--vectors", str(vectors)]
    names = ("model", "dim", "window", "negative", "hs", "min_count", "sample", "epochs", "threads", "seed", "repeat")
    for name in names:
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    command += ["--backend", args.backend, "--gensim-input", args.gensim_input]
    if args.streams is not None:
        command += ["--streams", str(args.streams)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise RuntimeError(f"{side} {args.model} failed (status {status})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = usage.ru_maxrss / 1024
    return result


def evaluate(vectors: Path, data: Path) -> dict:
    from zoo.vectors import KeyedVectors

    keyed = KeyedVectors.load_word2vec_format(vectors, binary=True)
    emb = data / "embeddings"
    analogy = keyed.analogy_report(emb / "questions-words.txt", restrict_vocab=30000)
    return {
        "analogy": 100 * analogy.score,
        "covered": analogy.covered,
        "ws353": keyed.word_pairs_report(emb / "wordsim353.tsv").spearman,
        "simlex": keyed.word_pairs_report(emb / "simlex999.txt").spearman,
    }


def median_row(rounds: list[dict]) -> dict:
    """One side's rounds as one row: the median of every figure (the words and counts of the first)."""
    row = dict(rounds[0])
    for key in ("words_per_s", "train_s", "total_s", "peak_mb", "analogy", "ws353", "simlex"):
        row[key] = median(r[key] for r in rounds)
    return row


def print_table(rounds: dict[tuple[str, str], list[dict]]) -> None:
    """The median row of every (model, side), then each model's zoo/peer ratios: the median over
    the rounds of each round's ratio, with the rounds' own."""
    head = f"{'model':<15}{'side':<9}{'train w/s':>11}{'total s':>9}{'peak MB':>9}{'vocab':>8}"
    head += f"{'analogy %':>11}{'covered':>9}{'WS353':>8}{'SimLex':>8}"
    print(head)
    print("-" * len(head))
    for runs in rounds.values():
        r = median_row(runs)
        line = f"{r['model']:<15}{r['side']:<9}{r['words_per_s'] / 1000:>10.0f}k{r['total_s']:>9.1f}"
        line += f"{r['peak_mb']:>9.0f}{r['vocab']:>8}{r['analogy']:>11.2f}{r['covered']:>9}"
        print(line + f"{r['ws353']:>8.3f}{r['simlex']:>8.3f}")
    print()
    for model, peer in PEERS.items():
        ours, theirs = rounds.get((model, "zoo")), rounds.get((model, peer))
        if not (ours and theirs):
            continue
        pairs = list(zip(ours, theirs, strict=True))
        train = [o["words_per_s"] / t["words_per_s"] for o, t in pairs]
        total = [t["total_s"] / o["total_s"] for o, t in pairs]
        o, t = median_row(ours), median_row(theirs)
        print(
            f"{model}: zoo/{peer} train speed {median(train):.2f}x ({' / '.join(f'{x:.2f}' for x in train)}), "
            f"total time {median(total):.2f}x faster ({' / '.join(f'{x:.2f}' for x in total)}), "
            f"analogy {o['analogy'] - t['analogy']:+.2f} pts, "
            f"WS353 {o['ws353'] - t['ws353']:+.3f}, "
            f"SimLex {o['simlex'] - t['simlex']:+.3f}, memory {o['peak_mb'] / t['peak_mb']:.2f}x "
            f"(medians of {len(pairs)} rounds)"
        )


def available_cli_models() -> set[str]:
    import zoo

    if not Path(__file__).with_name("vectors.py").exists():
        return set()
    return {m for m in ("glove", "ppmi-svd") if m in zoo.list_models()}


def drive(args: argparse.Namespace) -> None:
    data = args.data_dir or _default_data()
    if data is None:
        sys.exit("shared data not found: pass --data-dir (the folder with corpus/ and embeddings/)")
    corpus = data / args.corpus
    rounds: dict[tuple[str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="zoo-bench-") as tmp:
        text = Path(tmp) / "corpus.txt"
        words = tokenise(corpus, text)
        settings = f"{args.epochs} epochs, {args.threads} threads, negative {args.negative}, hs {args.hs}"
        print(f"{corpus.name}: {words:,} words (x{args.repeat}), {settings}", flush=True)
        for peer in sorted({PEERS[m] for m in args.models if m in PEERS} if not args.zoo_only else set()):
            print(peer_line(peer, args.threads), flush=True)
        for model in args.models:
            if model in ("glove", "ppmi-svd"):
                if model not in available_cli_models():
                    print(f"{model}: not installed, skipped", flush=True)
                    continue
                sides = ["cli"]
            else:
                sides = ["zoo"] if args.zoo_only else [PEERS[model], "zoo"]
            for round_ in range(args.rounds if sides != ["cli"] else 1):  # no peer: once
                for side in sides if round_ % 2 == 0 else sides[::-1]:
                    args.model = model
                    vectors = Path(tmp) / f"{model}-{side}.bin"
                    result = run_side(side, args, text, vectors)
                    result.update(evaluate(vectors, data), model=model, side="zoo" if side == "cli" else side)
                    result["words_per_s"] = words * args.repeat * args.epochs / result["train_s"]
                    result["round"] = round_ + 1
                    rounds.setdefault((model, result["side"]), []).append(result)
                    print(json.dumps(result), flush=True)
    print()
    print_table(rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: zoo's locator)")
    parser.add_argument("--corpus", default="corpus/en-mix.txt.gz", help="corpus path inside the data folder")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(DEFAULT_MODELS))
    parser.add_argument("--repeat", type=int, default=1, help="read the corpus this many times per epoch")
    parser.add_argument("--zoo-only", action="store_true", help="skip the peers")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5, help="noise words (0: none, with --hs 1)")
    parser.add_argument(
        "--hs", type=int, choices=(0, 1), default=0, help="hierarchical softmax (gensim hs=1, fastText -loss hs)"
    )
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--sample", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--streams",
        type=int,
        default=None,
        help="places zoo reads the corpus from at once (default: --threads for fasttext, as fastText's threads "
        "each read their share of the file; 1, file order, for the others)",
    )
    parser.add_argument("--seed", type=int, default=1)
    add_rounds_argument(parser)
    parser.add_argument("--backend", choices=("auto", "numba", "jax"), default="auto", help="zoo's backend")
    parser.add_argument("--gensim-input", choices=("iterable", "corpus_file"), default="iterable")
    parser.add_argument("--worker", choices=tuple(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--text", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeat > 1:
        args.zoo_only = True  # the repeated corpus is zoo's memory check
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args)), flush=True)
    else:
        drive(args)


if __name__ == "__main__":
    run_reporting_conditions(main)
