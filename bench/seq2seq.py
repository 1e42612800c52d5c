"""zoo vs PyTorch on the same seq2seq model: training tokens/s, greedy and beam sentences/s.

    python bench/seq2seq.py --rounds 3 # three rounds (the default), sides alternating: medians count
    python bench/seq2seq.py --only zoo # zoo's rounds alone: before/after figures of a change
    python bench/seq2seq.py --side zoo                       # one side, one process, prints JSON

Model (both sides): 1-layer LSTM encoder and decoder, Luong general attention,
embedding 128, hidden 256, vocabulary 1,000, batch 64, source length 20,
Adam 1e-3, PyTorch's default initialisation on both sides. Data: random token
sequences and their reversals (targets end with eos: 21 tokens). Each side
trains `--steps` steps from its own initialisation on the same batches, then decodes the same 640 held-out
sources greedily and with beam search (k=5, alpha=0.6), batches of 64, the
fastest of `--decode-passes` passes over them (one pass lasts about a second).
Compilation is excluded from the rates and reported on its own. PyTorch
runs with ``torch.set_flush_denormal(True)`` (trained weights hold denormals
that slow it otherwise); XLA flushes denormals itself. Each side runs in its
own process (two thread pools in one process distort both). With `--rounds`,
the pair runs that many times, the sides alternating, and each row reports
the median of the rounds' ratios (this machine's speed drifts by tens of
percent over minutes, which a single pair cannot tell from a difference).
The load before and after, the other zoo processes and PyTorch's version and
threads are printed with the figures (`conditions.py`): only a run marked
"quiet" gives the machine's ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from conditions import Conditions, add_rounds_argument, median, peer_line

PAD, BOS, EOS, FIRST = 0, 2, 3, 4


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", choices=["zoo", "torch"], help="run one side only and print its JSON")
    p.add_argument("--data-dir", type=Path, default=None, help="unused: the data is generated")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--embedding", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--length", type=int, default=20)
    p.add_argument("--test-size", type=int, default=640)
    p.add_argument("--decode-passes", type=int, default=3, help="timed passes over the test set: the fastest counts")
    p.add_argument("--beam-size", type=int, default=5)
    p.add_argument("--length-penalty", dest="alpha", type=float, default=0.6, help="beam's length penalty (alpha)")
    p.add_argument("--threads", type=int, default=2, help="PyTorch intra-op threads")
    p.add_argument("--seed", type=int, default=0)
    add_rounds_argument(p)
    p.add_argument("--only", choices=["zoo", "torch"], help="run this side's rounds alone and print its medians")
    p.add_argument("--export", type=Path, help=argparse.SUPPRESS)  # zoo: write the trained weights here
    p.add_argument("--weights", type=Path, help=argparse.SUPPRESS)  # torch: decode these weights
    return p.parse_args(argv)


def make_data(args) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Training batches ``(src [B, L], tgt [B, L+1])`` and test sources ``[N, L]``."""
    rng = np.random.default_rng(args.seed)
    batches = []
    for _ in range(args.steps):
        src = rng.integers(FIRST, args.vocab, (args.batch_size, args.length), dtype=np.int32)
        tgt = np.concatenate([src[:, ::-1], np.full((args.batch_size, 1), EOS, np.int32)], axis=1)
        batches.append((src, tgt))
    test = rng.integers(FIRST, args.vocab, (args.test_size, args.length), dtype=np.int32)
    return batches, test


def run_zoo(args, batches, test) -> dict:
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax

    from zoo.building.builder import build
    from zoo.training.trainer import make_step

    model = build(
        "seq2seq+luong-general",
        key=jax.random.key(args.seed),
        src_vocab_size=args.vocab,
        tgt_vocab_size=args.vocab,
        embedding_size=args.embedding,
        hidden_size=args.hidden,
        # PyTorch's initialisation (embeddings N(0, 1), LSTM weights U(+-1/sqrt(hidden))) rather than
        # Luong's U(-0.1, 0.1): both sides then learn the task alike and decode outputs of equal length
        **{"strategy.max_length": args.length + 1, "embedder.init_scale": None, "cell.init_scale": None},
    )
    optimizer = optax.adam(1e-3)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))
    step = make_step(type(model).loss, optimizer, [0])
    bad, timings, losses = jnp.int32(-1), [], []
    for i, (src, tgt) in enumerate(batches):
        batch = {"src": src, "src_mask": src != PAD, "tgt": tgt, "tgt_mask": tgt != PAD}
        started = time.perf_counter()
        model, opt_state, loss, _, bad = step(model, opt_state, batch, None, jax.random.key(i), bad, jnp.int32(i))
        loss.block_until_ready()
        timings.append(time.perf_counter() - started)
        losses.append(loss)
    result = {
        "loss_first": float(losses[args.warmup_steps]),
        "loss_last": float(losses[-1]),
        "train_compile_s": timings[0],
        "train_tokens_per_s": batches[0][1].size / float(np.median(timings[args.warmup_steps :])),
    }
    if args.export is not None:
        export_weights(model, args.export)
    greedy = lambda s: model.decode(s, strategy="greedy", max_length=args.length + 1)
    beam = lambda s: model.decode(
        s, strategy="beam", beam_size=args.beam_size, alpha=args.alpha, max_length=args.length + 1
    )
    result.update(_decode_speed(greedy, test, args, "greedy"))
    result.update(_decode_speed(beam, test, args, "beam"))
    return result


