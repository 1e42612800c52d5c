"""KeyedVectors answers as gensim's KeyedVectors does, method by method.

First, exact values on hand-made 2-d vectors, worked out by hand (these run without gensim).
Then the same methods against gensim on the same vectors: PPMI rows (projected to 48
dimensions) of 6,000 lines of real English from the shared corpus, with its mixed casing,
queried with the Google analogies, WordSim-353 and SimLex-999; and PPMI-SVD vectors of a
generated corpus whose analogies are mostly solved, with case variants added. Each vector set
is written once as a word2vec file that both libraries load; without gensim those tests skip.
"""

from __future__ import annotations

import gzip
import itertools
import sys
import warnings
from math import sqrt
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from word_corpora import country_questions, country_sentences

from zoo.data.cooccurrence import cooccurrence_matrix, pmi_matrix
from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.errors import DataError, ZooError
from zoo.eval import dataset_path
from zoo.vectors import KeyedVectors

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "en-mix.txt.gz"

# -- exact values on hand-made vectors ------------------------------------------------------
#
# a = (1, 0), b = (0, 1), c = (1, 1), d = (-1, 0), e = (3, 4): the cosines with a are
# 1, 0, 1/sqrt(2), -1 and 3/5; cos(c, e) = 7 / (5 sqrt(2)).
R2 = 1 / sqrt(2)
COS_CE = 7 / (5 * sqrt(2))


@pytest.fixture
def plane():
    words = ["a", "b", "c", "d", "e"]
    vectors = [[1, 0], [0, 1], [1, 1], [-1, 0], [3, 4]]
    return KeyedVectors(words, vectors, counts=[50, 40, 30, 20, 10])


def pairs_of(result):
    return [(w, round(s, 6)) for w, s in result]


def test_most_similar_by_hand(plane):
    assert pairs_of(plane.most_similar("a", topn=2)) == [("c", round(R2, 6)), ("e", 0.6)]
    assert pairs_of(plane.most_similar(["a", "b"], topn=3)) == [
        ("c", 1.0),
        ("e", round(COS_CE, 6)),
        ("d", round(-R2, 6)),
    ]
    assert plane.most_similar(0, topn=1) == plane.most_similar("a", topn=1)  # a row number is a key
    np.testing.assert_allclose(plane.most_similar("a", topn=None), [1, 0, R2, -1, 0.6], atol=1e-7)
    assert plane.most_similar("a", topn=0) == plane.most_similar("a", topn=-2) == []
    assert pairs_of(plane.most_similar("b", restrict_vocab=2)) == [("a", 0.0)]
    assert [w for w, _ in plane.most_similar("b", clip_start=2, clip_end=4)] == ["c", "d"]
    # a raw vector enters unscaled: (10, 0) + b points at a, where (1, 0) + b would point at c
    assert plane.most_similar([np.array([10.0, 0.0]), "b"], topn=1)[0][0] == "a"
    assert plane.most_similar([np.array([1.0, 0.0]), "b"], topn=1)[0][0] == "c"
    # a (word, weight) pair's weight is used as given, among the negatives too
    assert plane.most_similar("a", negative=[("b", 1.0)], topn=1) == plane.most_similar(["a", "b"], topn=1)
    assert pairs_of(plane.most_similar("a", negative=["b"], topn=1)) == [("c", 0.0)]
    assert pairs_of(plane.similar_by_vector([0.0, 2.0], topn=1)) == [("b", 1.0)]
    assert plane.similar_by_word("a", 2) == plane.similar_by_key("a", 2) == plane.most_similar("a", topn=2)


def test_cosmul_by_hand(plane):
    # ((1 + cos(x, c)) / 2) / ((1 + cos(x, b)) / 2 + 1e-6) for x = a, e, d
    shifted = lambda cos: (1 + cos) / 2
    expected = [
        ("a", shifted(R2) / (shifted(0) + 1e-6)),
        ("e", shifted(COS_CE) / (shifted(0.8) + 1e-6)),
        ("d", shifted(-R2) / (shifted(0) + 1e-6)),
    ]
    assert pairs_of(plane.most_similar_cosmul("c", "b")) == [(w, round(s, 6)) for w, s in expected]
    assert plane.most_similar_cosmul("c", "b", topn=1, restrict_vocab=2)[0][0] == "a"
    with pytest.raises(DataError, match="positive"):
        plane.most_similar_cosmul(negative=["a"])


