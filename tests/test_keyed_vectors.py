"""KeyedVectors: every query parameter changes the outcome; analogies with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from zoo.errors import DataError
from zoo.vectors import KeyedVectors

# Hand-made vectors on named axes: royalty, gender (+male), person, age (+young), place, noise.
AXES = {"royal": 0, "male": 1, "person": 2, "young": 3, "place": 4}
FEATURES = {
    "man": {"person": 1, "male": 1},
    "woman": {"person": 1, "male": -1},
    "king": {"royal": 1, "male": 1, "person": 0.5},
    "queen": {"royal": 1, "male": -1, "person": 0.5},
    "boy": {"person": 1, "male": 1, "young": 1},
    "girl": {"person": 1, "male": -1, "young": 1},
    "prince": {"royal": 1, "male": 1, "young": 1, "person": 0.5},
    "princess": {"royal": 1, "male": -1, "young": 1, "person": 0.5},
    "castle": {"place": 1, "royal": 0.6},
    "house": {"place": 1},
}


def toy_vectors(seed: int = 0) -> KeyedVectors:
    rng = np.random.default_rng(seed)
    words = list(FEATURES)
    matrix = 0.05 * rng.standard_normal((len(words), 8))
    for row, word in enumerate(words):
        for axis, value in FEATURES[word].items():
            matrix[row, AXES[axis]] += value
    return KeyedVectors(words, matrix, counts=np.arange(len(words), 0, -1))


@pytest.fixture
def kv():
    return toy_vectors()


def brute_force(kv, positive, negative, method="3cosadd", restrict=None, epsilon=1e-6):
    unit = kv.vectors / np.linalg.norm(kv.vectors, axis=1, keepdims=True)
    unit = unit if restrict is None else unit[:restrict]
    cos = lambda w: unit @ (kv.vectors[kv.key_to_index[w]] / np.linalg.norm(kv.vectors[kv.key_to_index[w]]))
    if method == "3cosadd":
        scores = sum(cos(w) for w in positive) - sum(cos(w) for w in negative)
    else:
        shifted = lambda w: (1 + cos(w)) / 2
        scores = np.prod([shifted(w) for w in positive], axis=0) / (
            np.prod([shifted(w) for w in negative], axis=0) + epsilon
        )
    for w in [*positive, *negative]:
        if kv.key_to_index[w] < len(scores):
            scores[kv.key_to_index[w]] = -np.inf
    return kv.index_to_key[int(np.argmax(scores))]


def test_analogies_with_known_answers(kv):
    assert kv.most_similar(positive=["woman", "king"], negative=["man"], topn=1)[0][0] == "queen"
    assert kv.most_similar_cosmul(positive=["woman", "king"], negative=["man"], topn=1)[0][0] == "queen"
    assert kv.most_similar(positive=["girl", "prince"], negative=["boy"], topn=1)[0][0] == "princess"
    assert kv.most_similar(positive=["prince", "woman"], negative=["man"], topn=1)[0][0] == "princess"


def test_most_similar_positive_negative_topn(kv):
    plain = kv.most_similar("king", topn=3)
    assert plain[0][0] == "prince" and len(plain) == 3
    assert all(a[1] >= b[1] for a, b in zip(plain, plain[1:], strict=False))
    assert "king" not in [w for w, _ in kv.most_similar("king", topn=9)]
    assert len(kv.most_similar("king", topn=9)) == 9
    assert kv.most_similar(["king", "woman"], topn=1) != kv.most_similar("king", topn=1)
    assert kv.most_similar("king", negative=["castle"], topn=1) != plain[:1]
    assert kv.most_similar("king", topn=0) == []


def test_most_similar_weights_vectors_and_full_scores(kv):
    heavy = kv.most_similar([("king", 1.0), ("girl", 3.0)], topn=1)[0][0]
    light = kv.most_similar([("king", 3.0), ("girl", 1.0)], topn=1)[0][0]
    assert heavy != light
    vector = kv["queen"] + 0.01
    assert kv.most_similar([vector], topn=1)[0][0] == "queen"  # a raw vector excludes nothing
    scores = kv.most_similar("king", topn=None)
    assert scores.shape == (len(kv),) and np.argmax(scores) == kv.key_to_index["king"]


def test_restrict_vocab_limits_candidates(kv):
    full = kv.most_similar(["girl", "prince"], ["boy"], topn=1)[0][0]
    restricted = kv.most_similar(["girl", "prince"], ["boy"], topn=1, restrict_vocab=7)[0][0]
    assert full == "princess" and restricted != "princess"
    assert kv.most_similar("king", topn=None, restrict_vocab=4).shape == (4,)
    assert kv.most_similar(["woman", "king"], ["man"], topn=5, restrict_vocab=3) == []  # all inputs
    cosmul = kv.most_similar_cosmul(["girl", "prince"], ["boy"], topn=1, restrict_vocab=7)[0][0]
    assert cosmul == kv.most_similar_cosmul(["girl", "prince"], ["boy"], topn=1)[0][0]  # ignored, as in gensim 4
    assert kv.most_similar_cosmul("king", topn=None, restrict_vocab=4).shape == (len(kv),)
    near = kv.similar_by_vector(kv["queen"], topn=1, restrict_vocab=3)[0][0]
    assert near != "queen" and kv.similar_by_vector(kv["queen"], topn=1)[0][0] == "queen"


def test_methods_match_their_definitions_and_differ(kv):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    random_kv = KeyedVectors(words, rng.standard_normal((60, 5)))
    differ = 0
    for _ in range(40):
        a, b, c = rng.choice(words, 3, replace=False)
        add = random_kv.most_similar([b, c], [a], topn=1)[0][0]
        mul = random_kv.most_similar_cosmul([b, c], [a], topn=1)[0][0]
        assert add == brute_force(random_kv, [b, c], [a])
        assert mul == brute_force(random_kv, [b, c], [a], "3cosmul")
        differ += add != mul
    assert differ > 0, "3CosAdd and 3CosMul should disagree on some random analogies"


def test_cosmul_epsilon_changes_scores(kv):
    small = kv.most_similar_cosmul(["woman", "king"], ["man"], topn=2, epsilon=1e-3)
    large = kv.most_similar_cosmul(["woman", "king"], ["man"], topn=2, epsilon=10.0)
    assert small[0][1] > large[0][1]


def test_similarity_and_doesnt_match(kv):
    assert kv.similarity("king", "queen") == pytest.approx(kv.similarity("queen", "king"))
    assert kv.similarity("king", "prince") > kv.similarity("king", "house")
    assert kv.similarity("king", "king") == pytest.approx(1.0, abs=1e-6)
    assert kv.doesnt_match(["king", "queen", "prince", "house"]) == "house"
    assert kv.doesnt_match(["man", "woman", "boy", "girl", "castle"]) == "castle"
    assert kv.doesnt_match(["man", "woman", "boy", "girl", "unknown-word", "castle"]) == "castle"
    with pytest.raises(DataError):
        kv.doesnt_match(["nothing", "known"])


def test_get_vector_norm_and_missing_words(kv):
    raw = kv.get_vector("castle")
    unit = kv.get_vector("castle", norm=True)
    assert np.linalg.norm(unit) == pytest.approx(1.0, abs=1e-6) and np.linalg.norm(raw) > 1.05
    with pytest.raises(KeyError, match=r"Key 'quen' not present: not in the vocabulary of 10 words.*'queen'"):
        kv.get_vector("quen")
    assert "queen" in kv and "quen" not in kv and len(kv) == 10 and kv.vector_size == 8


def test_oov_function_supplies_missing_words(kv):
    calls = []

    def oov(word):
        calls.append(word)
        return kv["queen"] * 2

    with_oov = KeyedVectors(kv.index_to_key, kv.vectors, oov=oov)
    assert np.allclose(with_oov["queenly"], kv["queen"] * 2) and calls == ["queenly"]
    assert "queenly" not in with_oov
    assert with_oov.similarity("queenly", "queen") == pytest.approx(1.0, abs=1e-6)
    assert with_oov.most_similar("queenly", topn=1)[0][0] == "queen"  # an oov word excludes nothing
    bad = KeyedVectors(kv.index_to_key, kv.vectors, oov=lambda w: np.zeros(3))
    with pytest.raises(Exception, match="shape"):
        bad["x"]


def test_vectors_are_read_only_and_validated(kv):
    with pytest.raises(ValueError, match="read-only"):
        kv.vectors[0, 0] = 1.0
    with pytest.raises(DataError, match="shape"):
        KeyedVectors(["a", "b"], np.zeros((3, 2)))
    with pytest.raises(DataError, match="distinct"):
        KeyedVectors(["a", "a"], np.zeros((2, 2)))
    assert kv.restrict(4).index_to_key == kv.index_to_key[:4]
    assert list(kv.restrict(4).counts) == [10, 9, 8, 7]
