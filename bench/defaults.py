"""Do the tagger's and TextCNN's default settings beat the simple baselines on a small new data set?

    python bench/defaults.py                       # all four sets
    python bench/defaults.py --only wsj trec       # some of them
    python bench/defaults.py --only mr --seed 1 --textcnn="--optimizer adadelta"   # another seed, Kim's rule

Each set is trained through its recipe with nothing but its defaults (the
command-line options a user leaves out): the recipe holds out its own dev set,
stops on it (patience) and keeps its best epoch. The held-out test sentences are
never seen by either side, and are read the way `zoo eval` reads them (TextCNN:
with the model's own tokeniser, as training read its file).

- ``wsj``: `bilstm-tagger` on 900 WSJ sentences with gold Penn tags (the recipe
  holds out a tenth as its dev set), tested on the other 100; against the
  most-frequent-tag-per-word baseline trained on all 900 (unknown words get the
  most frequent tag).
- ``oanc``: the same with 1,000 OANC sentences, tested on 2,000 others.
- ``trec``: `textcnn` on TREC-6's 5,452 training questions, tested on its 500;
  against TF-IDF + logistic regression (scikit-learn's defaults, written here in
  NumPy/SciPy: word unigrams, smoothed idf, l2-normalised rows, C = 1).
- ``mr``: the same on 2,000 movie-review sentences (label: the sign of the
  score), tested on 2,000 others.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import scipy.optimize
import scipy.sparse
from conditions import run_reporting_conditions

from zoo.data.paths import shared_data
from zoo_tagger.data import TaggedSentences, read_tagged
from zoo_tagger.recipe import evaluate_tagger
from zoo_tagger.recipe import recipe as tagger_recipe
from zoo_textcnn.data import LabelledTexts, read_movie_reviews
from zoo_textcnn.recipe import recipe as textcnn_recipe

SETS = ("wsj", "oanc", "trec", "mr")


def most_frequent_tag(train: TaggedSentences, test: TaggedSentences) -> float:
    """Token accuracy of tagging each word with its most frequent training tag (unknown: the commonest tag)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    overall: Counter = Counter()
    for sentence, tags in zip(train.sentences, train.tags, strict=True):
        for word, tag in zip(sentence, tags, strict=True):
            counts[word][tag] += 1
            overall[tag] += 1
    default = overall.most_common(1)[0][0]
    best = {word: c.most_common(1)[0][0] for word, c in counts.items()}
    hits = [
        best.get(w, default) == t
        for s, g in zip(test.sentences, test.tags, strict=True)
        for w, t in zip(s, g, strict=False)
    ]
    return float(np.mean(hits))


def _tfidf(train: list[str], test: list[str]) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """Rows ``[N, V]``: raw counts of words of 2+ characters times idf ``ln((1+n)/(1+df)) + 1``, l2-normalised."""
    split = lambda text: re.findall(r"(?u)\b\w\w+\b", text.lower())
    index: dict[str, int] = {}
    for text in train:
        for word in split(text):
            index.setdefault(word, len(index))

    def counts(texts: list[str]) -> scipy.sparse.csr_matrix:
        rows, cols = [], []
        for i, text in enumerate(texts):
            ids = [index[w] for w in split(text) if w in index]
            rows += [i] * len(ids)
            cols += ids
        data = np.ones(len(rows))
        return scipy.sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(index)))

    x_train, x_test = counts(train), counts(test)
    df = np.bincount(x_train.indices, minlength=len(index))
    idf = np.log((1 + len(train)) / (1 + df)) + 1
    out = []
    for x in (x_train, x_test):
        x = x @ scipy.sparse.diags(idf)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1))).ravel()
        out.append(scipy.sparse.diags(1 / np.maximum(norms, 1e-12)) @ x)
    return out[0].tocsr(), out[1].tocsr()


def tfidf_logistic(train: tuple[list[str], list[str]], test: tuple[list[str], list[str]], c: float = 1.0) -> float:
    """Accuracy of multinomial logistic regression (L2, ``C * sum of losses + |W|^2 / 2``, L-BFGS) on TF-IDF rows."""
    x_train, x_test = _tfidf(train[0], test[0])
    labels = sorted(set(train[1]))
    y = np.asarray([labels.index(v) for v in train[1]])
    v, k = x_train.shape[1], len(labels)
    onehot = np.eye(k)[y]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[: v * k].reshape(v, k), theta[v * k :]
        logits = x_train @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        loss = -c * np.sum(onehot * logp) + 0.5 * np.sum(w * w)
        residual = c * (np.exp(logp) - onehot)  # [N, K]
        grad_w = x_train.T @ residual + w
        return loss, np.concatenate([np.asarray(grad_w).ravel(), residual.sum(axis=0)])

    theta = scipy.optimize.minimize(objective, np.zeros(v * k + k), jac=True, method="L-BFGS-B").x
    w, b = theta[: v * k].reshape(v, k), theta[v * k :]
    predicted = np.argmax(x_test @ w + b, axis=1)
    gold = np.asarray([labels.index(t) if t in labels else -1 for t in test[1]])
    return float(np.mean(predicted == gold))