def test_pairwise_by_hand(plane):
    assert plane.similarity("c", "e") == pytest.approx(COS_CE, abs=1e-7)
    assert plane.distance("a", "b") == pytest.approx(1.0, abs=1e-7)
    # n_similarity averages raw vectors: a + e = (4, 4) is at 45 degrees from b (unit vectors: 63.4)
    assert plane.n_similarity(["a", "e"], ["b"]) == pytest.approx(R2, abs=1e-7)
    assert plane.n_similarity(["e", "unknown"], ["c"]) == pytest.approx(COS_CE, abs=1e-7)
    assert plane.n_similarity(["unknown"], ["c"]) == 0.0
    with pytest.raises(ZeroDivisionError, match="non-empty"):
        plane.n_similarity([], ["a"])
    np.testing.assert_allclose(plane.distances("a"), [0, 1, 1 - R2, 2, 0.4], atol=1e-7)
    np.testing.assert_allclose(plane.distances("a", ["e", "b"]), [0.4, 1.0], atol=1e-7)
    np.testing.assert_allclose(plane.distances(np.array([0.0, 2.0])), [1, 0, 1 - R2, 1, 0.2], atol=1e-7)
    np.testing.assert_allclose(KeyedVectors.cosine_similarities(np.array([1.0, 0.0]), np.eye(2)), [1.0, 0.0])


def test_neighbour_ranks_by_hand(plane):
    assert plane.closer_than("a", "e") == ["c"]  # distances from a: b 1, c 0.29, d 2, e 0.4
    assert plane.closer_than("a", "d") == ["b", "c", "e"] and plane.closer_than("a", "c") == []
    assert (plane.rank("a", "c"), plane.rank("a", "e"), plane.rank("a", "d")) == (1, 2, 4)
    assert plane.most_similar_to_given("a", ["b", "d", "e"]) == "e"
    assert plane.most_similar_to_given("a", ["b", "b"]) == "b"
    with pytest.raises(KeyError, match="Key 'z' not present"):
        plane.closer_than("a", "z")


def test_centrality_by_hand(plane):
    # the mean of a, b and c's unit vectors points along (1, 1): c first; a and b tie, the later word first
    ranked = plane.rank_by_centrality(["a", "b", "c", "unknown"])
    assert [(round(s, 6), w) for s, w in ranked] == [(1.0, "c"), (round(R2, 6), "b"), (round(R2, 6), "a")]
    assert plane.doesnt_match(["a", "b", "c"]) == "a"
    assert plane.relative_cosine_similarity("a", "c", topn=2) == pytest.approx(R2 / (R2 + 0.6), abs=1e-7)
    with pytest.raises(DataError, match="none of the 2 words"):
        plane.doesnt_match(["x", "y"])


def test_mean_vector_index_and_counts_by_hand(plane):
    np.testing.assert_allclose(plane.get_mean_vector(["a", "e"]), [0.8, 0.4], atol=1e-7)
    np.testing.assert_allclose(plane.get_mean_vector(["a", "e"], pre_normalize=False), [2, 2])
    np.testing.assert_allclose(plane.get_mean_vector(["a", "e"], [1.0, -1.0]), [0.2, -0.4], atol=1e-7)
    np.testing.assert_allclose(plane.get_mean_vector(["b", np.array([4.0, 0.0])]), [2.0, 0.5])
    np.testing.assert_allclose(plane.get_mean_vector(["a", "x"]), [1.0, 0.0])
    with pytest.raises(KeyError, match="Key 'x' not present"):
        plane.get_mean_vector(["a", "x"], ignore_missing=False)
    assert plane.get_index("c") == plane.get_index(2) == 2 and plane.get_index("x", 9) == 9
    assert ("c" in plane, 4 in plane, 5 in plane, "x" in plane) == (True, True, False, False)
    assert plane.get_vecattr("b", "count") == 40
    np.testing.assert_array_equal(plane[["e", 0]], [[3, 4], [1, 0]])
    np.testing.assert_allclose(plane.norms, [1, 1, sqrt(2), 1, 5])
    np.testing.assert_allclose(plane.get_normed_vectors()[4], [0.6, 0.8])
    with pytest.raises(KeyError, match=r"rows are numbered 0 to 4"):
        plane.get_vector(5)


