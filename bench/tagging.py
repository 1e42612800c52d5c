"""Part-of-speech tagging with zoo's bilstm-tagger on OANC; accuracy on held-out OANC and gold WSJ.

    python bench/tagging.py                      # bilstm-tagger (word + char CNN features)
    python bench/tagging.py --model bilstm-tagger+gru --set chars=none

Trains on OANC (20,000 automatically tagged sentences, Penn tags) minus a
held-out test split and a dev split (used to keep the best epoch), then reports
token accuracy on the held-out OANC sentences and on 1,000 WSJ sentences with
gold Penn Treebank tags, with wall time and training tokens/s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from conditions import run_reporting_conditions

import zoo
from zoo.cli.common import parse_overrides
from zoo.data.paths import shared_data
from zoo_tagger.data import read_tagged
from zoo_tagger.recipe import evaluate_tagger, fit

TARGET_OANC = 0.95
PLANK_WSJ = 0.9722  # Plank, Søgaard & Goldberg 2016, bi-LSTM with word + char features, trained on WSJ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=shared_data(), help="the shared data folder")
    parser.add_argument("--model", default="bilstm-tagger")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a hyperparameter")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--held-out", type=int, default=2000, help="OANC sentences held out for the test")
    parser.add_argument("--dev", type=int, default=1000, help="OANC sentences for choosing the epoch")
    parser.add_argument("--train-size", type=int, help="use only this many training sentences")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--out", type=Path, help="save the trained tagger here")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("no shared data folder: pass --data-dir or set ZOO_DATA_DIR")

    oanc = read_tagged(args.data_dir / "tagging" / "oanc-tagged.txt")
    wsj = read_tagged(args.data_dir / "tagging" / "wsj-gold-1000.txt")
    rest, test = oanc.split(args.held_out, seed=args.seed)
    train, dev = rest.split(args.dev, seed=args.seed + 1)
    if args.train_size:
        train = train.subset(range(min(args.train_size, len(train))))
    print(
        f"OANC: {len(train):,} training sentences ({train.num_tokens:,} tokens), {len(dev):,} dev, "
        f"{len(test):,} held out; WSJ gold: {len(wsj):,} sentences",
        flush=True,
    )
    started = time.perf_counter()
    model, info = fit(
        args.model,
        train,
        dev,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        patience=args.patience,
        progress=not args.quiet,
        overrides=parse_overrides(args.set),
    )
    wall = time.perf_counter() - started
    scores = {"oanc": evaluate_tagger(model, test), "wsj": evaluate_tagger(model, wsj)}
    if args.out:
        zoo.save(model, args.out)
    rows = [
        ("held-out OANC", scores["oanc"], f">= {TARGET_OANC:.1%} (target)"),
        ("WSJ gold tags", scores["wsj"], f"{PLANK_WSJ:.2%} (Plank et al. 2016, trained on WSJ)"),
    ]
    print(f"\n{model.spec.name}: {info['epochs_run']} epochs (best {info['best_epoch']}), {wall / 60:.1f} min, ")
    print(f"{info['tokens_per_s']:,.0f} training tokens/s\n")
    print(f"{'test set':<16}{'tokens':>8}{'accuracy':>10}{'OOV acc.':>10}{'OOV rate':>10}  reference")
    for label, s, reference in rows:
        print(
            f"{label:<16}{int(s['tokens']):>8,}{s['accuracy']:>10.2%}{s['oov_accuracy']:>10.2%}"
            f"{s['oov_rate']:>10.1%}  {reference}"
        )
    print(f"ratio held-out OANC / target: {scores['oanc']['accuracy'] / TARGET_OANC:.3f}")
    if args.json:
        args.json.write_text(
            json.dumps({"model": model.spec.name, "wall_s": wall, **info, **scores}, indent=2, default=str)
        )
    return 0 if scores["oanc"]["accuracy"] >= TARGET_OANC else 1


if __name__ == "__main__":
    run_reporting_conditions(main)
