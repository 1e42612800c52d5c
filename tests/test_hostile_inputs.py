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
from zoo.budget import memory_limit
from zoo.building.hub import hub_file
from zoo.building.intake import import_file
from zoo.building.store import Store
from zoo.cli.main import main
from zoo.data.textfile import read_lines
from zoo.errors import ZooError
from zoo.eval.similarity import read_word_pairs
from zoo.training.progress import read_log
from zoo.vectors import KeyedVectors
from zoo.vectors.formats import read_word2vec
from zoo_tagger.data import read_tagged
from zoo_word2vec.classifier.data import read_labelled
from zoo_word2vec.fasttext_files.bin import read_fasttext_bin
from zoo_word2vec.gensim_api.corpora import LineSentence, Text8Corpus
from zoo_word2vec.gensim_api.word2vec import Word2Vec

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
    "Word2Vec.load": lambda p: Word2Vec.load(p),
    "read_log": lambda p: read_log(p),
    "word counts (fvocab)": lambda p: KeyedVectors.load_word2vec_format(_good_vectors(p), fvocab=p),
    "LineSentence": lambda p: list(LineSentence(p)),
    "Text8Corpus": lambda p: list(Text8Corpus(p)),
    "LineSentence bz2": lambda p: list(LineSentence(_renamed(p, ".bz2"))),
    "read_tagged": lambda p: read_tagged(p),
}


def _renamed(path, suffix):
    """`path` under a name ending in `suffix` (a link to it: a FIFO or a device stays one)."""
    other = path.with_name(path.name + suffix)
    if os.path.lexists(path):
        other.symlink_to(path)
    return other


def _good_vectors(beside):
    path = beside.with_name("good.txt")
    path.write_text("2 2\ncat 1 0\ndog 0 1\n")
    return path


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


@pytest.mark.parametrize("binary", [None, True])
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("cat 0x10 0.2 0.3", "'0x10' is not a number"),
        ("cat 1,5 0.2 0.3", "'1,5' is not a number"),
        ("cat 0.1  0.3", "'' is not a number"),
        ("cat\t0.1\t0.2\t0.3", "has 0 values"),
    ],
)
def test_a_damaged_text_vectors_file_is_never_read_as_binary(tmp_path, line, message, binary):
    """Taken for binary, such a file gave values like 1e-19 without a word of warning."""
    path = tmp_path / "v.txt"
    path.write_text(f"2 3\n{line}\ndog 0.3 0.4 0.5\n")
    expected = message if binary is None else "read as binary, but it is a text file"
    with pytest.raises(ZooError, match=expected):
        read_word2vec(path, binary=binary)


@pytest.mark.parametrize("counts", ["cat \u00b2\n", f"cat {10**30}\n", "cat -3\n", "cat\n"])
def test_a_bad_word_count_names_its_line(tmp_path, counts):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text(counts)
    with pytest.raises(ZooError, match=r"line 1 should be 'word count'"):
        KeyedVectors.load_word2vec_format(_good_vectors(vocab), fvocab=vocab)


@pytest.mark.parametrize(
    "arguments",
    [{"limit": -1}, {"limit": 1.5}, {"limit": "3"}, {"encoding": "no-such-codec"}, {"unicode_errors": "no-such"}],
)
def test_vector_reading_options_from_outside_are_checked(tmp_path, arguments):
    """``limit=-1`` read no vectors from a text file and dropped the last word of a zoo file."""
    path = _good_vectors(tmp_path / "x")
    with pytest.raises(ZooError, match="limit=|encoding|errors="):
        KeyedVectors.load_word2vec_format(path, **arguments)
    if "limit" in arguments:
        kept = tmp_path / "kept.safetensors"
        KeyedVectors.load(path).save(kept)
        with pytest.raises(ZooError, match="limit="):
            KeyedVectors.load(kept, **arguments)