def test_word_movers_distance_by_hand(plane):
    pytest.importorskip("ot", reason="wmdistance needs POT (pip install 'zoo[wmd]')")
    # all of a's mass goes half to b, half to d
    assert plane.wmdistance(["a"], ["b", "d"], norm=False) == pytest.approx(0.5 * sqrt(2) + 0.5 * 2)
    # two thirds a and one third e all go to c
    assert plane.wmdistance(["a", "a", "e"], ["c"], norm=False) == pytest.approx(2 / 3 + sqrt(13) / 3)
    unit_c = np.array([R2, R2])
    expected = 2 / 3 * np.linalg.norm([1, 0] - unit_c) + 1 / 3 * np.linalg.norm([0.6, 0.8] - unit_c)
    assert plane.wmdistance(["a", "a", "e", "unknown"], ["c"]) == pytest.approx(expected)
    assert plane.wmdistance(["a", "a"], ["a"]) == 0.0
    assert plane.wmdistance(["unknown"], ["a"]) == float("inf")


def test_word_movers_distance_names_its_extra(plane, monkeypatch):
    monkeypatch.setitem(sys.modules, "ot", None)  # as if POT were not installed
    with pytest.raises(ImportError, match=r"pip install 'zoo\[wmd\]'"):
        plane.wmdistance(["a"], ["b"])


QUESTIONS = """\
: first
b a c e
a b c d
: second
c e a b
a b x y
"""


def test_analogies_in_gensim_form_by_hand(plane, tmp_path):
    # on unit vectors: a - b + c = (1.71, -0.29), nearest e; b - a + c = (-0.29, 1.71), nearest e (not d);
    # e - c + a = (0.89, 0.09), nearest b; the last question has unknown words
    path = tmp_path / "questions.txt"
    path.write_text(QUESTIONS)
    score, sections = plane.evaluate_word_analogies(path)
    assert [s["section"] for s in sections] == ["first", "second", "Total accuracy"]
    assert sections[0] == {"section": "first", "correct": [("B", "A", "C", "E")], "incorrect": [("A", "B", "C", "D")]}
    assert sections[1] == {"section": "second", "correct": [("C", "E", "A", "B")], "incorrect": []}
    assert sections[2]["correct"] == [("B", "A", "C", "E"), ("C", "E", "A", "B")] and score == pytest.approx(2 / 3)
    score, sections = plane.evaluate_word_analogies(path, case_insensitive=False, dummy4unknown=True)
    assert sections[1]["incorrect"] == [("a", "b", "x", "y")] and score == pytest.approx(2 / 4)
    assert plane.evaluate_word_analogies(path, restrict_vocab=1) == (
        0.0,
        [{"section": n, "correct": [], "incorrect": []} for n in ["first", "second", "Total accuracy"]],
    )
    # 3CosMul answers d to "a b c ?": cos'(d, a) = 0 puts it over the 1e-6 denominator
    cosmul_score, _ = plane.evaluate_word_analogies(path, similarity_function="most_similar_cosmul")
    assert cosmul_score == 1.0
    with pytest.raises(DataError, match="similarity_function"):
        plane.evaluate_word_analogies(path, similarity_function="cosine")


