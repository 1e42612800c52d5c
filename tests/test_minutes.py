"""Time budgets of the word-vector loops (``zoo train ... --minutes``, ``time_limit=``): a run past
its budget stops at the next job or epoch boundary, keeps a valid model, checkpoints there and says so;
resumed, it ends with the vectors of a run that was never stopped.

The budgets are a nanosecond, spent before the first job ends: no test measures time.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from test_word2vec import needs_numba, toy_sentences
from word_corpora import topic_sentences

import zoo
from zoo.cli.main import main
from zoo.data.cooccurrence import cooccurrence_matrix
from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.errors import InvalidParameterError
from zoo_glove.train import entries_from_matrix, fit_glove
from zoo_word2vec.fit import build_vocab, fit

SPENT = 1e-9  # seconds: over once a job (or an epoch) has run
JOB_WORDS = 2000


@pytest.fixture(scope="module")
def toy():
    sentences = toy_sentences(1500)
    return sentences, build_vocab(sentences, min_count=1)


def skipgram(toy):
    return zoo.build("word2vec-skipgram", vocab=toy[1], key=jax.random.key(0), embedding_size=16, epochs=2)


def arrays(model) -> list[np.ndarray]:
    return [np.asarray(model.input), np.asarray(model.output)]


@needs_numba
def test_word2vec_stops_after_the_first_job_and_resumes_to_the_unstopped_vectors(toy, tmp_path, capsys):
    settings = {"backend": "numba", "threads": 1, "job_words": JOB_WORDS}
    reference, _ = fit(skipgram(toy), toy[0], progress=False, **settings)
    path = tmp_path / "run.ckpt.safetensors"
    stopped, stats = fit(skipgram(toy), toy[0], time_limit=SPENT, checkpoint=path, progress=False, **settings)
    err = capsys.readouterr().err
    assert stats.stopped_on_time and stats.history == [] and 0 < stats.words <= JOB_WORDS
    assert "stopped on time: the time budget ran out after job 1 of epoch 1 of 2" in err and str(path) in err
    assert all(np.isfinite(a).all() for a in arrays(stopped))
    assert not np.array_equal(arrays(stopped)[0], arrays(skipgram(toy))[0])  # the first job trained it
    for got, want in zip(arrays(zoo.load(path)), arrays(stopped), strict=True):
        np.testing.assert_array_equal(got, want)  # the checkpoint holds the model returned
    resumed, again = fit(skipgram(toy), toy[0], checkpoint=path, resume=True, progress=False, **settings)
    assert again.resumed.jobs == 1 and not again.stopped_on_time
    for got, want in zip(arrays(resumed), arrays(reference), strict=True):
        np.testing.assert_array_equal(got, want)


@needs_numba
def test_zoo_train_word2vec_minutes_saves_the_model_it_stopped_with(toy, tmp_path, capfd):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in toy[0]) + "\n")
    out, checkpoint = tmp_path / "v.safetensors", tmp_path / "v.ckpt.safetensors"
    args = ["train", "word2vec-cbow", "--data", str(corpus), "--out", str(out), "--dim", "8", "--min-count", "1"]
    args += ["--threads", "1", "--epochs", "2", "--checkpoint", str(checkpoint)]
    assert main([*args, "--minutes", str(SPENT / 60)]) == 0
    err = capfd.readouterr().err
    assert "stopped on time: the time budget ran out after job 1 of epoch 1 of 2" in err
    assert "final loss" not in err  # no epoch ended
    saved = zoo.load(out)
    for got, want in zip(arrays(saved), arrays(zoo.load(checkpoint)), strict=True):
        np.testing.assert_array_equal(got, want)
    assert main([*args, "--resume"]) == 0
    err = capfd.readouterr().err
    assert "resumed from" in err and "job 1, " in err and "stopped on time" not in err and "final loss" in err


def test_a_budget_that_is_not_a_positive_number_of_seconds_is_refused(toy, capsys):
    with pytest.raises(InvalidParameterError, match=r"time_limit=0 is out of range"):
        fit(skipgram(toy), toy[0], time_limit=0, progress=False)
    with pytest.raises(SystemExit):
        main(["train", "glove", "--data", "corpus.txt", "--out", "g.safetensors", "--minutes", "-1"])
    assert "--minutes" in capsys.readouterr().err


@pytest.fixture(scope="module")
def topics():
    sentences = topic_sentences(sentences=400)
    vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    model = zoo.build("glove", key=jax.random.key(0), vocab=vocab, embedding_size=6, x_max=10.0)
    counts = cooccurrence_matrix(sentences, vocab, window=3)
    return sentences, model, entries_from_matrix(counts, x_max=10.0, alpha=0.75)


def test_glove_stops_after_the_first_epoch_and_resumes_to_the_unstopped_vectors(topics, tmp_path, capsys):
    _, model, entries = topics
    settings = {"epochs": 4, "batch_size": 128, "key": jax.random.key(1), "progress": False}
    reference, history = fit_glove(model, entries, **settings)
    path = tmp_path / "glove.ckpt.safetensors"
    stopped, stopped_history = fit_glove(model, entries, time_limit=SPENT, checkpoint=path, **settings)
    assert "stopped on time: the time budget ran out after epoch 1 of 4" in capsys.readouterr().err
    assert [h["epoch"] for h in stopped_history] == [1]
    np.testing.assert_array_equal(np.asarray(zoo.load(path).vectors()), np.asarray(stopped.vectors()))
    resumed, rest = fit_glove(model, entries, checkpoint=path, resume=True, **settings)
    assert [h["epoch"] for h in rest] == [2, 3, 4] and [h["cost"] for h in rest] == [h["cost"] for h in history[1:]]
    np.testing.assert_array_equal(np.asarray(resumed.vectors()), np.asarray(reference.vectors()))


def test_zoo_train_glove_minutes_saves_the_first_epoch(topics, tmp_path, capfd):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in topics[0]) + "\n")
    out = tmp_path / "g.safetensors"
    args = ["train", "glove", "--data", str(corpus), "--out", str(out), "--dim", "6", "--min-count", "1"]
    args += ["--tokenizer", "whitespace"]
    assert main([*args, "--epochs", "5", "--batch-size", "128", "--minutes", str(SPENT / 60)]) == 0
    err = capfd.readouterr().err
    assert "glove: epoch 1/5  loss " in err and "epoch 2/5" not in err
    assert "stopped on time: the time budget ran out after epoch 1 of 5" in err
    assert np.isfinite(np.asarray(zoo.load(out).vectors())).all()
