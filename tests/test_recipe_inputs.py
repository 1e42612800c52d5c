"""Malformed rows in a recipe's input are errors naming their line, never raw exceptions or guesses."""

import pytest

from zoo.errors import DataError
from zoo.eval.similarity import read_word_pairs
from zoo_word2vec.classifier.data import read_labelled

HEADER = "id\tsentiment\ttext\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("2\tgreat\tthe best film\n", r":3: the sentiment 'great' is not a finite number"),
        ("2\tnan\tthe best film\n", r":3: the sentiment 'nan' is not a finite number"),
        ("2\t1.0\n", r":3: expected 3 tab-separated columns \(id, sentiment, text\), got 2"),
        ("2\t1.0\tthe best\tfilm\n", r":3: expected 3 tab-separated columns \(id, sentiment, text\), got 4"),
        ("2\t-1\t \n", r":3: the text column is empty"),
    ],
)
def test_a_bad_review_row_names_its_line(tmp_path, row, message):
    path = tmp_path / "reviews.tsv"
    path.write_text(HEADER + "1\t0.5\ta fine film\n" + row)
    with pytest.raises(DataError, match=message):
        read_labelled(path)


def test_reviews_keep_their_sign_and_leave_zero_out(tmp_path):
    path = tmp_path / "reviews.tsv"
    path.write_text(HEADER + "1\t0.5\ta fine film\n2\t0\tneutral\n3\t-2\ta dull one\n")
    data = read_labelled(path)
    assert data.labels == [("positive",), ("negative",)] and data.texts == [["a", "fine", "film"], ["a", "dull", "one"]]


def test_a_word_pairs_score_must_be_finite(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("cat\tdog\t7.5\ncar\tbus\tnan\n")
    with pytest.raises(DataError, match=r":2: expected"):
        read_word_pairs(path)
