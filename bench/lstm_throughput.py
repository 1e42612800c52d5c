"""Training throughput of lstm-lm (2 x 200, batch 20, unroll 35) in zoo vs PyTorch.

Both sides train the same model on the same Penn Treebank stream with the
same recipe (SGD, loss summed over the unroll, gradient norm clipped to 5,
hidden state carried across batches) and report target tokens per second
after a warm-up (compilation excluded). Each side runs in its own process,
back to back, so their thread pools do not compete.

    python bench/lstm_throughput.py                 # both sides, 3 rounds (--rounds), medians
    python bench/lstm_throughput.py --side zoo      # one side, JSON on stdout
    python bench/lstm_throughput.py --huge-pages    # both sides with glibc.malloc.hugetlb=1

PyTorch is the optional ``bench`` extra: ``pip install torch==2.14.1``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from conditions import add_rounds_argument, median, peer_line, run_reporting_conditions


def default_data_dir() -> Path:
    return Path(os.environ.get("ZOO_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def load_stream(data_dir: Path, vocab_size: int | None) -> tuple[np.ndarray, int]:
    """PTB training ids (words + end-of-sentence), or a random stream if PTB is absent.

    With `vocab_size`, ids are folded into that many classes (``id % vocab_size``):
    a small vocabulary shows the recurrent part's speed, PTB's 10k the softmax's.
    """
    path = data_dir / "lm" / "ptb.train.txt"
    if not path.exists():
        print(f"{path} not found: timing on random ids", file=sys.stderr)
        size = vocab_size or 10000
        return np.random.default_rng(0).integers(0, size, 300_000).astype(np.int32), size
    from zoo_lm.recipe import build_vocab
    from zoo_lm.stream import read_tokens

    tokens = read_tokens(path, "word")
    vocab = build_vocab(tokens, "word")
    ids = vocab.encode(tokens)
    if vocab_size:
        return (ids % vocab_size).astype(np.int32), vocab_size
    return ids, len(vocab)


def run_zoo(args: argparse.Namespace) -> dict:
    import jax

    import zoo
    from zoo.training.trainer import train
    from zoo_lm.recipe import zaremba_sgd
    from zoo_lm.stream import StreamBatches

    ids, vocab_size = load_stream(args.data_dir, args.vocab_size)
    size = {"hidden_size": args.hidden, "embedding_size": args.hidden}
    model = zoo.build("lstm-lm-small", key=jax.random.key(0), vocab_size=vocab_size, **size)
    data = StreamBatches(ids, batch_size=args.batch_size, unroll=args.unroll)
    optimizer = zaremba_sgd(1.0, steps_per_epoch=data.batches_per_epoch(), unroll=args.unroll)
    result = train(
        model,
        data,
        steps=args.warmup + args.steps,
        key=jax.random.key(1),
        optimizer=optimizer,
        carry=model.initial_carry(args.batch_size),
        units="mask",
        log_every=args.warmup,
        progress=False,
    )
    timed = [r for r in result.history if "units_per_s" in r][1:]
    rate = float(np.mean([r["units_per_s"] for r in timed]))
    loss = result.history[-1]["loss"]
    if args.profile:
        from xla_ops import profile_ops

        carry = result.carry  # the step donates its carry: each run gets a copy
        again = lambda: (
            train(
                result.model,
                data,
                steps=5,
                key=jax.random.key(2),
                optimizer=optimizer,
                carry=jax.tree.map(jax.numpy.copy, carry),
                progress=False,
            ).model
        )
        print(f"zoo: 5 training steps, XLA operations by time\n{profile_ops(again, calls=2)}", file=sys.stderr)
    return {"side": "zoo", "tokens_per_s": rate, "loss": loss, "compilations": result.compilations}


def run_torch(args: argparse.Namespace) -> dict:
    import torch
    from torch import nn

    torch.manual_seed(0)
    ids, vocab_size = load_stream(args.data_dir, args.vocab_size)
    hidden, batch, unroll = args.hidden, args.batch_size, args.unroll

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, hidden)
            self.lstm = nn.LSTM(hidden, hidden, num_layers=2)
            self.output = nn.Linear(hidden, vocab_size)
            for p in self.parameters():
                nn.init.uniform_(p, -0.1, 0.1)

        def forward(self, x, state):
            out, state = self.lstm(self.embedding(x), state)
            return self.output(out), state

    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    columns = len(ids) // batch
    rows = torch.from_numpy(ids[: batch * columns].reshape(batch, columns).T.copy()).long()  # [time, batch]
    state = (torch.zeros(2, batch, hidden), torch.zeros(2, batch, hidden))
    loss_fn = nn.CrossEntropyLoss()

    def step(i: int, state):
        start = (i * unroll) % (columns - unroll - 1)
        x, y = rows[start : start + unroll], rows[start + 1 : start + 1 + unroll]
        state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = loss_fn(logits.reshape(-1, vocab_size), y.reshape(-1)) * unroll  # summed over time
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        return state, loss

    for i in range(args.warmup):
        state, loss = step(i, state)
    started = time.perf_counter()
    for i in range(args.warmup, args.warmup + args.steps):
        state, loss = step(i, state)
    elapsed = time.perf_counter() - started
    return {
        "side": "torch",
        "tokens_per_s": args.steps * batch * unroll / elapsed,
        "loss": float(loss) / unroll,
        "threads": torch.get_num_threads(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=["zoo", "torch", "both"], default="both")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--steps", type=int, default=200, help="timed steps")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps (compilation)")
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--unroll", type=int, default=35)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--vocab-size", type=int, default=None, help="fold PTB ids into this many classes")
    add_rounds_argument(parser)
    parser.add_argument("--repeats", dest="rounds", type=int, help=argparse.SUPPRESS)  # the old name of --rounds
    parser.add_argument("--profile", action="store_true", help="zoo: print the step's XLA operations by time")
    parser.add_argument(
        "--huge-pages",
        action="store_true",
        help="run both sides with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (large blocks fault in 2 MiB pages)",
    )
    args = parser.parse_args()
    if args.side == "zoo":
        print(json.dumps(run_zoo(args)))
        return 0
    if args.side == "torch":
        print(json.dumps(run_torch(args)))
        return 0
    rates: dict[str, list[float]] = {"zoo": [], "torch": []}
    threads = None
    passthrough = [a for a in sys.argv[1:] if not a.startswith("--side") and a not in ("zoo", "torch", "both")]
    env = dict(os.environ)
    if args.huge_pages:
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [env.get("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1"]))
    for i in range(args.rounds):
        for side in ("zoo", "torch") if i % 2 == 0 else ("torch", "zoo"):
            out = subprocess.run(
                [sys.executable, __file__, "--side", side, *passthrough],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            rates[side].append(result["tokens_per_s"])
            threads = result.get("threads", threads)
            if args.profile and "XLA operations" in out.stderr:
                print(out.stderr[out.stderr.index("zoo: ") :], file=sys.stderr)
    zoo_rate, torch_rate = median(rates["zoo"]), median(rates["torch"])
    ratios = [z / t for z, t in zip(rates["zoo"], rates["torch"], strict=True)]
    vocab = f"vocabulary {args.vocab_size}" if args.vocab_size else "PTB vocabulary (10,002)"
    shape = f"lstm-lm 2 x {args.hidden}, batch {args.batch_size}, unroll {args.unroll}"
    pages = ", glibc.malloc.hugetlb=1" if args.huge_pages else ""
    print(peer_line("torch", threads))
    print(f"{shape}, {vocab}, {args.steps} timed steps, median of {args.rounds} rounds (sides alternating){pages}")
    print(f"{'side':8s} {'tokens/s':>10s}")
    print(f"{'zoo':8s} {zoo_rate:10.0f}")
    print(f"{'torch':8s} {torch_rate:10.0f}")
    print(f"ratio zoo / torch: {median(ratios):.2f} (median of the rounds: {' / '.join(f'{r:.2f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    run_reporting_conditions(main)