def _write_tagged(path: Path, data: TaggedSentences) -> Path:
    lines = (
        " ".join(f"{w}/{t}" for w, t in zip(s, g, strict=True)) for s, g in zip(data.sentences, data.tags, strict=False)
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write_texts(path: Path, data: LabelledTexts) -> Path:
    path.write_text("".join(f"{y}\t{' '.join(t)}\n" for t, y in zip(data.texts, data.labels, strict=True)))
    return path


def _options(recipe, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    recipe.add_arguments(parser)
    return parser.parse_args(argv)


def _tagging(name: str, train: TaggedSentences, test: TaggedSentences, folder: Path, argv: list[str]) -> dict:
    data = _write_tagged(folder / f"{name}.txt", train)
    options = _options(tagger_recipe, ["--data", str(data), "--out", str(folder / "t.safetensors"), *argv])
    started = time.perf_counter()
    model, info = tagger_recipe.fit("bilstm-tagger", options, {})
    return {
        "set": name,
        "recipe": "bilstm-tagger",
        "options": argv,
        "train": len(train),
        "test": len(test),
        "baseline": "most frequent tag per word",
        "baseline_accuracy": most_frequent_tag(train, test),
        "accuracy": evaluate_tagger(model, test)["accuracy"],
        **{k: info[k] for k in ("best_dev", "best_epoch", "epochs_run", "epochs", "patience", "history")},
        "minutes": (time.perf_counter() - started) / 60,
    }


def _classify(name: str, train: LabelledTexts, test: LabelledTexts, folder: Path, argv: list[str]) -> dict:
    data = _write_texts(folder / f"{name}.tsv", train)
    options = _options(textcnn_recipe, ["--data", str(data), "--out", str(folder / "c.safetensors"), *argv])
    started = time.perf_counter()
    model, info = textcnn_recipe.fit("textcnn", options, {})
    # scored as `zoo eval` would: the test file read with the model's own tokeniser, as training read --data
    # (the pre-split tokens of `test` would leave "doesn't", "." and the like as unknown words)
    held_out = argparse.Namespace(data=_write_texts(folder / f"{name}-test.tsv", test), encoding="utf-8")
    held_out.text_column = held_out.label_column = None
    texts = lambda d: [" ".join(t) for t in d.texts]
    return {
        "set": name,
        "recipe": "textcnn",
        "options": argv,
        "train": len(train),
        "test": len(test),
        "baseline": "TF-IDF + logistic regression",
        "baseline_accuracy": tfidf_logistic((texts(train), train.labels), (texts(test), test.labels)),
        "accuracy": textcnn_recipe.evaluate(model, held_out)["accuracy"],
        **{k: info[k] for k in ("best_dev", "best_epoch", "epochs_run", "epochs", "patience", "history")},
        "minutes": (time.perf_counter() - started) / 60,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=shared_data(), help="the shared data folder")
    parser.add_argument("--only", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--seed", type=int, default=0, help="both recipes' --seed: initialisation, dev split, order")
    parser.add_argument(
        "--textcnn", default="", metavar="OPTIONS", help='more textcnn options, e.g. --textcnn="--optimizer adadelta"'
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("no shared data folder: pass --data-dir or set ZOO_DATA_DIR")
    common = ["--seed", str(args.seed)] + args.quiet * ["--quiet"]
    tagging, classify = common, common + shlex.split(args.textcnn)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        if "wsj" in args.only:
            wsj = read_tagged(args.data_dir / "tagging" / "wsj-gold-1000.txt")
            rows.append(_tagging("wsj", wsj.subset(range(900)), wsj.subset(range(900, 1000)), folder, tagging))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "history"}), flush=True)
        if "oanc" in args.only:
            oanc = read_tagged(args.data_dir / "tagging" / "oanc-tagged.txt")
            order = np.random.default_rng(0).permutation(len(oanc))
            train, test = oanc.subset(order[:1000].tolist()), oanc.subset(order[1000:3000].tolist())
            rows.append(_tagging("oanc", train, test, folder, tagging))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "history"}), flush=True)
        if "trec" in args.only:
            trec = args.data_dir / "classify" / "trec6.csv"
            from zoo_textcnn.data import read_trec

            train, test = read_trec(trec, lowercase=True)
            rows.append(_classify("trec", train, test, folder, classify))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "history"}), flush=True)
        if "mr" in args.only:
            mr = read_movie_reviews(args.data_dir / "classify" / "movie-review-sentences.tsv")
            order = np.random.default_rng(0).permutation(len(mr))
            train, test = mr.subset(order[:2000].tolist()), mr.subset(order[2000:4000].tolist())
            rows.append(_classify("mr", train, test, folder, classify))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "history"}), flush=True)
    print(f"\n{'set':<6}{'recipe':<15}{'train':>7}{'test':>6}  {'baseline':<30}{'base':>8}{'default':>9}"
          f"{'best dev':>10}  epoch (run / cap)  min")  # fmt: skip
    for r in rows:
        print(
            f"{r['set']:<6}{r['recipe']:<15}{r['train']:>7}{r['test']:>6}  {r['baseline']:<30}"
            f"{r['baseline_accuracy']:>8.2%}{r['accuracy']:>9.2%}{r['best_dev']:>10.2%}"
            f"  {r['best_epoch']:>5} ({r['epochs_run']} / {r['epochs']}){r['minutes']:>10.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(r["accuracy"] > r["baseline_accuracy"] for r in rows) else 1


if __name__ == "__main__":
    run_reporting_conditions(main)
