"""How long counting (and encoding) a corpus takes with 1, 2, ... worker processes.

::

    python bench/counting.py --data-dir ../shared/data                  # en-mix: gzip, one plain file, 4 plain files
    python bench/counting.py --data-dir ../shared/data --workers 1 2 4 --rounds 3 --encode

en-mix is one gzip file, which is counted as one part (a gzip stream cannot be
entered midway); the plain-text copies (written to a temporary folder) are cut
at line ends and shared among the workers. Each figure is the wall time of
``count_tokens(corpus, workers=N)`` (with ``--encode``, also of the word2vec
family's ids file, `zoo_word2vec.stream.encode_parts`), the CPU seconds of this
process and its workers, and the load average before it: on a shared machine
the load says how many cores were free. Every result is checked to equal the
one-worker result (the counts, their order, the ids).
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from conditions import add_rounds_argument, median, run_reporting_conditions

from zoo.data.corpus import build_word_vocab, count_tokens, parts_and_workers
from zoo.data.paths import require_shared_data


def cpu_seconds() -> float:
    """User + system seconds of this process and of its finished children (the workers)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def plain_copies(source: Path, folder: Path, files: int) -> dict[str, str]:
    """The corpora to count: `source` (gzip), one plain-text copy, and `files` plain files of its lines."""
    whole = folder / "en-mix.txt"
    with gzip.open(source, "rb") as packed, open(whole, "wb") as out:
        shutil.copyfileobj(packed, out, 1 << 22)
    lines = whole.read_bytes().splitlines(keepends=True)
    (folder / "split").mkdir()
    for k in range(files):
        chunk = lines[k * len(lines) // files : (k + 1) * len(lines) // files]
        (folder / "split" / f"en-mix-{k:02d}.txt").write_bytes(b"".join(chunk))
    return {"gzip, 1 file": str(source), "plain, 1 file": str(whole), f"plain, {files} files": f"{folder}/split/*.txt"}


def timed(function):
    load, start, cpu = os.getloadavg()[0], time.perf_counter(), cpu_seconds()
    result = function()
    return result, time.perf_counter() - start, cpu_seconds() - cpu, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=None, help="the shared data folder (or ZOO_DATA_DIR)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--files", type=int, default=4, help="plain files to split en-mix into")
    add_rounds_argument(parser)
    parser.add_argument("--encode", action="store_true", help="also time encoding the ids (min_count 5)")
    args = parser.parse_args()
    if args.data_dir is not None:
        os.environ["ZOO_DATA_DIR"] = str(args.data_dir)
    source = require_shared_data("corpus", "en-mix.txt.gz")
    with tempfile.TemporaryDirectory(prefix="zoo-counting-") as folder:
        corpora = plain_copies(source, Path(folder), args.files)
        reference = count_tokens(str(source))
        vocab = build_word_vocab(reference, min_count=5)
        print(f"en-mix: {reference.total():,} words, {len(reference):,} distinct, {len(vocab):,} with min_count 5")
        print(f"{'corpus':<16} {'job':<7} {'workers':>7} {'wall s':>7} {'CPU s':>7} {'load':>5}")
        ids, walls = None, {}
        for _ in range(args.rounds):
            for name, corpus in corpora.items():
                for workers in args.workers:
                    counts, wall, cpu, load = timed(lambda c=corpus, w=workers: count_tokens(c, workers=w))
                    assert counts == reference and list(counts) == list(reference), (name, workers)
                    print(f"{name:<16} {'count':<7} {workers:>7} {wall:7.2f} {cpu:7.2f} {load:5.2f}", flush=True)
                    walls.setdefault((name, "count", workers), []).append((wall, cpu))
                    if args.encode:
                        ids, pool, wall, cpu = encode(corpus, vocab, workers, name, ids)
                        walls.setdefault((name, "encode", pool), []).append((wall, cpu))
        print_medians(walls, args.rounds)


def print_medians(walls: dict[tuple[str, str, int], list[tuple[float, float]]], rounds: int) -> None:
    """Each setting's median wall and CPU seconds over the rounds, and the speed-up of more workers
    over one (the ratio of the medians)."""
    print(f"\nmedians of {rounds} rounds:")
    print(f"{'corpus':<16} {'job':<7} {'workers':>7} {'wall s':>7} {'CPU s':>7} {'speed-up':>9}")
    for (name, job, workers), runs in walls.items():
        wall, cpu = median(w for w, _ in runs), median(c for _, c in runs)
        alone = walls.get((name, job, 1))
        speed = "" if alone is None or workers == 1 else f"{median(w for w, _ in alone) / wall:8.2f}x"
        print(f"{name:<16} {job:<7} {workers:>7} {wall:7.2f} {cpu:7.2f} {speed:>9}")


def encode(corpus: str, vocab, workers: int, name: str, reference: bytes | None) -> tuple[bytes, int, float, float]:
    from zoo_word2vec.stream import encode_parts

    parts, pool = parts_and_workers(corpus, workers)
    encoded, wall, cpu, load = timed(lambda: encode_parts(parts, vocab, workers=pool))
    with encoded:
        data = encoded.path.read_bytes()
    assert reference is None or data == reference, (name, workers)
    print(f"{name:<16} {'encode':<7} {pool:>7} {wall:7.2f} {cpu:7.2f} {load:5.2f}", flush=True)
    return data, pool, wall, cpu


if __name__ == "__main__":
    run_reporting_conditions(main)
