"""One table of zoo's figures on whatever accelerator JAX sees, beside PyTorch's where it runs.

    python bench/device_check.py               # the full check (about 6 minutes on one GPU)
    python bench/device_check.py --smoke       # tiny data and few steps: the script works (CPU, seconds)

Rows, each from its own benchmark in its own process, one after the other:

- word2vec skip-gram with the JAX runner on en-mix, one epoch (`bench/embeddings.py
  --backend jax`): words/s and Google-analogy accuracy;
- the seq2seq benchmark (`bench/seq2seq.py --side ...`): training target tokens/s,
  greedy and beam-5 sentences/s, for zoo and, when torch imports, PyTorch;
- lstm-lm on Penn Treebank (`bench/lstm_throughput.py --side ...`): training tokens/s,
  for zoo and PyTorch.

`--smoke` writes a tiny corpus, analogy and similarity files and a tiny treebank into a
temporary folder and runs every row on them with a few steps, so the suite can check
the script end to end without data or an accelerator. A row whose benchmark fails is
printed as failed with the last line of its error, and the other rows still run.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conditions import run_reporting_conditions

BENCH = Path(__file__).resolve().parent


def _run(argv: list[str], timeout: float) -> tuple[list[dict], str | None]:
    """Run a benchmark; its JSON lines on stdout, or the error's last line."""
    try:
        done = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=timeout, cwd=BENCH.parent, check=False
        )
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout:.0f} s"
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):  # a line of a progress bar, say
                rows.append(json.loads(line))
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()[-1]
        return rows, tail
    return rows, None


def _torch_available() -> bool:
    probe = "import torch; print(torch.__version__)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False).returncode == 0


def write_smoke_data(root: Path, *, seed: int = 0) -> None:
    """A corpus, analogy and similarity files and a treebank, small and in the shared data's layout."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)]
    (root / "corpus").mkdir(parents=True)
    with gzip.open(root / "corpus" / "tiny.txt.gz", "wt", encoding="utf-8") as out:
        for _ in range(400):
            out.write(" ".join(rng.choice(words[:30]) if rng.random() < 0.7 else rng.choice(words) for _ in range(12)))
            out.write("\n")
    emb = root / "embeddings"
    emb.mkdir()
    questions = [": tiny"] + [" ".join(rng.sample(words[:30], 4)) for _ in range(20)]
    (emb / "questions-words.txt").write_text("\n".join(questions) + "\n", encoding="utf-8")
    pairs = [f"{a}\t{b}\t{rng.uniform(0, 10):.2f}" for a, b in (rng.sample(words[:30], 2) for _ in range(20))]
    for name in ("wordsim353.tsv", "simlex999.txt"):
        (emb / name).write_text("# Word 1\tWord 2\tHuman (mean)\n" + "\n".join(pairs) + "\n", encoding="utf-8")
    (root / "lm").mkdir()
    text = [" ".join(rng.choice(words) for _ in range(20)) for _ in range(300)]
    (root / "lm" / "ptb.train.txt").write_text("\n".join(text) + "\n", encoding="utf-8")


def rows_for(
    args: argparse.Namespace, data: Path | None, torch: bool
) -> list[tuple[str, str, dict | None, str | None]]:
    """``(benchmark, side, result, error)`` for every row."""
    smoke = args.smoke
    found: list[tuple[str, str, dict | None, str | None]] = []

    embed = ["bench/embeddings.py", "--models", "skipgram", "--zoo-only", "--backend", "jax", "--epochs", "1"]
    if data is not None:
        embed += ["--data-dir", str(data)]
    if smoke:
        embed += ["--corpus", "corpus/tiny.txt.gz", "--min-count", "1", "--dim", "16"]
    results, error = _run(embed, args.timeout)
    found.append(("word2vec skip-gram (JAX runner)", "zoo", results[-1] if results else None, error))

    seq2seq = ["bench/seq2seq.py"] + (["--steps", "8", "--warmup-steps", "2", "--test-size", "64"] if smoke else [])
    if smoke:
        seq2seq += ["--vocab", "50", "--embedding", "16", "--hidden", "32", "--decode-passes", "1"]
    for side in ["zoo", *(["torch"] if torch else [])]:
        results, error = _run([*seq2seq, "--side", side], args.timeout)
        found.append(("seq2seq LSTM + Luong", side, results[-1] if results else None, error))

    lstm = ["bench/lstm_throughput.py"] + (
        ["--steps", "4", "--warmup", "1", "--hidden", "16", "--batch-size", "4", "--unroll", "8"] if smoke else []
    )
    if data is not None:
        lstm += ["--data-dir", str(data)]
    for side in ["zoo", *(["torch"] if torch else [])]:
        results, error = _run([*lstm, "--side", side], args.timeout)
        found.append(("lstm-lm 2 x 200", side, results[-1] if results else None, error))
    return found


def print_table(found: list[tuple[str, str, dict | None, str | None]], device: str) -> None:
    print(f"device: {device}")
    head = f"{'benchmark':<34}{'side':<7}{'figures'}"
    print(head)
    print("-" * 100)
    for name, side, result, error in found:
        if result is None:
            print(f"{name:<34}{side:<7}failed: {error}")
            continue
        if "words_per_s" in result:
            figures = (
                f"{result['words_per_s']:,.0f} words/s, analogy {result['analogy']:.2f}% ({result['covered']} covered)"
            )
        elif "train_tokens_per_s" in result:
            figures = (
                f"train {result['train_tokens_per_s']:,.0f} tokens/s, greedy {result['greedy_sentences_per_s']:,.0f}"
                f" sentences/s, beam {result['beam_sentences_per_s']:,.0f} sentences/s"
            )
        else:
            figures = f"train {result['tokens_per_s']:,.0f} tokens/s"
        print(f"{name:<34}{side:<7}{figures}" + (f"  (then failed: {error})" if error else ""))


def _device() -> str:
    probe = "import jax; d = jax.devices()[0]; print(f'{d.platform}: {d.device_kind} x{jax.device_count()}')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    return done.stdout.strip() or f"unknown ({done.stderr.strip().splitlines()[-1:]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny data and few steps: check the script works")
    parser.add_argument("--data-dir", type=Path, default=None, help="the shared data folder (default: zoo's locator)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds each benchmark may take")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch's rows out")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    torch = not args.no_torch and _torch_available()
    with tempfile.TemporaryDirectory(prefix="zoo-device-check-") as tmp:
        data = args.data_dir
        if args.smoke:
            data = Path(tmp)
            write_smoke_data(data)
        found = rows_for(args, data, torch)
    print_table(found, _device())
    print(
        f"\n{time.perf_counter() - start:.0f} s in all; PyTorch rows {'included' if torch else 'left out (no torch)'}"
    )
    return 0 if all(result is not None and error is None for _, _, result, error in found) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    run_reporting_conditions(main)
