"""Do ELMo features help a tagger? A small biLM pretrained here, then taggers with and without it.

    python bench/elmo_tagging.py --elmo elmo.safetensors            # pretrain, then compare
    python bench/elmo_tagging.py --elmo elmo.safetensors --reuse    # compare with a saved biLM

1. Pretrain zoo's `elmo` (character CNN token layer, 2-layer LSTMP forward and
   backward LMs) on unlabelled text: WikiText-2 (raw, cased) plus the words of
   the OANC training sentences (tags ignored; the held-out sentences are never seen).
2. Train the same `bilstm-tagger` (word + character features) on a small labelled
   OANC sample three ways: without ELMo; with ELMo's static token layer (layer 0:
   one vector per word whatever its context); with ELMo's learned scalar mix of
   all layers (contextual). The biLM stays frozen; only the mix is learned.
3. Report token accuracy on 2,000 held-out OANC sentences and on 1,000 WSJ
   sentences with gold tags (Peters et al. 2018 report +0.3 to +2 points for ELMo
   on tagging-like tasks with full training sets; gains are larger with less data).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np
from conditions import run_reporting_conditions

import zoo
from zoo.cli.common import parse_overrides
from zoo.data.paths import shared_data
from zoo_elmo.data import windows
from zoo_elmo.recipe import fit as fit_elmo
from zoo_tagger.data import read_tagged
from zoo_tagger.recipe import evaluate_tagger
from zoo_tagger.recipe import fit as fit_tagger

ELMO = {
    "projection_size": 128,
    "max_word_length": 16,
    "char_embedding_size": 16,
    "chars.widths": [1, 2, 3, 4, 5],
    "chars.maps": [32, 32, 64, 128, 128],
    "cell.cell_size": 256,
    "dropout": 0.1,
    "sampled_softmax": 1024,
}
_WIKI = {"@-@": "-", "@,@": ",", "@.@": "."}


def wikitext(path: Path, max_tokens: int, window: int) -> list[list[str]]:
    """WikiText raw lines (headings skipped, ``@-@`` joins undone) cut into windows."""
    out: list[list[str]] = []
    seen = 0
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip() or line.strip().startswith("="):
                continue
            tokens = [_WIKI.get(t, t) for t in line.split()]
            for piece in windows(tokens, window):
                out.append(piece)
                seen += len(piece)
            if seen >= max_tokens:
                break
    return out


def pretrain(args, oanc_train) -> tuple[object, dict]:
    corpus = wikitext(args.data_dir / "lm" / "wikitext2.train.raw.gz", args.pretrain_tokens, 40)
    corpus += [list(s) for s in oanc_train.sentences]
    order = np.random.default_rng(args.seed).permutation(len(corpus))
    valid = [corpus[i] for i in order[:500]]
    train = [corpus[i] for i in order[500:]]
    tokens = sum(len(s) for s in train)
    print(
        f"pretraining elmo on {len(train):,} windows ({tokens:,} tokens) for {args.pretrain_steps:,} steps", flush=True
    )
    started = time.perf_counter()
    model, info = fit_elmo(
        "elmo",
        train,
        steps=args.pretrain_steps,
        batch_size=32,
        lr=2e-3,
        seed=args.seed,
        min_count=3,
        max_vocab=args.vocab,
        valid=valid,
        progress=not args.quiet,
        overrides=ELMO,
    )
    zoo.save(model, args.elmo)
    minutes = (time.perf_counter() - started) / 60
    stats = {
        "minutes": minutes,
        "tokens_per_s": info["tokens_per_s"],
        "perplexity_forward": info["perplexity_forward"],
        "perplexity_backward": info["perplexity_backward"],
        "corpus_tokens": tokens,
        "vocab": len(model.vocabs["words"]),
    }
    print(f"pretrained in {minutes:.1f} min: {stats}", flush=True)
    return model, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=shared_data(), help="the shared data folder")
    parser.add_argument("--elmo", type=Path, required=True, help="where the pretrained biLM is written (or read)")
    parser.add_argument("--reuse", action="store_true", help="read --elmo instead of pretraining")
    parser.add_argument("--pretrain-steps", type=int, default=1500)
    parser.add_argument("--pretrain-tokens", type=int, default=2_000_000, help="WikiText-2 tokens to read")
    parser.add_argument("--vocab", type=int, default=10000, help="the biLM's softmax vocabulary")
    parser.add_argument("--train-sentences", type=int, default=1000, help="labelled OANC sentences for the taggers")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a tagger hyperparameter")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.data_dir is None:
        parser.error("no shared data folder: pass --data-dir or set ZOO_DATA_DIR")

    oanc = read_tagged(args.data_dir / "tagging" / "oanc-tagged.txt")
    wsj = read_tagged(args.data_dir / "tagging" / "wsj-gold-1000.txt")
    rest, test = oanc.split(2000, seed=args.seed)  # the same held-out split as bench/tagging.py
    train, dev = rest.split(1000, seed=args.seed + 1)
    if args.reuse:
        elmo, stats = zoo.load(args.elmo), {}
    else:
        elmo, stats = pretrain(args, train)
    labelled = train.subset(range(args.train_sentences))
    print(f"taggers: {len(labelled):,} labelled sentences ({labelled.num_tokens:,} tokens), {len(dev):,} dev")
    overrides = {"max_word_length": elmo.spec["max_word_length"], **parse_overrides(args.set)}
    rows = []
    for label, context, mix in (
        ("no ELMo (word + char features)", None, "scalar"),
        ("+ ELMo layer 0 (static)", elmo, "token"),
        ("+ ELMo scalar mix (contextual)", elmo, "scalar"),
    ):
        started = time.perf_counter()
        model, info = fit_tagger(
            "bilstm-tagger",
            labelled,
            dev,
            epochs=args.epochs,
            batch_size=16,
            lr=2e-3,
            seed=args.seed,
            context=context,
            patience=4,
            progress=not args.quiet,
            overrides={**overrides, "context_mix": mix},
        )
        minutes = (time.perf_counter() - started) / 60
        oanc_scores, wsj_scores = evaluate_tagger(model, test), evaluate_tagger(model, wsj)
        rows.append({"model": label, "oanc": oanc_scores, "wsj": wsj_scores, "minutes": minutes, **info})
        print(f"{label}: OANC {oanc_scores['accuracy']:.2%}, WSJ {wsj_scores['accuracy']:.2%} ({minutes:.1f} min)")
        if mix == "scalar" and context is not None:
            weights = np.exp(model.mix_weights) / np.exp(model.mix_weights).sum()
            print(f"  learned mix s = {np.round(weights, 3).tolist()}, gamma = {float(model.mix_gamma):.3f}")
    base = rows[0]["oanc"]["accuracy"]
    print(f"\n{'tagger':<34}{'OANC acc.':>10}{'OOV acc.':>10}{'WSJ acc.':>10}{'vs none':>9}")
    for row in rows:
        o, w = row["oanc"], row["wsj"]
        gain = (o["accuracy"] - base) * 100
        print(
            f"{row['model']:<34}{o['accuracy']:>10.2%}{o['oov_accuracy']:>10.2%}{w['accuracy']:>10.2%}{gain:>+8.2f}pt"
        )
    if not args.reuse:
        print(f"biLM: {stats['corpus_tokens']:,} tokens, held-out perplexity {stats['perplexity_forward']:.1f} (fwd) / "
              f"{stats['perplexity_backward']:.1f} (bwd), {stats['tokens_per_s']:,.0f} tokens/s, "
              f"{stats['minutes']:.1f} min")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"pretraining": stats, "taggers": rows}, indent=2, default=str))
    return 0 if rows[2]["oanc"]["accuracy"] > rows[1]["oanc"]["accuracy"] > 0 else 1


if __name__ == "__main__":
    run_reporting_conditions(main)
