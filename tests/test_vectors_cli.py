"""``zoo vectors`` and ``zoo plot embeddings`` on word2vec files and zoo model files."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest
from test_keyed_vectors import toy_vectors

import zoo
from zoo.cli.main import main
from zoo.data.vocab import Vocab
from zoo.vectors import KeyedVectors
from zoo.viz.embeddings import pca_2d


@pytest.fixture
def w2v_file(tmp_path):
    return toy_vectors().save_word2vec_format(tmp_path / "toy.bin", binary=True)


def test_similar_and_analogy(w2v_file, capsys):
    assert main(["vectors", "similar", str(w2v_file), "king", "--n-best", "2"]) == 0
    assert capsys.readouterr().out.split("\n")[0].split()[1] == "prince"
    assert main(["vectors", "analogy", str(w2v_file), "man", "woman", "king", "--n-best", "1"]) == 0
    assert capsys.readouterr().out.split()[1] == "queen"
    assert (
        main(["vectors", "analogy", str(w2v_file), "man", "woman", "king", "--n-best", "1", "--method", "3cosmul"]) == 0
    )
    assert capsys.readouterr().out.split()[1] == "queen"
    assert main(["vectors", "similar", str(w2v_file), "kingg"]) == 2
    assert "not in the vocabulary" in capsys.readouterr().err


def test_eval_and_export(w2v_file, tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("king\tqueen\t9\nking\thouse\t1\nman\tboy\t7\n")
    questions = tmp_path / "q.txt"
    questions.write_text(": royal\nman woman king queen\n")
    assert main(["vectors", "eval", str(w2v_file), "--analogies", str(questions), "--word-pairs", str(pairs)]) == 0
    out = capsys.readouterr().out
    expected = toy_vectors().word_pairs_report(pairs).spearman
    assert "100.00% of 1 covered" in out and f"Spearman {expected:.4f}" in out
    text = tmp_path / "toy.txt"
    assert main(["vectors", "export", str(w2v_file), str(text), "--limit", "4"]) == 0
    assert KeyedVectors.load(text).index_to_key == ["man", "woman", "king", "queen"]


def test_zoo_model_files_work_everywhere(tmp_path, capsys):
    kv = toy_vectors()
    model = zoo.build("ppmi-svd", key=jax.random.key(0), vocab=Vocab(kv.index_to_key), embedding_size=8)
    model = zoo.load(zoo.save(model, tmp_path / "m.safetensors"))
    assert main(["vectors", "export", str(tmp_path / "m.safetensors"), str(tmp_path / "m.txt")]) == 0
    exported = KeyedVectors.load(tmp_path / "m.txt")
    np.testing.assert_array_equal(exported.vectors, np.asarray(model.vectors()))
    png = tmp_path / "map.png"
    assert (
        main(["plot", "embeddings", str(tmp_path / "m.safetensors"), "--words", "king,queen,man", "--out", str(png)])
        == 0
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "embeddings", str(tmp_path / "m.safetensors"), "--words", "king,kong", "--out", str(png)]) == 2
    assert "kong" in capsys.readouterr().err


def test_pca_projection():
    rng = np.random.default_rng(0)
    line = np.outer(np.linspace(-1, 1, 9), rng.standard_normal(6)) + 0.01 * rng.standard_normal((9, 6))
    coords, explained = pca_2d(line + 5.0)
    assert coords.shape == (9, 2) and explained[0] > 0.99
    assert np.all(np.diff(coords[:, 0]) > 0) or np.all(np.diff(coords[:, 0]) < 0)  # order along the line kept
    np.testing.assert_allclose(coords.mean(axis=0), 0.0, atol=1e-9)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc")
def test_an_unreadable_file_is_a_clean_error(capsys):
    assert main(["vectors", "similar", "/proc/self/mem", "king"]) == 2
    assert "cannot read /proc/self/mem" in capsys.readouterr().err
