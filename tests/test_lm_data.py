"""Token streams: splitting text, encoding prompts, truncated-BPTT batches."""

import numpy as np
import pytest

from zoo.data.text import decode_text, encode_text, split_text
from zoo.errors import DataError
from zoo_lm.recipe import build_vocab
from zoo_lm.stream import StreamBatches


def test_words_end_every_line_with_eos_and_characters_keep_newlines():
    text = "the cat sat\n\n  a dog \n"
    assert split_text(text, "word") == ["the", "cat", "sat", "</s>", "a", "dog", "</s>"]
    assert split_text("ab\nc", "char") == ["a", "b", "\n", "c"]
    with pytest.raises(DataError, match="level"):
        split_text(text, "byte")


def test_prompts_start_at_a_boundary_and_text_round_trips():
    words = build_vocab(split_text("the cat sat\na dog\n", "word"), "word")
    ids = encode_text(words, "the dog", "word")
    assert ids[0] == words.eos_id and list(words.decode(ids[1:])) == ["the", "dog"]
    assert decode_text(words, [*words.encode(["a", "dog"]), words.eos_id, *words.encode(["the"])], "word") == (
        "a dog\nthe"
    )
    chars = build_vocab(list("hello\nworld"), "char")
    assert "eos" not in chars.specials
    ids = encode_text(chars, "owl", "char")
    assert chars.tokens[ids[0]] == "\n"
    assert decode_text(chars, ids, "char") == "\nowl"
    assert decode_text(chars, [chars.pad_id, *chars.encode(list("lo"))], "char") == "lo"


def test_rows_continue_from_batch_to_batch():
    ids = np.arange(43)
    source = StreamBatches(ids, batch_size=3, unroll=4)  # rows of 14: 13 predictions, 3 full batches
    assert source.batches_per_epoch() == 3
    batches = list(source)
    assert [b["reset"].tolist() for b in batches] == [[True] * 3, [False] * 3, [False] * 3]
    np.testing.assert_array_equal(batches[0]["ids"][1], [14, 15, 16, 17])
    np.testing.assert_array_equal(batches[1]["ids"][1], [18, 19, 20, 21])
    np.testing.assert_array_equal(batches[1]["targets"][1], [19, 20, 21, 22])
    assert all(b["mask"].all() for b in batches)


def test_evaluation_batches_predict_every_token_once():
    ids = np.arange(20)
    source = StreamBatches(ids, batch_size=1, unroll=8, drop_last=False)
    batches = list(source)
    targets = np.concatenate([b["targets"][0][b["mask"][0]] for b in batches])
    np.testing.assert_array_equal(targets, np.arange(1, 20))
    assert source.tokens_per_epoch() == 19
    assert {b["ids"].shape for b in batches} == {(1, 8)}


def test_resuming_the_stream_continues_exactly():
    source = StreamBatches(np.arange(100), batch_size=2, unroll=5)
    stream = source.iterate()
    seen = [next(stream) for _ in range(12)]
    position = seen[6][1]
    resumed = source.iterate(position)
    for expected, _ in seen[7:]:
        got, _ = next(resumed)
        for name in expected:
            np.testing.assert_array_equal(got[name], expected[name])
    assert seen[8][1] == {"epoch": 1, "batch": 0} and seen[9][0]["reset"].all()


def test_too_little_text_is_a_clear_error():
    with pytest.raises(DataError, match="too few"):
        StreamBatches(np.arange(5), batch_size=4, unroll=2)
    with pytest.raises(DataError, match="lower --unroll"):
        StreamBatches(np.arange(20), batch_size=2, unroll=30)
