"""A small seq2seq model learns date normalisation; BLEU, zoo translate and zoo plot attention on it."""

from __future__ import annotations

import datetime

import jax
import numpy as np
import optax
import pytest

from zoo.building.builder import build
from zoo.building.weights import save
from zoo.cli.main import main
from zoo.eval.bleu import corpus_bleu
from zoo.training.trainer import train
from zoo_seq2seq.data import build_vocabs, encode_sources, pair_batches
from zoo_seq2seq.recipe import exact_match
from zoo_seq2seq.tasks import date_pairs

pytestmark = [pytest.mark.xla_optimised, pytest.mark.slow]  # trains for hundreds of steps

YEARS = {"first_year": 1990, "last_year": 2009}


@pytest.fixture(scope="module")
def trained():
    src, tgt = date_pairs(6000, seed=0, **YEARS)
    src_vocab, tgt_vocab = build_vocabs(src, tgt)
    data = pair_batches(src_vocab, tgt_vocab, src, tgt, batch_size=64, buckets=[12])
    model = build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        vocab={"src": src_vocab, "tgt": tgt_vocab},
        embedding_size=32,
        hidden_size=64,
        **{"encoder.bidirectional": True, "strategy.max_length": 8},
    )
    result = train(
        model,
        data,
        steps=500,
        key=jax.random.key(1),
        optimizer=optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2)),
        units="tgt_mask",
        progress=False,
    )
    assert result.compilations == 1
    test_src, test_tgt = date_pairs(300, seed=1, **YEARS)
    return result, test_src, test_tgt


def test_date_normalisation_is_learned(trained):
    result, test_src, test_tgt = trained
    assert result.history[-1]["loss"] < 0.1
    ids, mask = encode_sources(result.model.vocabs["src"], test_src)
    assert exact_match(result.model, ids, mask, test_tgt) >= 0.9
    assert exact_match(result.model, ids, mask, test_tgt, strategy="beam", beam_size=4) >= 0.9


def test_bleu_of_the_trained_model_is_above_the_floor(trained):
    result, test_src, test_tgt = trained
    model = result.model
    outputs = [model.translate(" ".join(s)) for s in test_src[:100]]
    hypotheses = [o.replace("-", " - ").split() for o in outputs]
    assert corpus_bleu(hypotheses, test_tgt[:100]).score >= 85.0
    # the outputs are real dates
    for text in outputs[:20]:
        datetime.date.fromisoformat(text)


def test_translate_command(trained, tmp_path, capsys):
    path = save(trained[0].model, tmp_path / "dates.safetensors")
    assert main(["translate", str(path), "3rd of March 1999", "December 24, 2001"]) == 0
    assert capsys.readouterr().out.splitlines() == ["1999-03-03", "2001-12-24"]
    lines = tmp_path / "in.txt"
    lines.write_text("the 1st of May, 1995\n\nJan 9, 2000\n", encoding="utf-8")
    assert (
        main(["translate", str(path), "--file", str(lines), "--beam", "3", "--n-best", "2", "--length-penalty", "0.7"])
        == 0
    )
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [r[0] for r in rows] == ["1", "2", "1", "2"]
    assert rows[0][2] == "1995-05-01" and rows[2][2] == "2000-01-09"
    assert float(rows[0][1]) >= float(rows[1][1])
    assert main(["translate", str(path), "3rd of March 1999", "--sample", "--temperature", "0.01"]) == 0
    assert capsys.readouterr().out.strip() == "1999-03-03"
    assert main(["translate", str(path), "x", "--n-best", "2"]) == 2
    assert "--n-best needs --beam" in capsys.readouterr().err


def test_plot_attention_command(trained, tmp_path):
    pytest.importorskip("matplotlib")
    path = save(trained[0].model, tmp_path / "dates.safetensors")
    png = tmp_path / "attention.png"
    assert main(["plot", "attention", str(path), "3rd of March 1999", "--out", str(png), "--beam", "2"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    weights = np.asarray(
        trained[0].model.attention_weights(np.asarray([4, 5, 6, 7, 8]), np.asarray([4, 5, 3], dtype=np.int32))
    )
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