def export_weights(model, path: Path) -> None:
    """The trained zoo model's parameters under PyTorch's names (`seq2seq_torch.Seq2Seq`), so the
    PyTorch side decodes the very same model: ``nn.LSTM`` keeps ``[4h, in]`` weights (zoo ``[in, 4h]``,
    the same gate order i, f, g, o) and two biases, and has no forget bias (zoo adds one to f)."""
    decoder = model.decoder
    weights = {
        "src_embedding.weight": model.src_embedder.weight,
        "tgt_embedding.weight": decoder.embedder.weight,
        "attention.weight": decoder.attention.weight,
        "bridge_h.weight": decoder.bridge[0].weight,
        "bridge_h.bias": decoder.bridge[0].bias,
        "bridge_c.weight": decoder.bridge[1].weight,
        "bridge_c.bias": decoder.bridge[1].bias,
        "combine.weight": decoder.combine.weight,
        "combine.bias": decoder.combine.bias,
        "output.weight": decoder.output.weight,
        "output.bias": decoder.output.bias,
    }
    for name, cell in (("encoder", model.encoder.forward[0]), ("decoder", decoder.cells[0])):
        bias = np.array(cell.bias)
        hidden = cell.hidden_size
        bias[hidden : 2 * hidden] += cell.forget_bias
        weights[f"{name}.weight_ih_l0"] = np.asarray(cell.weight_x).T
        weights[f"{name}.weight_hh_l0"] = np.asarray(cell.weight_h).T
        weights[f"{name}.bias_ih_l0"] = bias
        weights[f"{name}.bias_hh_l0"] = np.zeros_like(bias)
    np.savez(path, **{name: np.asarray(value, np.float32) for name, value in weights.items()})


def same_outputs(zoo: dict, torch: dict, label: str) -> float:
    """The share of test sentences both sides decoded to the same tokens (the same trained model)."""
    a, b = np.asarray(zoo[f"{label}_tokens"]), np.asarray(torch[f"{label}_tokens"])
    width = max(a.shape[1], b.shape[1])
    a, b = (np.pad(x, ((0, 0), (0, width - x.shape[1]))) for x in (a, b))
    return float(np.mean(np.all(a == b, axis=1)))


def _decode_speed(fn, test, args, label) -> dict:
    import jax

    started = time.perf_counter()
    jax.block_until_ready(fn(test[: args.batch_size]))
    compile_s = time.perf_counter() - started
    seconds = float("inf")
    for _ in range(args.decode_passes):
        started = time.perf_counter()
        batches = range(0, len(test), args.batch_size)
        outputs = [jax.block_until_ready(fn(test[i : i + args.batch_size])) for i in batches]
        seconds = min(seconds, time.perf_counter() - started)
    lengths = np.concatenate([np.asarray(o.lengths[:, 0]) for o in outputs])
    tokens = np.concatenate([np.asarray(o.tokens[:, 0]) for o in outputs])
    return {
        f"{label}_compile_s": compile_s,
        f"{label}_sentences_per_s": len(test) / seconds,
        f"{label}_mean_length": float(np.mean(lengths)),
        f"{label}_exact": exact_match(tokens, test),
        f"{label}_tokens": np.where(np.arange(tokens.shape[1]) < lengths[:, None], tokens, PAD).tolist(),
    }


