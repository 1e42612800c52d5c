"""Analogy and word-pair evaluation: every parameter changes the outcome; vectors never change."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from zoo.errors import DataError
from zoo.eval import dataset_path, pearson, rankdata, read_analogies, read_word_pairs, spearman
from zoo.vectors import KeyedVectors

QUESTIONS = """\
: royal
man woman king queen
boy girl prince princess
MAN WOMAN King Queen
man woman duke duchess
: gram-places
house castle man king
"""


def toy() -> KeyedVectors:
    from test_keyed_vectors import toy_vectors

    return toy_vectors()


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.txt"
    path.write_text(QUESTIONS)
    return path


def test_analogy_sections_totals_and_coverage(questions):
    kv = toy()
    before = kv.vectors.copy()
    result = kv.analogy_report(questions)
    score, sections = result  # unpacks like gensim's (score, sections)
    assert [s.name for s in sections] == ["royal", "gram-places", "Total accuracy"]
    royal = sections[0]
    assert len(royal.correct) == 3 and royal.skipped == 1 and royal.accuracy == 1.0
    assert result.covered == 4 and result.skipped == 1 and result.questions == 5
    assert score == pytest.approx(len(result.total.correct) / 4)
    assert result.semantic_accuracy == 1.0 and result.syntactic_accuracy in (0.0, 1.0)
    assert royal.correct[0] == ("MAN", "WOMAN", "KING", "QUEEN")  # uppercased, as gensim reports them
    gensim_score, gensim_sections = kv.evaluate_word_analogies(questions)
    assert (gensim_score, gensim_sections) == result.as_gensim() and gensim_score == score
    assert gensim_sections[0] == {"section": "royal", "correct": list(royal.correct), "incorrect": []}
    np.testing.assert_array_equal(kv.vectors, before)


def test_analogy_restrict_vocab_case_and_dummy(questions):
    kv = toy()
    assert kv.analogy_report(questions, restrict_vocab=4).covered == 2  # only man woman king queen
    assert kv.analogy_report(questions, case_insensitive=False).covered == 3
    dummy = kv.analogy_report(questions, dummy4unknown=True)
    assert dummy.skipped == 0 and dummy.covered == 5 and dummy.score < kv.analogy_report(questions).score
    none = kv.analogy_report(questions, restrict_vocab=0)
    assert np.isnan(none.score) and none.as_gensim()[0] == 0.0  # gensim's score when nothing is covered


def test_analogy_method_changes_answers(tmp_path):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    kv = KeyedVectors(words, rng.standard_normal((60, 5)))
    lines = [": random"]
    for _ in range(200):
        a, b, c = rng.choice(words, 3, replace=False)
        lines.append(f"{a} {b} {c} {kv.most_similar([b, c], [a], topn=1)[0][0]}")
    path = tmp_path / "q.txt"
    path.write_text("\n".join(lines))
    assert kv.analogy_report(path).score == 1.0  # batched = one by one
    cosmul = kv.analogy_report(path, method="3cosmul").score
    assert 0.0 < cosmul < 1.0
    with pytest.raises(DataError, match="3cosadd"):
        kv.analogy_report(path, method="cosine")


def test_analogy_file_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(": s\na b c\n")
    with pytest.raises(DataError, match=r"bad.txt:2: expected four words"):
        read_analogies(bad)
    with pytest.raises(DataError, match="shipped"):
        read_analogies(tmp_path / "absent.txt")


@pytest.mark.parametrize("text", ["", "# only a comment\n\n", ": a section without questions\n"])
def test_an_evaluation_file_without_an_item_is_an_error_not_nan(tmp_path, text):
    empty = tmp_path / "empty.txt"
    empty.write_text(text)
    with pytest.raises(DataError, match=r"empty.txt holds no analogy questions"):
        read_analogies(empty)
    if not text.startswith(":"):
        with pytest.raises(DataError, match=r"empty.txt holds no word pairs"):
            read_word_pairs(empty)


def test_shipped_sets_are_complete():
    sections = read_analogies("google")
    assert len(sections) == 14 and sum(len(q) for _, q in sections) == 19544
    assert sum(len(q) for n, q in sections if not n.startswith("gram")) == 8869
    assert len(read_word_pairs("wordsim353")) == 353 and len(read_word_pairs("simlex999")) == 999
    assert (dataset_path("google").parent / "README.md").is_file()


PAIRS = (
    "# comment\nking\tqueen\t8.5\nking\tprince\t9.0\nman\thouse\t1.0\n"
    "woman\tgirl\t7.0\nMAN\tboy\t8.0\nking\tzebra\t3.0\n"
)


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(PAIRS)
    return path


def test_word_pairs_correlations_and_oov(pairs):
    kv = toy()
    before = kv.vectors.copy()
    result = kv.word_pairs_report(pairs)
    assert result.pairs == 6 and result.scored == 5 and result.oov_fraction == pytest.approx(1 / 6)
    sims = [
        kv.similarity(a, b)
        for a, b in [("king", "queen"), ("king", "prince"), ("man", "house"), ("woman", "girl"), ("man", "boy")]
    ]
    gold = [8.5, 9.0, 1.0, 7.0, 8.0]
    assert result.spearman == pytest.approx(spearman(gold, sims))
    assert result.pearson == pytest.approx(pearson(gold, sims))
    gensim_pearson, gensim_spearman, oov_ratio = kv.evaluate_word_pairs(pairs)  # gensim's tuple
    assert gensim_pearson.statistic == pytest.approx(result.pearson) and gensim_spearman[0] == result.spearman
    assert oov_ratio == pytest.approx(100 / 6) and 0 < gensim_pearson.pvalue < 1
    np.testing.assert_array_equal(kv.vectors, before)


def test_word_pairs_parameters_change_the_outcome(pairs, tmp_path):
    kv = toy()
    base = kv.word_pairs_report(pairs)
    assert kv.word_pairs_report(pairs, case_insensitive=False).scored == 4
    assert kv.word_pairs_report(pairs, restrict_vocab=4).scored == 1  # man woman king queen
    dummy = kv.word_pairs_report(pairs, dummy4unknown=True)
    assert dummy.scored == 6 and dummy.spearman != base.spearman
    semicolons = tmp_path / "pairs.csv"
    semicolons.write_text(PAIRS.replace("\t", ";"))
    assert kv.word_pairs_report(semicolons, delimiter=";") == base
    with pytest.raises(DataError, match=r"pairs\.csv:2"):
        kv.word_pairs_report(semicolons)
    latin1 = tmp_path / "pairs-latin1.tsv"
    latin1.write_bytes("king\tqueen\t8.5\nking\tprince\t9.0\nman\tcaf\u00e9\t1.0\n".encode("latin-1"))
    assert kv.word_pairs_report(latin1, encoding="latin-1").pairs == 3
    with pytest.raises(DataError, match="one of the 6 pairs|1 of the 6 pairs"):
        kv.evaluate_word_pairs(pairs, restrict_vocab=4)  # gensim's tuple needs two scored pairs


def test_rank_correlation_handles_ties():
    assert list(rankdata([10, 20, 20, 5])) == [2.0, 3.5, 3.5, 1.0]
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, 50), rng.integers(0, 5, 50)  # many ties
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
    assert pearson(x, y) == pytest.approx(scipy_stats.pearsonr(x, y).statistic)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3])) and np.isnan(pearson([1], [2]))


def test_rank_correlation_is_exact_with_ties_and_quiet_where_undefined():
    # ranks of x: 2, 3.5, 3.5, 1 (the tie shares the mean); of y: 1, 2, 3, 4 -> r = -1.5 / sqrt(4.5 * 5)
    assert spearman([10, 20, 20, 5], [1, 2, 3, 4]) == pytest.approx(-1 / np.sqrt(10), abs=1e-15)
    assert pearson([1, 2, 3], [2, 4, 7]) == pytest.approx(15 / np.sqrt(228), abs=1e-15)  # 5 / sqrt(2 * 114 / 9)
    assert spearman([3, 1, 2], [30, 10, 20]) == 1.0 and pearson([1, 2], [2, 1]) == pytest.approx(-1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # constant or too short: NaN, without scipy's warnings
        for x, y in [([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [5, 5, 5]), ([1], [2]), ([], [])]:
            assert np.isnan(pearson(x, y)) and np.isnan(spearman(x, y)), (x, y)
    with pytest.raises(DataError, match="different shapes"):
        spearman([1, 2, 3], [1, 2])
