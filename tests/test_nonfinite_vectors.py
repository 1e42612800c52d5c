"""NaN, infinity and numbers past float32's range in vector files: refused by default, never ranked."""

import numpy as np
import pytest

from zoo.cli.main import main
from zoo.errors import DataError
from zoo.vectors import KeyedVectors
from zoo.vectors.formats import write_word2vec

WORDS = ["alpha", "beta", "gamma", "delta"]


def _vectors():
    return np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1]], np.float32)


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e39"])
def test_text_files_name_the_file_word_and_line(tmp_path, bad):
    path = tmp_path / "v.txt"
    path.write_text("4 3\nalpha 1 0 0\nbeta 0.9 0.1 0\ngamma 0 %s 0\ndelta 0 0 1\n" % bad)
    with pytest.raises(DataError, match=r"v\.txt: line 4 \('gamma'\) holds .*allow_nonfinite=True"):
        KeyedVectors.load(path)
    glove = tmp_path / "glove.txt"
    glove.write_text("alpha 1 0 0\ngamma 0 %s 0\n" % bad)
    with pytest.raises(DataError, match=r"line 2 \('gamma'\)"):
        KeyedVectors.load(glove)
    keyed = KeyedVectors.load(path, allow_nonfinite=True)
    assert not np.isfinite(keyed["gamma"]).all()
    ranked = [w for w, _ in keyed.most_similar("alpha", topn=10)]
    assert ranked == ["beta", "delta"]


def test_binary_files_are_checked_too(tmp_path):
    vectors = _vectors()
    vectors[3, 1] = np.nan
    path = write_word2vec(tmp_path / "v.bin", WORDS, vectors, binary=True)
    with pytest.raises(DataError, match=r"vector 3 \('delta'\)"):
        KeyedVectors.load(path)
    assert len(KeyedVectors.load_word2vec_format(path, allow_nonfinite=True)) == 4


def test_a_nonfinite_query_ranks_nothing(tmp_path):
    keyed = KeyedVectors(WORDS, _vectors())
    assert keyed.most_similar(positive=[np.full(3, np.nan, np.float32)], topn=3) == []


def test_the_cli_refuses_and_allows_on_request(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    path = tmp_path / "v.txt"
    path.write_text("3 2\nalpha 1 0\nbeta nan 1\ngamma 0.9 0.1\n")
    assert main(["vectors", "similar", str(path), "alpha"]) == 2
    assert "line 3 ('beta')" in capsys.readouterr().err
    assert main(["vectors", "similar", str(path), "alpha", "--allow-nonfinite"]) == 0
    out = capsys.readouterr().out
    assert "gamma" in out and "beta" not in out
    assert main(["import", str(path), "--as", "bad.v1"]) == 2
    assert "allow-nonfinite" in capsys.readouterr().err
    assert main(["import", str(path), "--as", "bad.v1", "--allow-nonfinite"]) == 0


def _fasttext_bin(tmp_path, bad_row):
    """A fastText ``.bin`` (4 words, 13 n-gram buckets, dim 3) with NaN in input row `bad_row`."""
    from zoo.vectors import FastTextArgs, FastTextModel, write_fasttext_bin

    args = FastTextArgs(dim=3, min_count=1, bucket=13, minn=2, maxn=3)
    table = np.random.default_rng(0).standard_normal((4 + 13, 3)).astype(np.float32)
    table[bad_row, 1] = np.nan
    model = FastTextModel(args, ["</s>", "hello", "world", "café"], np.array([9, 5, 3, 2]), table)
    return write_fasttext_bin(tmp_path / f"ft{bad_row}.bin", model)


@pytest.mark.parametrize("bad_row", [1, 4 + 7])  # a word's own row; an n-gram bucket's row
def test_fasttext_bins_are_checked_in_their_ngram_buckets_too(tmp_path, bad_row, monkeypatch):
    from zoo.building.intake import import_file
    from zoo.vectors import load_facebook_vectors

    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    path = _fasttext_bin(tmp_path, bad_row)
    for load in (KeyedVectors.load, load_facebook_vectors, lambda p: import_file(p, "ft.bad")):
        with pytest.raises(DataError, match="allow_nonfinite=True"):
            load(path)
    keyed = KeyedVectors.load(path, allow_nonfinite=True)
    assert load_facebook_vectors(path, allow_nonfinite=True).index_to_key == keyed.index_to_key
    import_file(path, "ft.bad", allow_nonfinite=True)
    assert KeyedVectors.load("ft.bad", allow_nonfinite=True).index_to_key == keyed.index_to_key
    with pytest.raises(DataError, match="allow_nonfinite=True"):
        KeyedVectors.load("ft.bad")  # stored on request, still refused by default when read back


def test_a_bad_bucket_no_word_uses_is_named_by_its_table_row(tmp_path):
    from zoo.vectors import load_facebook_vectors

    named = []
    for row in range(4, 17):  # the 13 bucket rows; a bucket no vocabulary word uses passes the words' check
        try:
            load_facebook_vectors(_fasttext_bin(tmp_path, row))
        except DataError as error:
            named += [str(error)] if f"row {row} of the" in str(error) else []
    assert named, "no bucket row was refused by its table row"
    assert all("'input' table" in message and "allow_nonfinite=True" in message for message in named)


def test_a_subword_codecs_default_tables_are_the_float_tables_it_packs(tmp_path):
    from zoo.vectors.extensions import SubwordModel, subword_owner

    keyed = KeyedVectors.load(_fasttext_bin(tmp_path, 0), allow_nonfinite=True)
    _, codec = subword_owner(keyed.oov)
    default = SubwordModel.tables(codec, keyed.oov)  # from pack: the words' byte arrays and counts left out
    assert set(default) == set(codec.tables(keyed.oov)) == {"input"}
    np.testing.assert_array_equal(default["input"], codec.tables(keyed.oov)["input"])
