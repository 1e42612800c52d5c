"""The bidirectional tagger: readers, learning from context and spelling, tagging after reload."""

from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.errors import DataError
from zoo_tagger.data import TaggedSentences, read_conll, read_slash_tagged, read_tagged, tagging_batches
from zoo_tagger.recipe import evaluate_tagger, fit


def test_slash_reader_splits_at_the_last_slash(tmp_path):
    path = tmp_path / "tagged.txt"
    path.write_text("The/DT 1/2/CD cup/NN ./.\n\nRun/VB !/.\n")
    data = read_slash_tagged(path)
    assert data.sentences == [["The", "1/2", "cup", "."], ["Run", "!"]]
    assert data.tags == [["DT", "CD", "NN", "."], ["VB", "."]]
    path.write_text("fine/JJ broken\n")
    with pytest.raises(DataError, match=r"tagged.txt:1: 'broken' is not 'word/TAG'"):
        read_slash_tagged(path)


def test_conll_reader_and_format_detection(tmp_path):
    path = tmp_path / "train.conll"
    path.write_text("-DOCSTART-\tO\n\n# sent 1\nEU\tNNP\trejects\nrejects\tVBZ\t-\n\nGerman\tJJ\t-\n")
    data = read_conll(path, tag_column=1)
    assert data.sentences == [["EU", "rejects"], ["German"]]
    assert data.tags == [["NNP", "VBZ"], ["JJ"]]
    plain = tmp_path / "plain.conll"
    plain.write_text("EU NNP\nrejects VBZ\n\nGerman JJ\n")
    assert read_tagged(plain).tags == [["NNP", "VBZ"], ["JJ"]]
    slash = tmp_path / "slash.txt"
    slash.write_text("EU/NNP rejects/VBZ\n")
    assert read_tagged(slash).sentences == [["EU", "rejects"]]
    with pytest.raises(DataError, match="2 tokens but 1 tags"):
        TaggedSentences([["a", "b"]], [["X"]])


def _corpus(count: int, seed: int, stems: list[str]) -> TaggedSentences:
    """'run' is a noun after 'the' and a verb after 'to' (context); -ing and -ly words are
    tagged by their suffix (spelling), stems drawn from `stems`."""
    rng = np.random.default_rng(seed)
    sentences, tags = [], []
    for _ in range(count):
        stem = str(rng.choice(stems))
        if rng.integers(2):
            words, labels = ["the", "run", "was", stem + "ing"], ["DT", "NN", "VBD", "VBG"]
        else:
            words, labels = ["I", "want", "to", "run", stem + "ly"], ["PRP", "VBP", "TO", "VB", "RB"]
        sentences.append(words)
        tags.append(labels)
    return TaggedSentences(sentences, tags)


@pytest.mark.slow  # trains to a stated accuracy
def test_tagger_learns_context_and_spelling_and_tags_after_reload(tmp_path):
    rng = np.random.default_rng(0)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    stems = ["".join(rng.choice(letters, size=int(rng.integers(3, 7)))) for _ in range(80)]
    train, test = _corpus(400, 1, stems[:60]), _corpus(100, 2, stems[60:])  # test stems never seen
    model, info = fit(
        "bilstm-tagger",
        train,
        test,
        epochs=4,
        batch_size=20,
        lr=0.01,
        buckets=[5],
        progress=False,
        overrides={"embedding_size": 16, "char_embedding_size": 8, "maps": [16], "hidden_size": 16, "dropout": 0.0},
    )
    scores = evaluate_tagger(model, test)
    assert scores["accuracy"] >= 0.98, (scores, info)
    assert scores["oov_rate"] == pytest.approx(0.2, abs=0.03) and scores["oov_accuracy"] >= 0.95
    loaded = zoo.load(zoo.save(model, tmp_path / "tagger.safetensors"))
    sentence = ["the", "run", "was", "blorping"]
    assert loaded.tag([sentence]) == [["DT", "NN", "VBD", "VBG"]]
    longer = ["I", "want", "to", "run", "quuxly", "and", "more", "words", "padding", "it"]
    assert loaded.tag([sentence, longer])[0] == loaded.tag([sentence])[0]  # padding changes nothing


def test_batches_carry_spellings_only_when_needed():
    data = TaggedSentences([["A", "cat"], ["Dogs", "bark", "loudly"]], [["DT", "NN"], ["NNS", "VBP", "RB"]])
    from zoo_tagger.data import tag_vocab, word_vocab

    words, tags = word_vocab(data.sentences), tag_vocab(data.tags)
    assert words.index["a"] >= 2 and "A" not in words  # lowercased, after <pad> and <unk>
    plain = next(iter(tagging_batches(data, words, tags, batch_size=2, shuffle=False)))
    assert set(plain) == {"words", "words_mask", "tags", "tags_mask"}
    spelled = next(iter(tagging_batches(data, words, tags, batch_size=2, max_word_length=6, shuffle=False)))
    assert spelled["chars"].shape == (2, spelled["words"].shape[1], 6)
    assert spelled["chars"][0, 0, :3].tolist() == [1, ord("A") + 5, 2]  # characters keep their case
    with pytest.raises(DataError, match="not in the model's tag set"):
        tagging_batches(data, words, tag_vocab([["DT"]]), batch_size=2)
