"""Corpora read by several processes: globs and folders, parts cut at line ends, counts and ids
merged in corpus order (the same as one process's, key order included), across jax.distributed
processes too, and a resumed run over parts that continues exactly."""

from __future__ import annotations

import filecmp
import gzip
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_distributed import finish, free_port, process_env

import zoo
from zoo.cli.main import main
from zoo.data.corpus import MAX_LINE_CHARS, corpus_files, count_tokens, iter_lines, parts_and_workers, split_corpus
from zoo.data.corpus_files import CorpusPart
from zoo.data.corpus_pool import counts_from_bytes, counts_to_bytes
from zoo.data.worker_pool import WorkerFailed, ordered_map
from zoo.errors import DataError
from zoo_word2vec.backends import numba_available
from zoo_word2vec.fit import build_vocab, fit
from zoo_word2vec.stream import encode_parts
from zoo_word2vec.training import encode_corpus

BACKEND = "numba" if numba_available() else "jax"  # numba's kernels are cached: the faster test
WORDS = ["the", "cat", "été", "naïve", "日本語", "über", "a", "b", "don't", "ß"]


def mixed_corpus(folder: Path, seed: int = 0) -> list[Path]:
    """Files that test every way a part can be cut: CRLF, empty lines, no final newline,
    multibyte UTF-8 everywhere, a gzip file, and a line longer than MAX_LINE_CHARS."""
    rng = np.random.default_rng(seed)

    def lines(n: int) -> list[str]:
        return [" ".join(rng.choice(WORDS, size=rng.integers(0, 9))) for _ in range(n)]

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "00-crlf.txt").write_bytes("\r\n".join(lines(3000)).encode() + b"\r\n\r\n")
    (folder / "01-plain.txt").write_text("\n".join(lines(3000)), encoding="utf-8")  # no final newline
    with gzip.open(folder / "02-packed.txt.gz", "wt", encoding="utf-8") as out:
        out.write("\n".join(lines(1000)) + "\n")
    long = " ".join(rng.choice(WORDS, size=MAX_LINE_CHARS // 4))  # one line of ~1.4M characters
    (folder / "03-long.txt").write_text("\n".join([*lines(200), long, *lines(200)]) + "\n", encoding="utf-8")
    return corpus_files(folder)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    return mixed_corpus(tmp_path_factory.mktemp("mixed"))


def same(a: Counter, b: Counter) -> bool:
    return a == b and list(a) == list(b)


# -- which files a corpus names ----------------------------------------------------------------


def test_folders_and_globs_name_their_files_sorted_and_a_pattern_matching_nothing_is_named(tmp_path):
    for name in ("b.txt", "a.txt", "c.txt.gz", ".hidden"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.txt").write_text("y\n")
    names = lambda corpus: [p.relative_to(tmp_path).as_posix() for p in corpus_files(corpus)]
    assert names(tmp_path) == ["a.txt", "b.txt", "c.txt.gz"]
    assert names(str(tmp_path / "*.txt")) == ["a.txt", "b.txt"]
    assert names(str(tmp_path / "**" / "*.txt")) == ["a.txt", "b.txt", "sub/d.txt"]
    assert names([tmp_path / "b.txt", str(tmp_path / "sub")]) == ["b.txt", "sub/d.txt"]
    with pytest.raises(DataError, match=r"pattern '.*/\*\.tsv' matches no file"):
        count_tokens(str(tmp_path / "*.tsv"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="folder .*empty holds no files"):
        corpus_files(tmp_path / "empty")
    with pytest.raises(DataError, match="no corpus file at .*absent.txt"):
        corpus_files([tmp_path / "a.txt", tmp_path / "absent.txt"])
    assert same(count_tokens(str(tmp_path / "*.txt")), Counter({"x": 2}))


# -- parts: the lines of the whole, whatever the cuts -------------------------------------------

TEXT = st.lists(st.sampled_from([*"ab é日\t", "\n", "\r\n", "\r", "  "]), max_size=200).map("".join)


@given(texts=st.lists(TEXT, min_size=1, max_size=3), pieces=st.integers(1, 40), max_chars=st.integers(1, 12))
def test_parts_cut_anywhere_read_the_lines_of_the_whole_corpus(tmp_path_factory, texts, pieces, max_chars):
    folder = tmp_path_factory.mktemp("cuts")
    files = []
    for i, text in enumerate(texts):
        files.append(folder / f"{i}.txt")
        files[-1].write_bytes(text.encode("utf-8"))
    parts = split_corpus(files, pieces, min_bytes=1)
    assert all(part.start == 0 or part.path.read_bytes()[part.start - 1] == ord("\n") for part in parts)
    assert list(iter_lines(parts, max_chars=max_chars)) == list(iter_lines(files, max_chars=max_chars))
    assert same(count_tokens(parts, "whitespace"), count_tokens(files, "whitespace"))


def test_a_corpus_is_cut_at_line_ends_of_plain_text_and_gzip_stays_whole(corpus):
    parts = split_corpus(corpus, 100, min_bytes=10_000)
    by_file = Counter(part.path.name for part in parts)
    assert by_file["02-packed.txt.gz"] == 1 and by_file["00-crlf.txt"] > 1 and by_file["03-long.txt"] > 1
    assert [p.path for p in parts] == sorted(p.path for p in parts)  # corpus order
    assert split_corpus(corpus, 100, encoding="utf-16", min_bytes=10_000) == [CorpusPart(p) for p in corpus]
    assert parts_and_workers(corpus, 4) == (split_corpus(corpus, 16), 1)  # under POOL_BYTES: no pool
    with pytest.raises(DataError, match="workers must be a whole number >= 1"):
        count_tokens(corpus, workers=0)


# -- several worker processes: the counts and ids of one ----------------------------------------


def test_counts_of_two_workers_equal_one_process_s_counts_in_key_order_too(corpus):
    parts = split_corpus(corpus, 9, min_bytes=10_000)
    sequential = count_tokens(corpus)
    parallel = count_tokens(parts, workers=2)
    assert same(parallel, sequential), "counts or their order of first appearance differ"
    assert sequential["日本語"] > 0 and sequential.total() > 250_000
    assert build_vocab(parts, min_count=1, workers=2).tokens == build_vocab(corpus, min_count=1).tokens


def test_a_worker_s_error_names_the_file_and_line_and_a_lambda_tokenizer_is_refused(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine words\n" * 500 + b"a bad \xff byte\n" + b"more\n" * 500)
    parts = split_corpus(bad, 3, min_bytes=100)
    assert len(parts) == 3
    with pytest.raises(DataError, match=r"bad.txt:501: at byte offset 5506, byte ff is not valid utf-8"):
        count_tokens(parts, workers=2)
    with pytest.raises(DataError, match="cannot be pickled: give a tokenizer name"):
        count_tokens(parts, lambda line: line.split(), workers=2)
    assert count_tokens(parts, lambda line: line.split(), workers=None, errors="replace")["fine"] == 500
    split = list(ordered_map(str.split, ["a b", "c", "", "d e f"], workers=2))  # results in item order
    assert split == [["a", "b"], ["c"], [], ["d", "e", "f"]]
    with pytest.raises(WorkerFailed, match=r"worker process \d+ ended without answering \(exit status 3\)"):
        list(ordered_map(os._exit, [3, 3], workers=2))


def test_ids_encoded_by_two_workers_are_the_file_one_process_writes(corpus):
    vocab = build_vocab(corpus, min_count=2)
    parts = split_corpus(corpus, 7, min_bytes=10_000)
    with encode_corpus(list(corpus), vocab) as one, encode_parts(parts, vocab, workers=2) as two:
        assert (two.words, two.sentences) == (one.words, one.sentences)
        assert filecmp.cmp(one.path, two.path, shallow=False)
    assert not two.path.exists()


def test_counts_travel_as_bytes_in_their_order():
    counts = Counter({"zebra": 3, "": 1, "日本": 7, "\udcff": 2, "a": 10**12})
    back = counts_from_bytes(counts_to_bytes(counts))
    assert same(back, counts)
    assert same(counts_from_bytes(counts_to_bytes(Counter())), Counter())


# -- training: parts, streams and a resumed run -------------------------------------------------


class Stop(Exception):
    pass


def test_a_run_over_several_files_read_as_three_streams_resumes_exactly_from_parts_and_workers(tmp_path):
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    files = []
    for i in range(3):
        files.append(tmp_path / f"part-{i}.txt")
        files[-1].write_text("\n".join(" ".join(rng.choice(words, size=12)) for _ in range(300)) + "\n")
    vocab = build_vocab(str(tmp_path / "part-*.txt"), min_count=1)
    model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=8, epochs=2)
    options = {"backend": BACKEND, "threads": 1, "progress": False, "job_words": 1000, "streams": 3}
    reference, _ = fit(model, files, workers=1, **options)

    def stop(position):
        if position.jobs == 7:
            raise Stop

    checkpoint = {"checkpoint": tmp_path / "run.ckpt", "checkpoint_every": 2}
    with pytest.raises(Stop):
        fit(model, str(tmp_path / "part-*.txt"), on_job=stop, **checkpoint, **options)
    parts = split_corpus(files, 5, min_bytes=1000)
    resumed, stats = fit(model, parts, workers=2, resume=True, **checkpoint, **options)
    assert stats.resumed is not None and stats.resumed.jobs == 6
    np.testing.assert_array_equal(np.asarray(resumed.input), np.asarray(reference.input))
    np.testing.assert_array_equal(np.asarray(resumed.output), np.asarray(reference.output))


def test_zoo_train_reads_a_quoted_glob_as_the_files_it_matches(tmp_path, capsys):
    (tmp_path / "texts").mkdir()
    for i, text in enumerate(["the cat sat on the mat\n" * 40, "a dog ran in the park\n" * 40]):
        (tmp_path / "texts" / f"c{i}.txt").write_text(text)
    args = ["train", "word2vec-skipgram", "--min-count", "1", "--dim", "4", "--epochs", "1", "--quiet"]
    args += ["--backend", BACKEND, "--threads", "1"]
    assert main([*args, "--data", str(tmp_path / "texts" / "c*.txt"), "--out", str(tmp_path / "glob.safetensors")]) == 0
    assert main([*args, "--data", str(tmp_path / "texts"), "--out", str(tmp_path / "folder.safetensors")]) == 0
    glob_model, folder_model = zoo.load(tmp_path / "glob.safetensors"), zoo.load(tmp_path / "folder.safetensors")
    assert glob_model.vocabs["words"].tokens == folder_model.vocabs["words"].tokens
    assert "dog" in glob_model.vocabs["words"].index
    np.testing.assert_array_equal(np.asarray(glob_model.vectors()), np.asarray(folder_model.vectors()))
    capsys.readouterr()
    assert main([*args, "--data", str(tmp_path / "*.tsv"), "--out", str(tmp_path / "none.safetensors")]) != 0
    assert "matches no file" in capsys.readouterr().err


# -- several jax.distributed processes ----------------------------------------------------------

COUNT_ON_PROCESSES = textwrap.dedent(
    """
    import json, sys
    from zoo.training import distributed
    distributed.start(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), timeout=60)
    from zoo.data.corpus import count_tokens
    from zoo.errors import ZooError
    counts = count_tokens(sys.argv[4], across_processes=True, workers=1)
    try:  # the second process's share holds a bad byte: each process says what it knows
        count_tokens(sys.argv[6:], across_processes=True)
        error = "no error"
    except ZooError as caught:
        error = f"{type(caught).__name__}: {caught}"
    with open(sys.argv[5], "w") as out:
        json.dump({"counts": list(counts.items()), "error": error}, out)
    """
)


def test_two_processes_count_their_shares_and_both_get_the_one_process_counts(corpus, tmp_path):
    coordinator = f"127.0.0.1:{free_port()}"
    folder = str(corpus[0].parent)
    (tmp_path / "good.txt").write_text("fine words\n")
    (tmp_path / "bad.txt").write_bytes(b"a bad \xff byte\n")
    bad = [str(tmp_path / "good.txt"), str(tmp_path / "bad.txt")]
    processes = []
    for i in range(2):
        args = [coordinator, "2", str(i), folder, str(tmp_path / f"{i}.json"), *bad]
        command = [sys.executable, "-c", COUNT_ON_PROCESSES, *args]
        processes.append(
            subprocess.Popen(command, env=process_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    finish(processes, timeout=120)
    want = list(count_tokens(corpus).items())
    got = [json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2)]
    for i in range(2):
        assert [tuple(pair) for pair in got[i]["counts"]] == want, f"process {i}"
    refused = "DistributedError: process 1 could not count its share of the corpus (its own error says why)"
    assert got[0]["error"] == refused
    assert got[1]["error"].startswith("DataError: ") and "bad.txt:1: at byte offset 6" in got[1]["error"]
