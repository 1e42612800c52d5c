"""Every reader and every recipe against the same hostile inputs.

A surface added later joins `READERS` or `RECIPES` and is held to the same standard from its
first commit: each hostile case ends in a `ZooError` (a recipe: status 2 and no traceback),
or a result, within 2 s and without allocating out of proportion (here: under 64 MB traced).
Where an input can never be right (a FIFO, a device, a directory, an empty or truncated file,
a header claiming sizes the file cannot hold), the reader must refuse it.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import time
import tracemalloc

import numpy as np
import pytest

import zoo
from zoo.building.hub import hub_file
from zoo.building.intake import import_file
from zoo.building.store import Store
from zoo.cli.main import main
from zoo.data.textfile import read_lines
from zoo.errors import ZooError
from zoo.eval.similarity import read_word_pairs
from zoo.vectors import KeyedVectors
from zoo.vectors.formats import read_word2vec
from zoo_word2vec.classifier.data import read_labelled
from zoo_word2vec.fasttext_files.bin import read_fasttext_bin

SECONDS, PEAK = 2.0, 64 << 20


def _fasttext(word: bytes = b"hello", minn: int = 3, maxn: int = 6, bucket: int = 100, dim: int = 2) -> bytes:
    head = struct.pack("<2i", 793712314, 12) + struct.pack(
        "<12id", dim, 5, 5, 1, 5, 1, 2, 2, bucket, minn, maxn, 100, 1e-4
    )
    entry = struct.pack("<3i2q", 1, 1, 0, 10, -1) + word + b"\0" + struct.pack("<qb", 1, 0)
    rows = np.full((1 + bucket) * dim, 0.5, "<f4").tobytes()
    return (
        head
        + entry
        + b"\0"
        + struct.pack("<2q", 1 + bucket, dim)
        + rows
        + b"\0"
        + struct.pack("<2q", 1, dim)
        + b"\0" * 4 * dim
    )


def _fifo(path):
    os.mkfifo(path)


CASES = {  # name -> (build(path), whether every reader must refuse it)
    "fifo": (_fifo, True),
    "directory": (lambda p: p.mkdir(), True),
    "device": (lambda p: p.symlink_to("/dev/zero"), True),
    "link to a fifo": (lambda p: (_fifo(p.with_name("real-fifo")), p.symlink_to(p.with_name("real-fifo"))), True),
    "empty": (lambda p: p.write_bytes(b""), False),  # a line reader reads no lines; the others refuse it
    "missing": (lambda p: None, True),
    "random bytes": (lambda p: p.write_bytes(np.random.default_rng(0).bytes(5000)), False),
    "nul bytes": (lambda p: p.write_bytes(b"\0" * 5000), False),
    "huge header": (lambda p: p.write_text("1000000000 1000000000\nword 0.1 0.2\n"), False),
    "huge dimension": (lambda p: p.write_text("1 1000000000\nword 0.1 0.2 0.3\n"), False),
    "non-finite": (lambda p: p.write_text("2 2\nalpha nan 1\nbeta 1e39 0\n"), False),
    "crafted fasttext": (lambda p: p.write_bytes(_fasttext(b"a" * 3000, 1, 3000, 1000, 1)), False),
    "truncated fasttext": (lambda p: p.write_bytes(_fasttext()[:-7]), False),
    "damaged gzip": (lambda p: p.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 200), False),
    "long line": (lambda p: p.write_bytes(b"a" * (3 << 20)), False),
    "control characters": (lambda p: p.write_text("\x1b[2J\x07word\t\x1b]0;x\x07\n"), False),
}

READERS = {
    "KeyedVectors.load": lambda p: KeyedVectors.load(p),
    "read_word2vec": lambda p: read_word2vec(p),
    "read_word2vec binary": lambda p: read_word2vec(p, binary=True),
    "read_fasttext_bin": lambda p: read_fasttext_bin(p),
    "zoo.load": lambda p: zoo.load(p),
    "read_lines": lambda p: list(read_lines(p)),
    "read_labelled": lambda p: read_labelled(p),
    "read_word_pairs": lambda p: read_word_pairs(p),
    "zoo import": lambda p: import_file(p, "hostile.v1", store=Store(p.parent / "store")),
}

RECIPES = {
    "word2vec-skipgram": ["--data", "{path}", "--min-count", "1"],
    "fasttext-classifier": ["--data", "{path}"],
    "seq2seq": ["--data", "{path}"],
    "glove": ["--data", "{path}", "--min-count", "1"],
    "textcnn": ["--data", "{path}"],
    "bilstm-tagger": ["--data", "{path}"],
}


@contextlib.contextmanager
def bounded():
    tracemalloc.start()
    started = time.perf_counter()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - started < SECONDS
    assert peak < PEAK, f"{peak / 1e6:.0f} MB traced"


def _make(tmp_path, case):
    if case in ("fifo", "link to a fifo") and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "input.txt"
    CASES[case][0](path)
    return path


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_refuses_hostile_input_clearly_quickly_and_small(tmp_path, monkeypatch, reader, case):
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    path = _make(tmp_path, case)
    refused = False
    with bounded():
        try:
            READERS[reader](path)
        except ZooError as error:
            assert str(error), "a ZooError says what is wrong"
            refused = True
    assert refused or not CASES[case][1], f"{reader} accepted {case}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", ["fifo", "device", "directory", "empty", "random bytes", "nul bytes", "missing"])
@pytest.mark.parametrize("recipe", list(RECIPES))
def test_every_recipe_refuses_hostile_data_with_a_clear_error(tmp_path, recipe, case):
    path = _make(tmp_path, case)
    argv = ["train", recipe, *(a.format(path=path) for a in RECIPES[recipe]), "--out", str(tmp_path / "m.safetensors")]
    err = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:  # argparse's own refusals
            status = int(stop.code or 0)
    assert time.perf_counter() - started < 10  # some recipes count a corpus first
    assert status != 0 and "Traceback" not in err.getvalue(), err.getvalue()


def test_the_store_and_the_hub_cache_refuse_hostile_files(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "x.y.safetensors").symlink_to("/dev/zero")
    store = Store(home)
    with bounded():
        assert "x.y" not in store.entries()
        with pytest.raises(ZooError, match="not a regular file|symbolic link"):
            store.find("x.y")
    hub = tmp_path / "hub" / "models--o--r" / "refs"
    hub.mkdir(parents=True)
    (hub / "main").symlink_to("/dev/zero")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with bounded(), pytest.raises(ZooError, match="character device"):
        hub_file("hf://o/r/f.txt")


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    folder = tmp_path_factory.mktemp("classifier")
    data = folder / "train.txt"
    data.write_text("__label__a good film\n__label__b bad film\n" * 5)
    out = folder / "c.safetensors"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["train", "fasttext-classifier", "--data", str(data), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", ["fifo", "device", "directory", "missing", "random bytes", "nul bytes", "long line"])
def test_zoo_eval_refuses_hostile_data_with_a_clear_error(tmp_path, classifier, case):
    path = _make(tmp_path, case)
    err = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(["eval", str(classifier), "--data", str(path)])
        except SystemExit as stop:
            status = int(stop.code or 0)
    assert time.perf_counter() - started < SECONDS
    assert status != 0 and "Traceback" not in err.getvalue(), err.getvalue()