def test_word_pairs_in_gensim_form_by_hand(plane, tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("# w1\tw2\tscore\na\tb\t1.0\na\tc\t5.0\nc\te\t9.0\na\tzz\t3.0\n")
    pearson, spearman, oov = plane.evaluate_word_pairs(path)
    model = [0.0, R2, COS_CE]
    assert spearman.statistic == pytest.approx(1.0) and oov == 25.0
    assert tuple(pearson) == pytest.approx(tuple(scipy.stats.pearsonr([1.0, 5.0, 9.0], model)), abs=1e-6)
    assert pearson.statistic == pearson[0] and spearman.pvalue == spearman[1]
    pearson, spearman, oov = plane.evaluate_word_pairs(path, dummy4unknown=True)
    assert oov == 25.0 and spearman.statistic == pytest.approx(
        scipy.stats.spearmanr([1, 5, 9, 3], [*model, 0]).statistic
    )
    with pytest.raises(DataError, match="1 of the 4 pairs"):
        plane.evaluate_word_pairs(path, restrict_vocab=2)


# -- against gensim -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gensim_models():
    return pytest.importorskip("gensim.models", reason="the parity tests compare with gensim (pip install gensim)")


def _both(path: Path, gensim_models) -> tuple[KeyedVectors, object]:
    binary = path.suffix == ".bin"
    return KeyedVectors.load(path), gensim_models.KeyedVectors.load_word2vec_format(str(path), binary=binary)


@pytest.fixture(scope="module")
def real(tmp_path_factory, gensim_models):
    """(zoo, gensim) on PPMI vectors of 5,000 words of real text (most frequent first)."""
    if not CORPUS.is_file():
        pytest.skip(f"the shared corpus {CORPUS.name} is absent (../shared/data/corpus)")
    with gzip.open(CORPUS, "rt", encoding="utf-8") as text:
        sentences = [line.split() for line in itertools.islice(text, 6000)]
    vocab = build_word_vocab(count_tokens(sentences), min_count=3, max_vocab=5000)
    ppmi = pmi_matrix(cooccurrence_matrix(sentences, vocab, window=5), cds=0.75, positive=True)
    vectors = ppmi @ np.random.default_rng(0).standard_normal((ppmi.shape[1], 48))
    path = KeyedVectors(vocab.tokens, vectors).save_word2vec_format(
        tmp_path_factory.mktemp("real") / "v.bin", binary=True
    )
    return _both(path, gensim_models)


@pytest.fixture(scope="module")
def countries(tmp_path_factory, gensim_models):
    """(zoo, gensim, questions file) on PPMI-SVD vectors of the generated country corpus, with
    case variants: ``Food2`` before ``food2`` (so it is the one case-insensitive lookups use),
    ``CITY3`` and ``Lang5`` after their lowercase words."""
    sentences = country_sentences()
    vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    ppmi = pmi_matrix(cooccurrence_matrix(sentences, vocab, window=5, weighting="linear"), cds=0.75).toarray()
    u, s, _ = np.linalg.svd(ppmi)
    vectors = u[:, :10] * np.sqrt(s[:10])
    words, rows = list(vocab.tokens), list(vectors)
    rng = np.random.default_rng(1)
    noisy = lambda word: rows[words.index(word)] + 0.3 * rng.standard_normal(10)
    words, rows = ["Food2", *words], [noisy("food2"), *rows]
    for variant in ("CITY3", "Lang5"):
        words.append(variant)
        rows.append(noisy(variant.lower()))
    folder = tmp_path_factory.mktemp("countries")
    path = KeyedVectors(words, np.stack(rows)).save_word2vec_format(folder / "v.txt")
    questions = folder / "questions.txt"
    questions.write_text(country_questions() + ": unknown\ncity1 lang1 city2 klingon\nCity1 LANG1 city4 Lang4\n")
    return (*_both(path, gensim_models), questions)


def same_neighbours(ours, theirs, atol=2e-6):
    """Equal (word, score) lists; neighbours whose scores tie within `atol` may swap places."""
    assert len(ours) == len(theirs)
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=atol)
    for (word, score), (other, _) in zip(ours, theirs, strict=True):
        if word != other:
            ties = {w for w, s in theirs if abs(s - score) <= atol}
            assert word in ties, (ours, theirs)


def test_the_word2vec_file_loads_alike(real):
    ours, theirs = real
    assert ours.index_to_key == theirs.index_to_key and ours.key_to_index == theirs.key_to_index
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    theirs.fill_norms()
    np.testing.assert_array_equal(ours.norms, theirs.norms)
    np.testing.assert_allclose(ours.get_normed_vectors(), theirs.get_normed_vectors(), atol=1e-7)
    assert ours.get_index("the") == theirs.get_index("the") and ours.get_index(7) == theirs.get_index(7) == 7
    np.testing.assert_array_equal(ours[["the", 3, "of"]], theirs[["the", 3, "of"]])
    keys = ["the", 4999, 5000, -1, "zzzq"]
    assert [k in ours for k in keys] == [k in theirs for k in keys] == [True, True, False, False, False]


QUERIES = [
    {"positive": ["king"]},
    {"positive": ["London", "France"], "negative": ["Paris"]},
    {"positive": ["woman", "king"], "negative": ["man"], "topn": 3},
    {"positive": "city", "topn": 25},
    {"positive": ["war"], "restrict_vocab": 500},
    {"positive": ["music"], "clip_start": 100, "clip_end": 900},
    {"positive": [("good", 2.0), "film"], "negative": [("bad", -0.5)]},
    {"positive": [12, "year"], "negative": [40]},
    {"positive": ["day"], "topn": 0},
    {"positive": ["day"], "topn": -3},
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: str(q)[:40])
def test_most_similar(real, query):
    ours, theirs = real
    same_neighbours(ours.most_similar(**query), theirs.most_similar(**query))


