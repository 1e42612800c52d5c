"""The memory budget: sizes from outside (hyperparameters, headers, flags) refused before they are spent."""

import struct
import time

import jax
import numpy as np
import pytest

import zoo
from zoo.budget import check_memory, format_bytes, memory_limit, parse_bytes
from zoo.cli.main import main
from zoo.errors import DataError, InvalidParameterError, MemoryBudgetError, ZooError


def test_check_memory_gives_the_figure_the_limit_and_the_way_out(monkeypatch):
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "1G")
    check_memory(1 << 29, "half a gigabyte")
    with pytest.raises(MemoryBudgetError, match=r"the table needs 2\.1 GB, over ZOO_MEMORY_LIMIT=1G \(1\.1 GB\)") as e:
        check_memory(2 << 30, "the table")
    assert "ZOO_MEMORY_LIMIT" in str(e.value).split("):", 1)[1]
    with memory_limit("10M"), pytest.raises(MemoryBudgetError, match="set for this call"):
        check_memory(20e6, "twenty megabytes")
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "none")
    check_memory(1e30, "anything")  # the check is off
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "lots")
    with pytest.raises(MemoryBudgetError, match="not a size"):
        check_memory(1, "x")


def test_sizes_parse_and_print():
    assert parse_bytes("512M") == 512 << 20 and parse_bytes("1.5g") == int(1.5 * (1 << 30))
    assert parse_bytes("4096") == 4096 and parse_bytes("none") is None
    assert format_bytes(1.2e12) == "1.2 TB" and format_bytes(12) == "12 bytes"


def test_the_default_limit_is_what_the_machine_has():
    with pytest.raises(MemoryBudgetError, match="the memory available to this process"):
        check_memory(1e18, "an exabyte")


def test_build_refuses_parameters_past_the_budget_before_drawing_them():
    start = time.perf_counter()
    with pytest.raises(MemoryBudgetError, match=r"parameters of 'word2vec-skipgram'.* 1000000000 x 100 float32"):
        zoo.build("word2vec-skipgram", key=jax.random.key(0), vocab_size=10**9)
    assert time.perf_counter() - start < 5
    with pytest.raises(InvalidParameterError, match=r"embedding_size=1000000000 is out of range.*\[1, 65536\]"):
        zoo.build("word2vec-skipgram", key=jax.random.key(0), embedding_size=10**9)  # a typo, refused by its domain
    with memory_limit("1M"), pytest.raises(MemoryBudgetError, match=r"needs 400\.0 MB"):
        zoo.build("word2vec-skipgram", key=jax.random.key(0), embedding_size=5000)
    model = zoo.build("word2vec-skipgram", key=jax.random.key(0), embedding_size=8, vocab_size=5000)
    assert model.input.shape == (5000, 8)


def test_zoo_train_counts_the_optimiser_state(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 20)
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "3M")  # the widest vectors' domain allows: 5 words x 65,536 x 2 tables
    args = ["train", "word2vec-skipgram", "--data", str(corpus), "--out", str(tmp_path / "m.safetensors"),
            "--min-count", "1"]  # fmt: skip
    assert main([*args, "--dim", "65536"]) == 2
    err = capsys.readouterr().err
    assert (
        "needs" in err and "x 2: training word2vec-skipgram holds 2x its parameters" in err and "Traceback" not in err
    )
    assert main([*args, "--set", "embedding_size=0"]) == 2
    assert "embedding_size" in capsys.readouterr().err


def test_sizes_declare_domains_that_exclude_zero():
    from zoo.naming.registry import default_registry

    registry, sizes = default_registry(), 0
    for table in (registry.architectures, registry.components):
        for name, entry in table.items():
            for param, value in entry.params.items():
                if param == "context_vocab_size":  # 0: the tagger reads no contextual embedder
                    continue
                if param.endswith(("_size", "dim")) and isinstance(value, int) and not isinstance(value, bool):
                    domain = entry.domains.get(param)
                    assert domain is not None and not domain.contains(0), f"{name}.{param}"
                    sizes += 1
    assert sizes > 20


