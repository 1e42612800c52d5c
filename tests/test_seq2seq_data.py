"""Seq2seq data: tokeniser, corpus reader, vocabularies, buckets, tasks, source reversal, BLEU."""

from __future__ import annotations

import calendar
import datetime
import gzip

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.building.builder import build
from zoo.cli.main import main
from zoo.data.text import detokenize, tokenize
from zoo.errors import DataError, UnknownNameError
from zoo.eval.bleu import corpus_bleu
from zoo_seq2seq.data import build_vocabs, pair_batches, read_pairs
from zoo_seq2seq.model import reverse_valid
from zoo_seq2seq.tasks import TASKS, date_pairs, format_date, get_task, reversal_pairs, sorting_pairs
from zoo_seq2seq.translate import replace_unknowns


@pytest.mark.parametrize(
    ("text", "tokens", "back"),
    [
        ("¿Qué hora es?", ["¿", "qué", "hora", "es", "?"], "¿qué hora es?"),
        ("Don't do that, Tom!", ["don't", "do", "that", ",", "tom", "!"], "don't do that, tom!"),
        ("It costs $3.50 (approx.).", ["it", "costs", "$", "3.50", "(", "approx", ".", ")", "."], None),
        ("Él tiene 1,000 libros.", ["él", "tiene", "1,000", "libros", "."], "él tiene 1,000 libros."),
        ("1999-03-03", ["1999", "-", "03", "-", "03"], "1999-03-03"),
    ],
)
def test_tokenize_and_detokenize(text, tokens, back):
    assert tokenize(text) == tokens
    assert tokenize(" ".join(tokens)) == tokens, "tokenising tokens must change nothing"
    if back is not None:
        assert detokenize(tokens) == back
    assert tokenize("Hola", lowercase=False) == ["Hola"]


@pytest.mark.parametrize("compress", [False, True])
def test_read_pairs_plain_and_gzip(tmp_path, compress):
    text = "Go.\tVe.\tCC-BY attribution\n\nI'm hungry!\t¡Tengo hambre!\tx\nA very long sentence here .\tcorta\n"
    path = tmp_path / ("pairs.tsv.gz" if compress else "pairs.tsv")
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    src, tgt = read_pairs(path, swap=True)
    assert src[1] == ["¡", "tengo", "hambre", "!"] and tgt[1] == ["i'm", "hungry", "!"]
    assert len(src) == 3
    src, tgt = read_pairs(path, max_length=4)
    assert src == [["go", "."], ["i'm", "hungry", "!"]]