def test_an_unknown_encoding_is_refused_by_every_recipe_parser(tmp_path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
        main(["train", "word2vec-skipgram", "--data", str(_good_vectors(tmp_path / "x")), "--encoding", "bogus-codec",
              "--out", str(tmp_path / "m.safetensors")])  # fmt: skip
    assert stop.value.code == 2 and "unknown text encoding 'bogus-codec'" in err.getvalue()


def test_a_search_too_wide_for_memory_is_refused_before_it_is_compiled():
    import jax

    seq2seq = zoo.build("seq2seq", key=jax.random.key(0), hidden_size=4, src_vocab_size=9, tgt_vocab_size=9)
    src = np.ones((2, 3), np.int32)
    with bounded(), pytest.raises(ZooError, match="past the 2\\^31 - 1"):
        seq2seq.decode(src, strategy="beam", beam_size=10**9)
    with bounded(), memory_limit("8G"), pytest.raises(ZooError, match="needs"):
        seq2seq.decode(src, strategy="sample", num_samples=10**8, key=jax.random.key(1))
    lm = zoo.build("lstm-lm", key=jax.random.key(0), vocab_size=4, hidden_size=4, embedding_size=4, num_layers=1)
    from zoo.generation import generate, text_strategy

    with bounded(), memory_limit("8G"), pytest.raises(ZooError, match="needs"):
        generate(lm, [1, 2], text_strategy(length=10, samples=10**8), key=jax.random.key(0))  # 33 GB in XLA


def test_one_long_sentence_is_decoded_once_not_once_per_batch_row(monkeypatch):
    """Padded to a full chunk of 64, one 300,000-token sentence took 5.2 GB and 22 s to translate."""
    from zoo_seq2seq.translate import translate_tokens

    class Vocab:
        pad_id, specials = 0, {}

        def encode(self, words):
            return [1] * len(words)

        def decode(self, row):
            return ["x"]

    seen = []

    class Model:
        def __init__(self):
            self.vocabs = {"src": Vocab(), "tgt": Vocab()}

        def decode(self, ids, mask, **_):
            seen.append(ids.shape)
            n = ids.shape[0]
            return type("H", (), {"tokens": np.zeros((n, 1, 2), np.int32), "scores": np.zeros((n, 1))})()

    translate_tokens(Model(), [["a"] * 30], chunk_size=64)
    translate_tokens(Model(), [["a"]] * 70, chunk_size=64)
    assert seen == [(1, 32), (64, 8), (8, 8)]


def test_streams_past_the_corpus_cost_as_many_steps_as_parts(tmp_path):
    """--streams 1000000000 on a small corpus looped a billion times (a hang)."""
    from zoo_word2vec.stream import EncodedCorpus

    path = tmp_path / "ids"
    np.asarray([1, 2, -1, 3, -1, 4, 5, 6, -1], np.int32).tofile(path)
    started = time.perf_counter()
    parts = EncodedCorpus(path, 9, 3, owned=False, streams=10**9).parts()
    assert time.perf_counter() - started < 0.5
    assert parts == [(0, 3), (3, 5), (5, 9)]
    assert EncodedCorpus(path, 9, 3, owned=False, streams=2).parts() == [(0, 5), (5, 9)]


@pytest.mark.parametrize("setting", [{"window": 10**9}, {"negative": 10**9}])
def test_a_window_or_negatives_past_any_use_are_refused_by_name(setting):
    """Either one sized the training kernel's buffers: a raw MemoryError or a hang."""
    import jax

    with bounded(), pytest.raises(ZooError, match=f"{next(iter(setting))}=1000000000 is out of range"):
        zoo.build("word2vec-skipgram", key=jax.random.key(0), vocab_size=10, embedding_size=4, **setting)


def test_a_damaged_keep_best_record_restores_nothing(tmp_path):
    """A seq2seq --valid run resumed from a damaged checkpoint or record: a fresh keep-best, never a traceback."""
    import json

    from safetensors.numpy import save_file

    from zoo_seq2seq.scoring import Validation

    checkpoint = tmp_path / "ck.safetensors"
    record = tmp_path / "ck.safetensors.valid.json"
    checkpoint.write_bytes(b"garbage" * 10)
    assert Validation(None).restore(checkpoint) is False
    save_file({"x": np.zeros(1, np.float32)}, str(checkpoint), metadata={"zoo.checkpoint": json.dumps({"step": 3})})
    for states in ([{"step": 3}], [{"step": 3, "history": [], "steps": [], "best_at": 0, "improved_at": 0,
                                    "score": 0.0, "best_file": "../../elsewhere.safetensors"}]):  # fmt: skip
        record.write_text(json.dumps(states))
        assert Validation(None).restore(checkpoint) is False
    record.unlink()
    os.mkfifo(record)
    with bounded():
        assert Validation(None).restore(checkpoint) is False


def test_a_window_past_every_sentence_counts_co_occurrences_as_the_longest_sentence_does():
    """GloVe's and PPMI's --window 1000000000 allocated 8 GB of distance weights and looped a billion times."""
    from zoo.data.cooccurrence import cooccurrence_matrix
    from zoo.data.vocab import Vocab

    vocab, sentences = Vocab(["a", "b", "c"]), [["a", "b", "c"], ["c", "a"]]
    with bounded():
        wide = cooccurrence_matrix(sentences, vocab, window=10**9, weighting="linear").toarray()
    assert wide[0, 2] == pytest.approx(1 + (1 - 1 / 10**9))  # "c a" at distance 1, "a b c" at 2 of 10^9
    np.testing.assert_array_equal(
        cooccurrence_matrix(sentences, vocab, window=2).toarray(),
        cooccurrence_matrix(sentences, vocab, window=10**9).toarray(),
    )


@pytest.mark.parametrize("text", ["the\ncat\tNN\n\n", "the/DT\ncat\tNN\n\n", "a\tDT\ndog\n\n"])
def test_a_conll_line_without_its_tag_names_its_line(tmp_path, text):
    """A token alone on its line was read as its own tag ('the' tagged 'the'), and scored."""
    path = tmp_path / "tagged.txt"
    path.write_text(text)
    with pytest.raises(ZooError, match=r":\d: expected token and tag columns"):
        read_tagged(path)


def test_a_few_held_out_pairs_are_scored_in_as_few_rows():
    """One 500,000-token --valid pair was scored in a batch of 64 rows: 9.1 GB and 18 s (now 614 MB, 5.5 s)."""
    import jax

    from zoo_seq2seq.scoring import HeldOut, SequenceBatches, encode_pairs
    from zoo_seq2seq.tasks import digit_vocab

    vocab = digit_vocab()
    model = zoo.build("seq2seq", key=jax.random.key(0), vocab={"src": vocab, "tgt": vocab}, hidden_size=4)
    sources, targets = [list("123"), list("45"), list("6")], [list("321"), list("54"), list("6")]
    few = HeldOut(sources, targets)
    loss = few.loss(model)
    assert few._batches.batch_size == 4
    wide = HeldOut(sources, targets)
    fields = encode_pairs(vocab, vocab, sources, targets)
    wide._batches = SequenceBatches(fields, batch_size=64, pad_id=vocab.pad_id, shuffle=False)
    assert loss == pytest.approx(wide.loss(model), rel=1e-6)  # the empty rows are masked out