def exact_match(tokens: np.ndarray, test: np.ndarray) -> float:
    """The share of outputs ``[N, <= L+1]`` that are their source reversed, then eos (the task's answer)."""
    n, length = test.shape
    padded = np.full((n, length + 1), PAD, np.int64)
    padded[:, : min(tokens.shape[1], length + 1)] = tokens[:, : length + 1]
    answer = np.concatenate([test[:, ::-1], np.full((n, 1), EOS)], axis=1)
    return float(np.mean(np.all(padded == answer, axis=1)))


def run_side(args) -> dict:
    batches, test = make_data(args)
    if args.side == "zoo":
        return run_zoo(args, batches, test)
    sys.path.insert(0, str(Path(__file__).parent))
    from seq2seq_torch import run

    return run(args, batches, test)


def _run_side(side: str, weights: Path) -> dict:
    """One side in its own process; zoo writes its trained weights to `weights`, which the PyTorch
    side then decodes (it trains its own model for the training rate, then decodes zoo's)."""
    flag = ["--export", str(weights)] if side == "zoo" else (["--weights", str(weights)] if weights.exists() else [])
    command = [sys.executable, __file__, "--side", side, *sys.argv[1:], *flag]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the {side} side failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args()
    if args.side is not None:
        print(json.dumps(run_side(args)))
        return
    rows = [
        ("training (target tokens/s)", "train_tokens_per_s"),
        ("greedy (sentences/s)", "greedy_sentences_per_s"),
        (f"beam {args.beam_size} (sentences/s)", "beam_sentences_per_s"),
    ]
    conditions = Conditions(stream=sys.stdout).start()
    folder = tempfile.TemporaryDirectory(prefix="zoo-seq2seq-")
    weights = Path(folder.name) / "zoo-trained.npz"
    if args.only != "zoo":
        print(peer_line("torch", args.threads))
    if args.only is not None:
        rounds = [{args.only: _run_side(args.only, weights)} for _ in range(args.rounds)]
        print(f"{'':30s}{args.only:>12s}   rounds")
        for label, key in rows:
            values = [r[args.only][key] for r in rounds]
            print(f"{label:30s}{median(values):12,.0f}   " + " / ".join(f"{v:,.0f}" for v in values))
        side = args.only
    else:
        order = lambda i: ("zoo", "torch") if i % 2 == 0 else ("torch", "zoo")  # zoo's weights first
        rounds = [{s: _run_side(s, weights) for s in order(i)} for i in range(args.rounds)]
        print(f"{'round':30s}" + "".join(f"{i + 1:>10d}" for i in range(args.rounds)))
        for label, key in rows:
            ratios = [r["zoo"][key] / r["torch"][key] for r in rounds]
            print(f"{label:30s}" + "".join(f"{x:9.2f}x" for x in ratios))
        print()
        print(f"{'':30s}{'PyTorch':>12s}{'zoo':>12s}{'zoo/PyTorch':>14s}")
        for label, key in rows:
            ratios = [r["zoo"][key] / r["torch"][key] for r in rounds]
            t = median(r["torch"][key] for r in rounds)
            z = median(r["zoo"][key] for r in rounds)
            print(f"{label:30s}{t:12,.0f}{z:12,.0f}{median(ratios):13.2f}x")
        side = None
    if side != "torch":
        z = rounds[0]["zoo"]
        print(
            f"zoo compilation: train {z['train_compile_s']:.1f}s, greedy {z['greedy_compile_s']:.1f}s, "
            f"beam {z['beam_compile_s']:.1f}s"
        )
    for name in ("torch", "zoo") if side is None else (side,):
        r = rounds[0][name]
        print(f"{name}: training loss {r['loss_first']:.3f} -> {r['loss_last']:.3f}")
    for name in ("torch", "zoo") if side is None else (side,):
        r = rounds[0][name]
        print(
            f"{name} decoding {'its own' if name == 'torch' and not r.get('decoded_zoo') else 'zoo'}'s trained "
            f"model: mean output length greedy {r['greedy_mean_length']:.2f}, beam {r['beam_mean_length']:.2f}; "
            f"exact match greedy {r['greedy_exact']:.1%}, beam {r['beam_exact']:.1%}"
        )
    if side is None:
        same = {label: [same_outputs(r["zoo"], r["torch"], label) for r in rounds] for label in ("greedy", "beam")}
        print(
            "the same outputs (both sides decoding zoo's trained model): "
            + ", ".join(f"{label} {min(v):.1%} of the sentences" for label, v in same.items())
        )
    folder.cleanup()
    conditions.finish()


if __name__ == "__main__":
    main()
