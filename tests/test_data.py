"""Vocabularies and static-shape, resumable batching."""

import itertools

import numpy as np
import pytest

from zoo.data.batching import ArrayBatches, SequenceBatches, bucket_boundaries, pad_sequences
from zoo.data.vocab import Vocab, Vocabularies
from zoo.errors import DataError
from zoo_seq2seq.tasks import digit_vocab, reversal_pairs


def test_vocab_build_orders_by_frequency_and_applies_limits():
    sentences = [["b", "a", "b"], ["c", "b", "a", "d"]]
    vocab = Vocab.build(sentences)
    assert vocab.tokens == ("<pad>", "<unk>", "<s>", "</s>", "b", "a", "c", "d")
    assert vocab.counts.tolist() == [0, 0, 0, 0, 3, 2, 1, 1]
    assert Vocab.build(sentences, min_count=2).tokens[4:] == ("b", "a")
    assert Vocab.build(sentences, max_size=1).tokens[4:] == ("b",)
    assert Vocab.build(sentences, specials=("pad",)).tokens[:2] == ("<pad>", "b")
    with pytest.raises(DataError, match="unknown special roles"):
        Vocab.build(sentences, specials=("mask",))


def test_encode_decode_with_specials():
    vocab = Vocab.build([["x", "y"]])
    ids = vocab.encode(["y", "zzz", "x"], bos=True, eos=True)
    assert ids.tolist() == [2, 5, 1, 4, 3]
    assert vocab.decode(ids) == ["y", "<unk>", "x"]
    assert vocab.decode([4, 3, 5]) == ["x"]  # stops at eos
    assert vocab.decode(ids, strip=False) == ["<s>", "y", "<unk>", "x", "</s>"]
    no_unk = Vocab.build([["x"]], specials=("pad",))
    with pytest.raises(KeyError, match="no unk token"):
        no_unk.encode(["q"])
    with pytest.raises(DataError, match="no 'eos' token"):
        _ = no_unk.eos_id


def test_vocab_arrays_round_trip_with_unicode():
    vocab = Vocab.build([["café", "naïve", "日本", "café"]])
    again = Vocab.from_arrays(vocab.to_arrays(), vocab.specials)
    assert again == vocab
    assert again.tokens == vocab.tokens
    assert again.counts.tolist() == vocab.counts.tolist()
    assert hash(again) == hash(vocab)
    assert Vocab.build([["other"]]) != vocab


def test_vocab_rejects_duplicates_and_bad_specials():
    with pytest.raises(DataError, match="repeated"):
        Vocab(["a", "b", "a"])
    with pytest.raises(DataError, match="not among the tokens"):
        Vocab(["a"], specials={"pad": "<pad>"})


def test_vocabularies_mapping_is_hashable():
    a = Vocabularies({"src": digit_vocab(), "tgt": digit_vocab()})
    b = Vocabularies({"tgt": digit_vocab(), "src": digit_vocab()})
    assert a == b
    assert hash(a) == hash(b)
    with pytest.raises(KeyError, match="no 'words' vocabulary"):
        a["words"]


def test_pad_sequences():
    ids, mask = pad_sequences([[1, 2, 3], [4]], pad_id=0)
    assert ids.tolist() == [[1, 2, 3], [4, 0, 0]]
    assert mask.tolist() == [[True, True, True], [True, False, False]]
    with pytest.raises(DataError, match="sequence 0 has 3 tokens, more than the length 2"):
        pad_sequences([[1, 2, 3]], pad_id=0, length=2)


def test_buckets_cover_the_longest():
    assert bucket_boundaries([1, 2, 3, 10], count=2)[-1] == 10
    assert bucket_boundaries([5, 5, 5], count=4) == [5]


def _padded_positions(lengths, widths, batch_size):
    bucket = np.searchsorted(widths, lengths)
    sizes = np.bincount(bucket, minlength=len(widths))
    return sum(w * -(-n // batch_size) * batch_size for w, n in zip(widths, sizes, strict=True))


@pytest.mark.parametrize("batch_size", [1, 4])
def test_buckets_pad_the_fewest_positions(batch_size):
    import itertools

    lengths = np.random.default_rng(0).geometric(0.15, size=60).tolist()  # a long tail, as sentence lengths have
    distinct = sorted(set(lengths))
    best = min(  # every choice of up to three widths, the longest always among them
        _padded_positions(lengths, sorted({*extra, distinct[-1]}), batch_size)
        for k in range(3)
        for extra in itertools.combinations(distinct[:-1], k)
    )
    widths = bucket_boundaries(lengths, count=3, batch_size=batch_size)
    assert len(widths) <= 3 and widths[-1] == max(lengths)
    assert _padded_positions(lengths, widths, batch_size) == best
    quantiles = sorted({int(np.ceil(q)) for q in np.quantile(lengths, [1 / 3, 2 / 3, 1])})
    assert best < _padded_positions(lengths, quantiles, batch_size)


def make_batches(**kwargs):
    src, tgt = reversal_pairs(50, seed=3)
    vocab = digit_vocab()
    fields = {"src": [vocab.encode(s) for s in src], "tgt": [vocab.encode(t, eos=True) for t in tgt]}
    return SequenceBatches(fields, batch_size=8, buckets=[6, 11], **kwargs)


def test_sequence_batches_have_static_shapes_and_cover_every_example():
    data = make_batches(seed=1)
    shapes, seen = set(), 0
    for batch in data:
        shapes.add(batch["src"].shape)
        seen += int(batch["src_mask"].any(axis=1).sum())
        assert (batch["src"][~batch["src_mask"]] == 0).all()
    assert shapes <= {(8, 6), (8, 11)}
    assert seen == 50


def test_sequence_batches_resume_from_a_position():
    data = make_batches(seed=2)
    straight = list(itertools.islice(data.iterate(), 12))
    middle = straight[4][1]
    resumed = list(itertools.islice(data.iterate(middle), 7))
    for (a, pa), (b, pb) in zip(straight[5:], resumed, strict=True):
        assert pa == pb
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    epochs = {position["epoch"] for _, position in straight}
    assert epochs == {0, 1}  # 7 batches per epoch: the stream goes on


def test_array_batches_reshuffle_per_epoch_and_resume():
    data = ArrayBatches({"x": np.arange(10)}, batch_size=4, seed=0)
    assert data.batches_per_epoch() == 2
    stream = list(itertools.islice(data.iterate(), 4))
    first, second = np.concatenate([b["x"] for b, _ in stream[:2]]), np.concatenate([b["x"] for b, _ in stream[2:]])
    assert len(set(first)) == 8
    assert not np.array_equal(first, second)
    resumed = next(data.iterate(stream[1][1]))[0]["x"]
    np.testing.assert_array_equal(resumed, stream[2][0]["x"])
    with pytest.raises(DataError, match="cannot fill one batch"):
        ArrayBatches({"x": np.arange(3)}, batch_size=4)
