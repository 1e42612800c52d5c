"""Text input: encodings, binary and truncated files, bounded lines, in every reader and command."""

from __future__ import annotations

import gzip
import tracemalloc

import jax
import numpy as np
import pytest

from zoo.cli.main import main
from zoo.cli.tag_cmd import read_inputs
from zoo.data.corpus import count_tokens, iter_lines
from zoo.data.textfile import LongLinesWarning, decode_bytes, read_lines
from zoo.errors import DataError
from zoo_lm.stream import read_tokens
from zoo_seq2seq.data import build_vocabs, read_pairs
from zoo_tagger.data import read_tagged
from zoo_textcnn.data import read_columns, read_label_text

LATIN = "one two\nthree four\ncafé crème\n"  # the é of line 3 is byte 22 in Latin-1
LATIN_PAIRS = "go\tva\nhello\tbonjour\ncafé\tcoffee\n"  # é: line 3, byte 23


@pytest.fixture
def latin(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(LATIN.encode("latin-1"))
    return path


@pytest.fixture
def latin_pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(LATIN_PAIRS.encode("latin-1"))
    return path


# -- encodings --------------------------------------------------------------------------


def test_a_latin1_corpus_names_file_line_and_byte_then_loads_with_its_encoding(latin):
    with pytest.raises(DataError, match=r"latin.txt:3: at byte offset 22, byte e9 is not valid utf-8") as error:
        count_tokens(latin)
    assert "--encoding latin-1" in str(error.value) and "errors='replace'" in str(error.value)
    assert count_tokens(latin, encoding="latin-1")["café"] == 1
    assert list(iter_lines(latin, errors="replace"))[2] == "caf\ufffd cr\ufffdme"


def test_a_latin1_pairs_file_is_refused_then_read_with_its_encoding(latin_pairs):
    with pytest.raises(DataError, match=r"pairs.tsv:3: at byte offset 23, byte e9"):
        read_pairs(latin_pairs)
    sources, targets = read_pairs(latin_pairs, encoding="latin-1")
    assert sources[2] == ["café"] and targets[2] == ["coffee"]


def test_every_line_reader_takes_an_encoding(tmp_path):
    tagged, labelled, table = tmp_path / "tagged.txt", tmp_path / "labelled.txt", tmp_path / "table.csv"
    tagged.write_bytes("le/DET café/NOUN\n".encode("latin-1"))
    labelled.write_bytes("pos\tun bon café\n".encode("latin-1"))
    table.write_bytes("label,text\npos,un bon café\n".encode("latin-1"))
    for read, path in [(read_tagged, tagged), (read_label_text, labelled), (read_columns, table)]:
        with pytest.raises(DataError, match=rf"{path.name}:\d: at byte offset \d+"):
            read(path)
    assert read_tagged(tagged, encoding="latin-1").sentences == [["le", "café"]]
    words = {"tokenizer": "whitespace", "encoding": "latin-1"}
    assert read_label_text(labelled, **words).texts == [["un", "bon", "café"]]
    assert read_columns(table, **words).texts == [["un", "bon", "café"]]
    assert read_tokens(labelled, "word", encoding="latin-1") == ["pos", "un", "bon", "café", "</s>"]


def test_utf16_reads_with_its_encoding_and_unknown_encodings_are_named(tmp_path):
    path = tmp_path / "utf16.tsv"
    path.write_text("a\tb\nc\td\n", encoding="utf-16")
    assert read_pairs(path, encoding="utf-16") == ([["a"], ["c"]], [["b"], ["d"]])
    with pytest.raises(DataError, match="not valid utf-8"):
        read_pairs(path)
    with pytest.raises(DataError, match="unknown text encoding 'latin-9000'"):
        read_pairs(path, encoding="latin-9000")
    with pytest.raises(DataError, match="unknown errors='lenient'"):
        read_pairs(path, errors="lenient")


def test_standard_input_is_decoded_with_the_same_checks():
    assert decode_bytes("café\n".encode("latin-1"), encoding="latin-1") == "café\n"
    with pytest.raises(DataError, match=r"stdin:2: at byte offset 6, byte e9"):
        decode_bytes("ok\ncaf\xe9\n".encode("latin-1"), name="stdin")


# -- translate --file ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    """An untrained, tiny seq2seq model: enough to read inputs and decode them."""
    from zoo.building.builder import build
    from zoo.building.weights import save

    src_vocab, tgt_vocab = build_vocabs([["café"], ["thé"]], [["coffee"], ["tea"]])
    model = build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        vocab={"src": src_vocab, "tgt": tgt_vocab},
        embedding_size=4,
        hidden_size=4,
        **{"strategy.max_length": 3},
    )
    return save(model, tmp_path_factory.mktemp("model") / "tiny.safetensors")