def test_most_similar_all_scores_vectors_and_aliases(real):
    ours, theirs = real
    for query in ({"positive": ["king"]}, {"positive": ["king"], "restrict_vocab": 300}, {"positive": ["a", "an"]}):
        all_ours, all_theirs = ours.most_similar(topn=None, **query), theirs.most_similar(topn=None, **query)
        assert all_ours.shape == all_theirs.shape and all_ours.dtype == all_theirs.dtype
        np.testing.assert_allclose(all_ours, all_theirs, atol=2e-6)
    raw = theirs["government"] * 3 + theirs["people"]  # raw vectors enter unscaled
    same_neighbours(ours.most_similar([raw, "state"]), theirs.most_similar([raw, "state"]))
    same_neighbours(
        ours.most_similar(np.stack([raw, theirs["law"]])), theirs.most_similar(np.stack([raw, theirs["law"]]))
    )
    same_neighbours(ours.similar_by_vector(raw, topn=7), theirs.similar_by_vector(raw, topn=7))
    same_neighbours(ours.similar_by_word("school", 5, 2000), theirs.similar_by_word("school", 5, 2000))
    same_neighbours(ours.similar_by_key("house"), theirs.similar_by_key("house"))


GENSIM_COSMUL_WARNS = pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`:DeprecationWarning")


@GENSIM_COSMUL_WARNS
@pytest.mark.parametrize(
    "query",
    [
        {"positive": ["woman", "king"], "negative": ["man"]},
        {"positive": ["London", "France"], "negative": ["Paris"], "topn": 4},
        {"positive": ["school"]},
        {"positive": ["music", "film", "book"], "negative": ["war", "army"], "topn": 20},
    ],
    ids=lambda q: str(q)[:40],
)
def test_most_similar_cosmul(real, query):
    ours, theirs = real
    same_neighbours(ours.most_similar_cosmul(**query), theirs.most_similar_cosmul(**query))
    all_ours, all_theirs = (kv.most_similar_cosmul(**{**query, "topn": None}) for kv in (ours, theirs))
    assert all_ours.dtype == all_theirs.dtype
    np.testing.assert_allclose(all_ours, all_theirs, atol=2e-6)


@GENSIM_COSMUL_WARNS
def test_cosmul_takes_raw_vectors_as_they_are(real):
    ours, theirs = real
    raw = 2.5 * theirs["music"]
    same_neighbours(
        ours.most_similar_cosmul([raw, "song"], ["war"]), theirs.most_similar_cosmul([raw, "song"], ["war"])
    )


def test_pairwise_similarities_and_distances(real):
    ours, theirs = real
    pairs = [("king", "Queen"), ("London", "Paris"), ("war", "music"), ("the", "The"), ("man", "man")]
    for a, b in pairs:
        assert ours.similarity(a, b) == pytest.approx(float(theirs.similarity(a, b)), abs=1e-6)
        assert ours.distance(a, b) == pytest.approx(float(theirs.distance(a, b)), abs=1e-6)
    sets = [(["king", "Queen"], ["man", "woman"]), (["the"], ["a", "an", "of"]), (["war", "zzzq"], ["army"])]
    for ws1, ws2 in sets:  # n_similarity averages the raw vectors and skips unknown words
        assert ours.n_similarity(ws1, ws2) == pytest.approx(float(theirs.n_similarity(ws1, ws2)), abs=1e-6)
    assert ours.n_similarity(["zzzq"], ["war"]) == float(theirs.n_similarity(["zzzq"], ["war"])) == 0.0
    for ws1, ws2 in [([], ["war"]), (["war"], [])]:
        for kv in (ours, theirs):
            with pytest.raises(ZeroDivisionError):
                kv.n_similarity(ws1, ws2)


def test_distances_closer_than_and_rank(real):
    ours, theirs = real
    np.testing.assert_array_equal(ours.distances("king"), theirs.distances("king"))
    others = ["Queen", "man", "The", "war"]
    np.testing.assert_array_equal(ours.distances("king", others), theirs.distances("king", others))
    vector = theirs["music"] - theirs["war"]
    np.testing.assert_allclose(ours.distances(vector, others), theirs.distances(vector, others), atol=1e-6)
    assert ours.distances("king").dtype == theirs.distances("king").dtype == np.float32
    for a, b in [("king", "Queen"), ("London", "Paris"), ("the", "a"), ("war", "peace"), ("man", "man")]:
        assert ours.closer_than(a, b) == theirs.closer_than(a, b)
        assert ours.rank(a, b) == theirs.rank(a, b)
    assert len(ours.closer_than("king", "Queen")) > 0


def test_choosing_among_words(real):
    ours, theirs = real
    for key, options in [("king", ["Queen", "war", "music"]), ("London", ["Paris", "the", "France", "city"])]:
        assert ours.most_similar_to_given(key, options) == theirs.most_similar_to_given(key, options)
    for words in (["food", "water", "wine", "car"], ["king", "Queen", "prince", "the", "zzzq"], ["war"]):
        assert ours.doesnt_match(words) == theirs.doesnt_match(words)
        ranked_ours, ranked_theirs = ours.rank_by_centrality(words), theirs.rank_by_centrality(words)
        assert [w for _, w in ranked_ours] == [w for _, w in ranked_theirs]
        np.testing.assert_allclose([s for s, _ in ranked_ours], [s for s, _ in ranked_theirs], atol=1e-6)
    for a, b, topn in [("king", "Queen", 10), ("war", "army", 3)]:
        expected = theirs.relative_cosine_similarity(a, b, topn)
        assert ours.relative_cosine_similarity(a, b, topn) == pytest.approx(expected, abs=1e-6)


def test_mean_vectors(real):
    ours, theirs = real
    keys = ["king", "Queen", 30, theirs["war"]]
    for options in ({}, {"pre_normalize": False}, {"post_normalize": True}, {"weights": [1.0, -2.0, 0.5, 3.0]}):
        np.testing.assert_allclose(
            ours.get_mean_vector(keys, **options), theirs.get_mean_vector(keys, **options), atol=1e-6
        )
    np.testing.assert_allclose(
        ours.get_mean_vector(["king", "zzzq"]), theirs.get_mean_vector(["king", "zzzq"]), atol=1e-6
    )
    for kv in (ours, theirs):
        with pytest.raises(KeyError, match="zzzq"):
            kv.get_mean_vector(["king", "zzzq"], ignore_missing=False)


DOCUMENTS = [
    ("obama speaks to the media in illinois", "the president greets the press in chicago"),
    ("the king and the Queen", "a man and a woman"),
    ("music music music film", "war film"),
    ("the the", "the"),  # one word in all: 0
    ("zzzq qqqz", "the war"),  # nothing known on one side: inf
    ("war", "War"),
]


@pytest.mark.parametrize("norm", [True, False])
def test_word_movers_distance(real, norm):
    pytest.importorskip("ot", reason="wmdistance needs POT (pip install 'zoo[wmd]')")
    ours, theirs = real
    for first, second in (tuple(text.split() for text in pair) for pair in DOCUMENTS):
        expected = theirs.wmdistance(first, second, norm=norm)
        assert ours.wmdistance(first, second, norm=norm) == pytest.approx(expected, rel=1e-9, abs=1e-9), (first, second)
    assert ours.wmdistance(*(text.split() for text in DOCUMENTS[1]), norm=norm) > 0


@pytest.fixture(scope="module")
def google_part(tmp_path_factory):
    """Every third line of the Google analogies (all 14 section headers kept)."""
    lines = Path(dataset_path("google")).read_text().splitlines()
    path = tmp_path_factory.mktemp("google") / "questions.txt"
    path.write_text("\n".join(line for i, line in enumerate(lines) if line.startswith(":") or i % 3 == 0) + "\n")
    return path


@pytest.mark.parametrize(
    "options", [{}, {"restrict_vocab": 2000, "dummy4unknown": True}, {"case_insensitive": False}], ids=str
)
def test_google_analogies(real, google_part, options):
    ours, theirs = real
    score, sections = ours.evaluate_word_analogies(google_part, **options)
    assert (score, sections) == theirs.evaluate_word_analogies(str(google_part), **options)
    assert len(sections) == 15 and sum(len(s["correct"]) + len(s["incorrect"]) for s in sections[:-1]) > 400


@pytest.mark.parametrize("options", [{}, {"case_insensitive": False}, {"dummy4unknown": True}], ids=str)
def test_analogies_with_case_variants_mostly_solved(countries, options):
    ours, theirs, questions = countries
    score, sections = ours.evaluate_word_analogies(questions, **options)
    assert (score, sections) == theirs.evaluate_word_analogies(str(questions), **options)
    assert score > 0.5 and [s["section"] for s in sections][-1] == "Total accuracy"


@pytest.mark.parametrize("pairs", ["wordsim353", "simlex999"])
@pytest.mark.parametrize(
    "options",
    [{}, {"restrict_vocab": 1000}, {"case_insensitive": False}, {"dummy4unknown": True}],
    ids=str,
)
def test_word_pairs(real, pairs, options):
    ours, theirs = real
    (pearson, spearman, oov) = ours.evaluate_word_pairs(pairs, **options)
    expected = theirs.evaluate_word_pairs(str(dataset_path(pairs)), **options)
    assert type(pearson) is type(expected[0]) and type(spearman) is type(expected[1])
    np.testing.assert_allclose(tuple(pearson), tuple(expected[0]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tuple(spearman), tuple(expected[1]), rtol=1e-5, atol=1e-7)
    assert spearman.statistic == pytest.approx(expected[1].statistic, abs=1e-6)
    assert oov == expected[2]


def test_unknown_words_raise_key_errors_in_both(real):
    ours, theirs = real
    calls = [
        lambda kv: kv.get_vector("zzzq"),
        lambda kv: kv["zzzq"],
        lambda kv: kv.most_similar(["king", "zzzq"]),
        lambda kv: kv.similarity("king", "zzzq"),
        lambda kv: kv.distances("king", ["Queen", "zzzq"]),
        lambda kv: kv.closer_than("king", "zzzq"),
        lambda kv: kv.rank("zzzq", "king"),
        lambda kv: kv.most_similar_to_given("king", ["Queen", "zzzq"]),
        lambda kv: kv.get_index("zzzq"),
        lambda kv: kv.get_vector(5000),
    ]
    for call in calls:
        for kv in (ours, theirs):
            with pytest.raises(KeyError, match="zzzq|5000"):
                call(kv)
    assert ours.get_index("zzzq", 17) == theirs.get_index("zzzq", 17) == 17


# -- filling a table, per-word attributes and word2vec files, against gensim ----------------


def _filled(make):
    """The same fills on gensim's KeyedVectors and zoo's: an empty table, a preallocated one."""
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((8, 4)).astype(np.float32)
    table = make(4)
    table.add_vectors(["a", "b", "c"], rows[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gensim's: growing by one row is slow
        table.add_vector("d", rows[3])
    table["a"] = rows[4]  # replaces
    table[["b", "e"]] = rows[5:7]
    table.add_vectors(["c", "f"], rows[6:8])  # c is held: kept
    table.set_vecattr("b", "count", 9)
    table.set_vecattr("e", "tag", "x")
    preallocated = make(4, 3)
    first = [preallocated.add_vector(k, rows[i]) for i, k in enumerate("pq")]
    return table, preallocated, first


def test_an_empty_table_fills_as_gensims(gensim_models):
    ours, ours_pre, ours_first = _filled(KeyedVectors)
    theirs, theirs_pre, theirs_first = _filled(gensim_models.KeyedVectors)
    for mine, other in ((ours, theirs), (ours_pre, theirs_pre)):
        assert mine.index_to_key == other.index_to_key and mine.key_to_index == other.key_to_index
        np.testing.assert_array_equal(mine.vectors, other.vectors)
        assert mine.next_index == other.next_index and len(mine) == len(other)
        assert mine.expandos.keys() == other.expandos.keys()
        for attr in mine.expandos:
            assert list(mine.expandos[attr]) == list(other.expandos[attr])
    assert ours_first == theirs_first == [0, 1] and ours_pre.index_to_key == ["p", "q", None]
    assert ours.get_vecattr("b", "count") == theirs.get_vecattr("b", "count") == 9
    assert ours.distance("e", "e") == 0.0  # gensim: 1 - a float32 rounding of 1
    np.testing.assert_allclose(ours.most_similar("a", topn=None), theirs.most_similar("a", topn=None), atol=1e-6)
    for kv in (ours, theirs):
        with pytest.raises(KeyError):
            kv.get_vecattr("a", "never")
    with pytest.raises(ZooError):
        ours.get_vecattr("a", "never")


@pytest.fixture(scope="module")
def counted(tmp_path_factory, gensim_models):
    """A word2vec text file of 40 words and its ``word count`` file, both written by gensim."""
    rng = np.random.default_rng(6)
    theirs = gensim_models.KeyedVectors(6)
    words = [f"w{i}" for i in range(40)]
    theirs.add_vectors(words, rng.standard_normal((40, 6)).astype(np.float32))
    for i, word in enumerate(words):
        theirs.set_vecattr(word, "count", 500 - 7 * i + (i % 5) * 3)  # not quite in row order
    folder = tmp_path_factory.mktemp("counted")
    theirs.save_word2vec_format(str(folder / "v.txt"), str(folder / "v.vocab"), False)
    return folder


def test_word2vec_files_with_counts_load_and_save_as_gensims(counted, gensim_models, tmp_path):
    fname, fvocab = counted / "v.txt", counted / "v.vocab"
    ours = KeyedVectors.load_word2vec_format(fname, fvocab, False)  # gensim's positional order
    theirs = gensim_models.KeyedVectors.load_word2vec_format(str(fname), str(fvocab), False)
    assert ours.index_to_key == theirs.index_to_key
    assert [ours.get_vecattr(w, "count") for w in ours.index_to_key] == list(theirs.expandos["count"])
    for binary in (False, True):
        for options in ({}, {"total_vec": 45, "prefix": "p_"}, {"write_header": False}):
            mine, other = tmp_path / f"zoo{binary}", tmp_path / f"gensim{binary}"
            ours.save_word2vec_format(mine, tmp_path / "zoo.vocab", binary, **options)
            theirs.save_word2vec_format(str(other), str(tmp_path / "gensim.vocab"), binary, **options)
            assert mine.read_bytes() == other.read_bytes(), options
            assert (tmp_path / "zoo.vocab").read_bytes() == (tmp_path / "gensim.vocab").read_bytes()
    for kv, path in ((ours, tmp_path / "a_zoo"), (theirs, tmp_path / "a_gensim")):
        kv.save_word2vec_format(str(path))
        kv.save_word2vec_format(str(path), append=True, write_header=False, prefix="x_")
    assert (tmp_path / "a_zoo").read_bytes() == (tmp_path / "a_gensim").read_bytes()


def test_word2vec_files_without_counts_answer_as_gensims(counted, gensim_models, tmp_path):
    fname = counted / "v.txt"
    ours = KeyedVectors.load_word2vec_format(fname, limit=30, datatype=np.float16)
    theirs = gensim_models.KeyedVectors.load_word2vec_format(str(fname), limit=30, datatype=np.float16)
    assert ours.vectors.dtype == theirs.vectors.dtype == np.float16
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    assert [ours.get_vecattr(w, "count") for w in ours.index_to_key] == [
        theirs.get_vecattr(w, "count") for w in theirs.index_to_key
    ]  # gensim's stand-in counts: rows to the end
    ours.save_word2vec_format(tmp_path / "zoo.txt", tmp_path / "zoo.vocab")
    theirs.save_word2vec_format(str(tmp_path / "gensim.txt"), str(tmp_path / "gensim.vocab"))
    assert (tmp_path / "zoo.vocab").read_bytes() == (tmp_path / "gensim.vocab").read_bytes()
    assert (tmp_path / "zoo.txt").read_bytes() == (tmp_path / "gensim.txt").read_bytes()
    ours.sort_by_descending_frequency()
    theirs.sort_by_descending_frequency()
    assert ours.index_to_key == theirs.index_to_key


@pytest.mark.parametrize("binary", [False, True])
def test_a_truncated_file_is_an_eof_error_in_both(counted, gensim_models, tmp_path, binary):
    whole = tmp_path / "whole"
    KeyedVectors.load_word2vec_format(counted / "v.txt").save_word2vec_format(whole, binary=binary)
    cut = tmp_path / "cut"
    data = whole.read_bytes()
    cut.write_bytes(data[:-30] if binary else data[: data.rindex(b"\n", 0, -1) + 1])  # text: a whole line less
    with pytest.raises(EOFError):
        gensim_models.KeyedVectors.load_word2vec_format(str(cut), binary=binary)
    with pytest.raises(EOFError) as caught:
        KeyedVectors.load_word2vec_format(cut, binary=binary)
    assert isinstance(caught.value, DataError) and "the file ends" in str(caught.value)
    gz = tmp_path / "cut.gz"
    gz.write_bytes(gzip.compress(whole.read_bytes())[:-40])
    with pytest.raises(EOFError):
        KeyedVectors.load_word2vec_format(gz, binary=binary)


@GENSIM_COSMUL_WARNS
def test_cosmul_ignores_restrict_vocab_as_gensim(real):
    ours, theirs = real
    query = {"positive": ["woman", "king"], "negative": ["man"], "restrict_vocab": 300}
    same_neighbours(ours.most_similar_cosmul(**query), theirs.most_similar_cosmul(**query))
    all_ours, all_theirs = (kv.most_similar_cosmul(**query, topn=None) for kv in (ours, theirs))
    assert all_ours.shape == all_theirs.shape == (len(ours),)
    np.testing.assert_allclose(all_ours, all_theirs, atol=2e-6)
    assert ours.distance("king", "king") == 0  # gensim: 1 - float32 rounding


def test_unknown_keys_are_zoo_errors_and_key_errors(real):
    ours, _ = real
    with pytest.raises(KeyError) as caught:
        ours["zzzq"]
    assert isinstance(caught.value, ZooError)
