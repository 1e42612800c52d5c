"""Generated corpora whose word vectors have known structure (shared by the embedding tests)."""

from __future__ import annotations

import numpy as np

TEMPLATES = [
    "people in {city} speak {lang}",
    "in {city} they eat {food}",
    "the {food} of {city} is famous",
    "{lang} is spoken in {city}",
    "they speak {lang} and eat {food}",
    "a trip to {city} means {food}",
]


def country_sentences(countries: int = 8, per_country: int = 60, seed: int = 0) -> list[list[str]]:
    """Sentences tying ``city<c>``, ``lang<c>`` and ``food<c>`` of country c through templates."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(per_country * countries):
        c = int(rng.integers(countries))
        template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        sentences.append(template.format(city=f"city{c}", lang=f"lang{c}", food=f"food{c}").split())
    return sentences


def country_questions(countries: int = 8) -> str:
    """Google-format analogies over `country_sentences`: city:lang :: city':lang' and lang:food :: lang':food'."""
    pairs = [(i, j) for i in range(countries) for j in range(countries) if i != j]
    lines = [": city-language"] + [f"city{i} lang{i} city{j} lang{j}" for i, j in pairs]
    lines += [": language-food"] + [f"lang{i} food{i} lang{j} food{j}" for i, j in pairs]
    return "\n".join(lines) + "\n"


def topic_sentences(topics: int = 6, words: int = 8, sentences: int = 1200, length: int = 6, seed: int = 0):
    """Sentences of `length` words drawn from one of `topics` disjoint word sets ``t<k>w<i>``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(sentences):
        k = int(rng.integers(topics))
        out.append([f"t{k}w{i}" for i in rng.integers(words, size=length)])
    return out


def topic_of(word: str) -> str:
    return word.split("w")[0]


def neighbour_accuracy(kv) -> float:
    """Share of words whose nearest neighbour is in their own topic."""
    return float(np.mean([topic_of(kv.most_similar(w, topn=1)[0][0]) == topic_of(w) for w in kv.index_to_key]))