def test_translate_file_in_latin1_is_refused_then_read_with_encoding(translator, tmp_path, capsys):
    inputs = tmp_path / "inputs.txt"
    inputs.write_bytes("café\nthé\n".encode("latin-1"))
    assert main(["translate", str(translator), "--file", str(inputs)]) == 2
    assert "inputs.txt:1: at byte offset 3, byte e9 is not valid utf-8" in capsys.readouterr().err
    assert main(["translate", str(translator), "--file", str(inputs), "--encoding", "latin-1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_read_inputs_reads_a_file_with_its_encoding(latin):
    from argparse import Namespace

    assert read_inputs(Namespace(text=[], file=latin, encoding="latin-1"))[2] == "café crème"
    with pytest.raises(DataError, match="latin.txt:3: at byte offset 22"):
        read_inputs(Namespace(text=[], file=latin, encoding="utf-8"))


def test_the_train_command_takes_encoding(latin, tmp_path, capsys):
    out = tmp_path / "vectors.safetensors"
    args = ["train", "ppmi-svd", "--data", str(latin), "--out", str(out), "--min-count", "1", "--quiet"]
    assert main([*args, "--dim", "2"]) == 2
    assert "latin.txt:3: at byte offset 22" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--dim", "2", "--encoding", "latin-1"]) == 0
    assert out.exists()


# -- binary and truncated files -----------------------------------------------------------


@pytest.mark.parametrize("content", [b"abc\ndef\x00ghi\n", np.random.default_rng(0).bytes(4096)])
def test_binary_files_are_refused(tmp_path, content):
    path = tmp_path / "data.bin"
    path.write_bytes(content)
    for read in (count_tokens, read_pairs, read_tagged, read_label_text):
        with pytest.raises(DataError, match=r"data.bin:\d+: at byte offset \d+.*(binary|NUL)"):
            read(path)
    with pytest.raises(DataError, match="binary"):  # no encoding makes NUL bytes text
        count_tokens(path, encoding="latin-1")
    with pytest.raises(DataError, match="binary"):
        count_tokens(path, errors="replace")


def test_nul_offsets_are_exact(tmp_path):
    path = tmp_path / "nul.txt"
    path.write_bytes(b"first line\nsecond \x00 line\n")
    with pytest.raises(DataError, match=r"nul.txt:2: at byte offset 18, a NUL byte"):
        list(read_lines(path))


def _gzipped_corpus(tmp_path, text: str):
    path = tmp_path / "corpus.txt.gz"
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_a_gzip_cut_in_half_is_a_data_error(tmp_path):
    lines = "".join(f"word{i} other{i % 7}\tside{i}\n" for i in range(20000))
    path = _gzipped_corpus(tmp_path, lines)
    assert count_tokens(path).total() == 60000  # whole, it reads
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    for read in (count_tokens, read_pairs, read_tagged, read_label_text):
        with pytest.raises(DataError, match=r"corpus.txt.gz: the gzip stream is truncated or corrupt \(at line \d+"):
            read(path)


def test_a_corrupt_gzip_is_a_data_error(tmp_path):
    path = _gzipped_corpus(tmp_path, "some words here\n" * 5000)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="truncated or corrupt"):
        count_tokens(path)


# -- long lines ---------------------------------------------------------------------------


def test_a_long_pair_line_is_skipped_and_counted(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("go\tva\n" + "x " * 5000 + "\t" + "y " * 5000 + "\nhi\tsalut\n" + "z" * 3000)
    with pytest.warns(LongLinesWarning, match=r"pairs.tsv: skipped 2 line\(s\) longer than 1,000 characters"):
        sources, targets = read_pairs(path, max_line_chars=1000)
    assert sources == [["go"], ["hi"]] and targets == [["va"], ["salut"]]


def test_long_lines_are_skipped_in_tagged_and_labelled_files(tmp_path):
    tagged, labelled = tmp_path / "tagged.txt", tmp_path / "labelled.txt"
    tagged.write_text("a/DT b/NN\n" + "w/NN " * 400 + "\n")
    labelled.write_text("pos\tgood\n" + "neg\t" + "bad " * 400 + "\n")
    with pytest.warns(LongLinesWarning, match="skipped 1 line"):
        assert read_tagged(tagged, max_line_chars=100).sentences == [["a", "b"]]
    with pytest.warns(LongLinesWarning, match="skipped 1 line"):
        assert read_label_text(labelled, max_line_chars=100).labels == ["pos"]


def test_reading_a_huge_line_holds_a_bounded_part_of_it(tmp_path):
    path = tmp_path / "huge.tsv"
    with open(path, "w") as handle:
        handle.write("a\tb\n")
        for _ in range(200):  # one 4 MB line with a tab in the middle
            handle.write("word " * 2000 + ("\t" if _ == 100 else ""))
        handle.write("\nc\td\n")
    tracemalloc.start()
    try:
        with pytest.warns(LongLinesWarning):
            assert read_pairs(path, max_line_chars=10_000) == ([["a"], ["c"]], [["b"], ["d"]])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # the line is 4 MB (16 MB as a str of 4-byte characters would be more)


def test_corpus_lines_are_cut_not_skipped_and_stay_bounded(tmp_path):
    path = tmp_path / "text8.txt"
    path.write_text("word " * 100_000)  # no newline at all
    pieces = list(iter_lines(path, max_chars=1000))
    assert max(len(p) for p in pieces) < 2000 and sum(len(p.split()) for p in pieces) == 100_000


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_utf8_byte_order_mark_is_not_text(tmp_path, gzipped):
    """Windows editors open UTF-8 files with a byte-order mark: it neither glues itself to the first
    word nor hides the first line's label (it did: the first review was read without its label)."""
    from zoo_word2vec.classifier.data import read_labelled

    body = "__label__good great film\n__label__bad dull film\n"
    data = b"\xef\xbb\xbf" + body.encode()
    path = tmp_path / ("labelled.txt.gz" if gzipped else "labelled.txt")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    assert [line for _, line in read_lines(path)] == body.splitlines()
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"\xef\xbb\xbfhello world\nhello\n")
    assert count_tokens(corpus)["hello"] == 2 and not any("\ufeff" in w for w in count_tokens(corpus))
    for encoding in ("utf-8", "UTF8"):  # the fast reader and its name's spellings
        assert list(read_labelled(path, encoding=encoding).labels) == [("__label__good",), ("__label__bad",)]
    only = tmp_path / "only-a-mark.txt"
    only.write_bytes(b"\xef\xbb\xbf")
    assert list(read_lines(only)) == []