def _classifier_data(tmp_path):
    data = tmp_path / "c.txt"
    data.write_text("__label__a good film\n__label__b bad film\n__label__a great fun\n__label__b awful bore\n")
    return ["train", "fasttext-classifier", "--data", str(data), "--out", str(tmp_path / "c.safetensors"), "--quiet"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--bucket", "100000000000000000000"], r"--bucket=100000000000000000000 is out of range"),
        (["--dim", "2147483648"], r"--dim=2147483648 is out of range"),
        (["--maxn", "16000"], r"--maxn=16000 is out of range"),
    ],
)
def test_classifier_sizes_are_clear_errors(tmp_path, capsys, monkeypatch, flags, message):
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "1G")
    assert main([*_classifier_data(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert __import__("re").search(message, err), err


def test_a_billion_buckets_cost_what_the_lines_use(tmp_path, monkeypatch):
    """fastText would allocate a row per bucket (400 GB at dim 100); zoo stores the rows the lines
    use, and finds them by sorting the rows once a table of buckets would outweigh them (it took
    12 GB before)."""
    monkeypatch.setenv("ZOO_MEMORY_LIMIT", "1G")
    assert main([*_classifier_data(tmp_path), "--bucket", "1000000000", "--word-ngrams", "2"]) == 0
    model = zoo.load(tmp_path / "c.safetensors")
    assert model.spec["bucket"] == 10**9
    used = model.spec["stored_buckets"]
    assert 0 < used <= 8 and model.input.shape == (model.spec["vocab_size"] + used, model.spec["dim"])
    assert model.top_labels(["good film"], k=1)[0][0] == ("__label__a",)


def test_stored_buckets_sorted_or_tabled_agree():
    from zoo_word2vec.classifier.kernels import _stored_buckets_dense, stored_buckets

    rng = np.random.default_rng(0)
    for _ in range(30):
        nwords, bucket, size = int(rng.integers(1, 20)), int(rng.integers(1, 300)), int(rng.integers(0, 200))
        rows = rng.integers(0, nwords + bucket, size).astype(np.int64)
        tabled = _stored_buckets_dense(rows, nwords, bucket)
        huge = stored_buckets(rows, nwords, 10**9)  # the same rows, read as buckets of a huge table: sorted
        for a, b in zip(tabled, huge, strict=True):
            np.testing.assert_array_equal(a, b)


def _fasttext_bin(path, word, minn, maxn, bucket=10**5, dim=1):
    with open(path, "wb") as f:
        f.write(
            struct.pack("<2i", 793712314, 12)
            + struct.pack("<12id", dim, 5, 5, 1, 5, 1, 2, 2, bucket, minn, maxn, 100, 1e-4)
        )
        f.write(struct.pack("<3i2q", 1, 1, 0, 10, -1) + word + b"\0" + struct.pack("<qb", 1, 0))
        f.write(b"\0" + struct.pack("<2q", 1 + bucket, dim) + np.zeros((1 + bucket) * dim, "<f4").tobytes())
        f.write(b"\0" + struct.pack("<2q", 1, dim) + np.zeros(dim, "<f4").tobytes())
    return path


@pytest.mark.parametrize(("length", "maxn"), [(16000, 16000), (4000, 4000), (600, 600)])
def test_a_fasttext_bin_asking_for_huge_ngram_lists_is_refused_quickly(tmp_path, length, maxn):
    from zoo.vectors import KeyedVectors

    path = _fasttext_bin(tmp_path / "crafted.bin", b"a" * length, 1, maxn)
    start = time.perf_counter()
    with pytest.raises(DataError, match="crafted"):
        KeyedVectors.load(path)
    assert time.perf_counter() - start < 2


def test_a_word2vec_header_claiming_a_billion_dimensions(tmp_path):
    from zoo.vectors import KeyedVectors

    text = tmp_path / "big.txt"
    text.write_text("1 1000000000\nword 0.1 0.2 0.3\n")
    start = time.perf_counter()
    with pytest.raises(DataError, match="dimension 1000000000 but the first vector is a text line of 3 numbers"):
        KeyedVectors.load(text)
    binary = tmp_path / "big.bin"
    binary.write_bytes(b"1 1000000000\nword " + b"\0" * 4000)
    with pytest.raises(DataError, match="the whole file is 4018 bytes"):
        KeyedVectors.load(binary)
    assert time.perf_counter() - start < 2


def test_binary_true_on_a_text_file_is_an_error(tmp_path):
    from zoo.vectors import KeyedVectors

    path = tmp_path / "v.txt"
    path.write_text("2 3\nab 0.1 0.2 0.3\ncd 0.4 0.5 0.6\n")
    with pytest.raises(DataError, match="but it is a text file"):
        KeyedVectors.load_word2vec_format(path, binary=True)
    assert KeyedVectors.load_word2vec_format(path).vectors.shape == (2, 3)


def test_errors_are_zoo_errors():
    assert issubclass(MemoryBudgetError, ZooError) and issubclass(MemoryBudgetError, DataError)