def test_read_pairs_errors(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("one column only\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.tsv:1: expected 'source<TAB>target'"):
        read_pairs(bad)
    with pytest.raises(DataError, match="no pairs file at"):
        read_pairs(tmp_path / "missing.tsv")


def test_vocabularies_joint_separate_unk_and_buckets():
    src = [["a", "b", "c"], ["a", "b"], ["a", "rare"]]
    tgt = [["x", "y"], ["x"], ["x", "y", "z", "w", "v"]]
    src_vocab, tgt_vocab = build_vocabs(src, tgt, min_count=2)
    assert "rare" not in src_vocab and "a" in src_vocab and "x" not in src_vocab
    assert src_vocab.encode(["rare", "a"]).tolist() == [src_vocab.unk_id, src_vocab.id("a")]
    joint, same = build_vocabs(src, tgt, joint=True)
    assert joint is same and {"a", "x", "rare"} <= set(joint)
    batches = pair_batches(src_vocab, tgt_vocab, src, tgt, batch_size=2, buckets=[4, 8])
    shapes = {batch["tgt"].shape for batch in batches}
    assert shapes <= {(2, 4), (2, 8)}
    for batch in batches:
        lengths = batch["tgt_mask"].sum(axis=1)
        ends = batch["tgt"][np.arange(2), np.maximum(lengths - 1, 0)]
        assert np.all(ends[lengths > 0] == tgt_vocab.eos_id), "every target ends with eos"


def test_generated_tasks():
    src, tgt = reversal_pairs(50, seed=3)
    assert all(t == s[::-1] for s, t in zip(src, tgt, strict=True))
    src, tgt = sorting_pairs(50, min_length=2, max_length=6, seed=3)
    assert all(t == sorted(s) and 2 <= len(s) <= 6 for s, t in zip(src, tgt, strict=True))
    assert sorting_pairs(5, seed=1) == sorting_pairs(5, seed=1) != sorting_pairs(5, seed=2)
    assert format_date(1999, 3, 3, 0) == "3rd of March 1999"
    assert tokenize(format_date(2001, 11, 22, 2)) == ["november", "22", ",", "2001"]
    src, tgt = date_pairs(200, seed=4)
    months = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    months.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
    for s, t in zip(src, tgt, strict=True):
        date = datetime.date.fromisoformat(detokenize(t))
        assert str(date.year) in s and months[next(w for w in s if w in months)] == date.month
        assert str(date.day) in s
    assert set(TASKS) == {"reversal", "sorting", "dates"}
    with pytest.raises(UnknownNameError, match="Did you mean 'dates'"):
        get_task("date")


def test_reverse_source_reverses_only_real_tokens():
    ids = jnp.asarray([5, 6, 7, 0, 0])
    mask = ids != 0
    np.testing.assert_array_equal(np.asarray(reverse_valid(ids, mask)), [7, 6, 5, 0, 0])
    forward = build("seq2seq+luong-general", key=jax.random.key(0), src_vocab_size=9, tgt_vocab_size=7, hidden_size=8)
    backward = build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        src_vocab_size=9,
        tgt_vocab_size=7,
        hidden_size=8,
        reverse_source=True,
    )
    tgt_in = jnp.asarray([2, 4, 5])
    flipped = forward(jnp.asarray([7, 6, 5, 0, 0]), mask, tgt_in)
    reversed_inside = backward(ids, mask, tgt_in)
    np.testing.assert_allclose(np.asarray(reversed_inside.logits), np.asarray(flipped.logits), rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.asarray(forward(ids, mask, tgt_in).logits), np.asarray(flipped.logits))


def test_bleu_known_values_and_sacrebleu_agreement():
    assert corpus_bleu([["a", "b", "c", "d"]], [["a", "b", "c", "d"]]).score == pytest.approx(100.0)
    assert corpus_bleu([["x", "y", "z", "w"]], [["a", "b", "c", "d"]], smooth=False).score == 0.0
    short = corpus_bleu([["a", "b", "c", "d"]], [["a", "b", "c", "d", "e", "f"]])
    assert short.brevity_penalty == pytest.approx(np.exp(1 - 6 / 4))
    multi = corpus_bleu([["the", "cat", "sat", "down"]], [[["a", "cat", "sat", "down"], ["the", "cat", "sat", "up"]]])
    assert multi.precisions[0] == pytest.approx(100.0)
    with pytest.raises(DataError, match="2 hypotheses but 1 references"):
        corpus_bleu([["a"], ["b"]], [["a"]])
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(0)
    words = list("abcdefgh")
    hyps = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(40)]
    refs = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(40)]
    ours = corpus_bleu([h.split() for h in hyps], [r.split() for r in refs]).score
    assert ours == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score, rel=1e-9)


def test_translate_option_errors(tmp_path, capsys):
    model = tmp_path / "m.safetensors"
    assert main(["translate", str(model), "x", "--beam", "2", "--sample"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["translate", str(model), "x", "--temperature", "0.5"]) == 2
    assert "need --sample" in capsys.readouterr().err
    assert main(["translate", str(model), "x", "--beam", "2", "--n-best", "3"]) == 2
    assert "exceeds the beam width" in capsys.readouterr().err


def test_unknown_outputs_copy_the_most_attended_source_word():
    attention = np.asarray([[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.3, 0.6, 0.1]])
    out = replace_unknowns(["hello", "<unk>", "<unk>"], attention, ["hola", "señor", "Zyx"], "<unk>")
    assert out == ["hello", "Zyx", "señor"]
    assert replace_unknowns(["<unk>"], attention, [], "<unk>") == ["<unk>"]
