"""The word2vec family under the loop features of `zoo.train`: checkpoints, exact resume, the NaN guard."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest
from test_word2vec import needs_numba, toy_sentences
from word_corpora import country_questions, country_sentences

import zoo
from zoo.errors import DataError, TrainingDiverged, WeightsError
from zoo.vectors import KeyedVectors
from zoo_word2vec.backends import NumbaRunner, SamplingTables
from zoo_word2vec.fit import build_vocab, fit, make_runner
from zoo_word2vec.stream import EncodedCorpus
from zoo_word2vec.training import Checkpointing, run_epochs

JOB_WORDS = 2000  # ~8 jobs an epoch on the toy corpus


class Stop(Exception):
    """Stands for the process dying: raised by `on_job` after a given job."""


def stop_after(jobs: int):
    def on_job(position):
        if position.jobs == jobs:
            raise Stop

    return on_job


@pytest.fixture(scope="module")
def toy():
    sentences = toy_sentences(1500)
    return sentences, build_vocab(sentences, min_count=1)


def toy_model(toy, arch, **params):
    extra = {"buckets": 500} if arch == "fasttext" else {}
    settings = {"embedding_size": 16, "epochs": 3, **extra, **params}
    return zoo.build(arch, vocab=toy[1], key=jax.random.key(0), **settings)


def toy_fit(toy, arch, backend, **options):
    options = {"backend": backend, "threads": 1, "progress": False, "job_words": JOB_WORDS, **options}
    return fit(toy_model(toy, arch), toy[0], **options)


def arrays(model) -> list[np.ndarray]:
    return [np.asarray(model.input), np.asarray(model.output)]


@pytest.mark.parametrize(
    ("arch", "backend"),
    [
        pytest.param("word2vec-skipgram", "numba", marks=needs_numba),
        pytest.param("word2vec-cbow", "numba", marks=needs_numba),
        pytest.param("fasttext", "numba", marks=needs_numba),
        ("word2vec-skipgram", "jax"),
    ],
)
def test_a_run_stopped_mid_epoch_resumes_to_exactly_the_vectors_of_an_unstopped_run(toy, tmp_path, arch, backend):
    reference, reference_stats = toy_fit(toy, arch, backend)
    path = tmp_path / "run.ckpt.safetensors"
    saving = {"checkpoint": path, "checkpoint_every": 3}
    with pytest.raises(Stop):
        toy_fit(toy, arch, backend, on_job=stop_after(11), **saving)  # checkpoints before jobs 3, 6, 9
    resumed, stats = toy_fit(toy, arch, backend, resume=True, **saving)
    assert stats.resumed is not None and stats.resumed.jobs == 9 and stats.resumed.job > 0, stats.resumed
    for got, want in zip(arrays(resumed), arrays(reference), strict=True):
        np.testing.assert_array_equal(got, want)
    # the resumed epoch's loss covers the whole epoch, the part before the checkpoint included
    assert [h["loss"] for h in stats.history] == [h["loss"] for h in reference_stats.history[-len(stats.history) :]]
    assert stats.words == reference_stats.words - stats.resumed.words
    # the checkpoint written at the end is an ordinary model file
    np.testing.assert_array_equal(np.asarray(zoo.load(path).vectors()), np.asarray(reference.vectors()))


@needs_numba
def test_zoo_train_killed_after_a_checkpoint_resumes_to_the_same_vectors(tmp_path, capsys):
    from zoo.cli.main import main

    corpus = tmp_path / "toy.txt"
    corpus.write_text("\n".join(" ".join(s) for s in toy_sentences(2800)) + "\n")  # 3 jobs of 10,000 words an epoch
    args = ["train", "word2vec-skipgram", "--data", str(corpus), "--min-count", "1", "--dim", "12"]
    args += ["--epochs", "2", "--threads", "1", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "whole.safetensors")]) == 0
    # a process that dies (SIGKILL: nothing flushed, no cleanup) right after the checkpoint before job 4 of 6
    checkpoint = tmp_path / "run.ckpt.safetensors"
    resumable = [*args, "--checkpoint", str(checkpoint), "--checkpoint-every", "2"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_CHECKPOINT, "4", *resumable, "--out", str(tmp_path / "never.safetensors")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert checkpoint.exists() and not (tmp_path / "never.safetensors").exists()
    capsys.readouterr()
    assert main([*resumable, "--resume", "--out", str(tmp_path / "resumed.safetensors")]) == 0
    err = capsys.readouterr().err
    assert f"resumed from {checkpoint}: epoch 2, job 1, 34,200 words done" in err, err
    whole, resumed = zoo.load(tmp_path / "whole.safetensors"), zoo.load(tmp_path / "resumed.safetensors")
    for got, want in zip(arrays(resumed), arrays(whole), strict=True):
        np.testing.assert_array_equal(got, want)


KILLED_AFTER_CHECKPOINT = textwrap.dedent(
    """
    import os, signal, sys
    import zoo_word2vec.training as training
    from zoo.cli.main import main

    stop, args = int(sys.argv[1]), sys.argv[2:]
    write = training.save_checkpoint

    def write_then_die(*a, **k):
        path = write(*a, **k)
        if k["step"] == stop:
            os.kill(os.getpid(), signal.SIGKILL)
        return path

    training.save_checkpoint = write_then_die
    sys.exit(main(args))
    """
)


@pytest.mark.slow  # four devices, several runs
def test_on_a_mesh_of_four_devices_a_stopped_and_resumed_run_ends_with_the_one_device_vectors(toy, tmp_path):
    reference, _ = toy_fit(toy, "word2vec-skipgram", "jax")
    out = tmp_path / "mesh.npz"
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", MESH_RUN, str(Path(__file__).parent), str(tmp_path / "run.ckpt"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 devices, rows split: P('data', None), resumed at job 9" in done.stdout, done.stdout
    with np.load(out) as trained:
        np.testing.assert_array_equal(trained["input"], np.asarray(reference.input))
        np.testing.assert_array_equal(trained["output"], np.asarray(reference.output))


MESH_RUN = textwrap.dedent(
    """
    import sys
    import jax, numpy as np, zoo
    from jax.sharding import Mesh
    sys.path.insert(0, sys.argv[1])
    from test_word2vec import toy_sentences
    from test_word2vec_resume import JOB_WORDS, Stop, stop_after
    from zoo_word2vec.backends import SamplingTables
    from zoo_word2vec.fit import build_vocab, fit, make_runner

    sentences = toy_sentences(1500)
    vocab = build_vocab(sentences, min_count=1)
    model = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=16, epochs=3)
    mesh = Mesh(np.array(jax.devices()), ("data",))
    options = dict(backend="jax", progress=False, job_words=JOB_WORDS, mesh=mesh, checkpoint=sys.argv[2])
    try:
        fit(model, sentences, checkpoint_every=3, on_job=stop_after(11), **options)
    except Stop:
        pass
    trained, stats = fit(model, sentences, resume=True, **options)
    tables = SamplingTables(vocab.counts, 1e-3, 0.75)
    split = make_runner(model, "jax", tables, job_words=JOB_WORDS, mesh=mesh)._params[0].sharding.spec
    print(f"{len(jax.devices())} devices, rows split: {split}, resumed at job {stats.resumed.jobs}")
    np.savez(sys.argv[3], input=np.asarray(trained.input), output=np.asarray(trained.output))
    """
)


@needs_numba
def test_two_threads_stopped_and_resumed_learn_as_well_as_an_unstopped_run(tmp_path):
    sentences = country_sentences(per_country=150)  # ~6,600 words: 7 jobs of 1,000 an epoch
    vocab = build_vocab(sentences, min_count=1)
    questions = tmp_path / "questions.txt"
    questions.write_text(country_questions())

    def train(**options):
        model = zoo.build(
            "word2vec-skipgram", vocab=vocab, key=jax.random.key(0), embedding_size=24, epochs=5, sample=0.0
        )
        return fit(model, sentences, threads=2, progress=False, job_words=1000, **options)

    def analogies(model) -> float:
        return KeyedVectors.from_model(model).evaluate_word_analogies(questions)[0]

    whole, whole_stats = train()
    path = tmp_path / "run.ckpt.safetensors"
    with pytest.raises(Stop):
        train(checkpoint=path, checkpoint_every=5, on_job=stop_after(17))
    resumed, stats = train(checkpoint=path, checkpoint_every=5, resume=True)
    assert stats.resumed.jobs == 15 and stats.threads == 2
    assert analogies(whole) >= 0.75 and analogies(resumed) >= 0.75, (analogies(whole), analogies(resumed))
    assert abs(analogies(whole) - analogies(resumed)) <= 0.15
    final, resumed_final = whole_stats.history[-1]["loss"], stats.history[-1]["loss"]
    assert abs(final - resumed_final) < 0.03 * final, (final, resumed_final)


@needs_numba
def test_a_checkpoint_of_another_run_is_refused_naming_the_difference(toy, tmp_path):
    path = tmp_path / "run.ckpt.safetensors"
    options = {"backend": "numba", "progress": False, "job_words": JOB_WORDS, "checkpoint": path}
    fit(toy_model(toy, "word2vec-skipgram", epochs=1), toy[0], **options)
    same = toy_model(toy, "word2vec-skipgram", epochs=1)
    with pytest.raises(DataError, match=r"checkpoint of another run: it has seed=0 \(this run: 1\)"):
        fit(same, toy[0], resume=True, seed=1, **options)
    with pytest.raises(DataError, match=r"job_words=2000 \(this run: 3000\)"):
        fit(same, toy[0], resume=True, **{**options, "job_words": 3000})
    with pytest.raises(WeightsError, match=r"embedding_size=16 \(this run: 8\)"):
        fit(toy_model(toy, "word2vec-skipgram", epochs=1, embedding_size=8), toy[0], resume=True, **options)


class PoisonedRunner:
    """The numba runner, with one input row set to NaN before job `at`, as a diverging update leaves it."""

    parallel = False

    def __init__(self, runner: NumbaRunner, at: int) -> None:
        self.runner, self.at, self.calls = runner, at, 0

    def run(self, job, alpha_start, alpha_end, seed):
        if self.calls == self.at:
            self.runner.syn0[job[0]] = np.nan
        self.calls += 1
        return self.runner.run(job, alpha_start, alpha_end, seed)

    def snapshot(self):
        return self.runner.snapshot()

    def finish(self):
        return self.runner.finish()


@needs_numba
def test_a_nan_stops_training_with_training_diverged_naming_the_last_finite_checkpoint(toy, tmp_path):
    model = toy_model(toy, "word2vec-skipgram", output_init=1.0)
    tables = SamplingTables(toy[1].counts, model.spec["sample"], model.spec["ns_exponent"])
    runner = PoisonedRunner(make_runner(model, "numba", tables, job_words=JOB_WORDS), at=5)
    path = tmp_path / "run.ckpt.safetensors"
    ids = [np.asarray([toy[1].index[w] for w in s], np.int32) for s in toy[0]]
    with EncodedCorpus.write(ids) as corpus, pytest.raises(TrainingDiverged) as caught:
        run_epochs(runner, corpus, epochs=3, alpha=0.025, min_alpha=1e-4, job_words=JOB_WORDS, progress=False,
                   checkpoint=Checkpointing(path, every=2))  # fmt: skip
    message = str(caught.value)
    assert "became NaN or infinite" in message and "Lower the learning rate (alpha=0.025" in message
    assert f"the last checkpoint, {path}, holds the finite state before job 4 of epoch 1" in message
    saved = zoo.load(path)
    assert all(np.all(np.isfinite(a)) for a in arrays(saved))


@needs_numba
def test_an_absurd_learning_rate_stops_before_any_checkpoint_is_written(toy, tmp_path):
    path = tmp_path / "run.ckpt.safetensors"
    model = toy_model(toy, "word2vec-cbow", alpha=1e30)
    with pytest.raises(TrainingDiverged, match=r"the loss became NaN or infinite in epoch 1 .*alpha=1e\+30"):
        fit(model, toy[0], backend="numba", progress=False, job_words=JOB_WORDS, checkpoint=path, checkpoint_every=1)
    assert not path.exists()


def test_checkpoint_intervals_must_be_positive(tmp_path):
    with pytest.raises(DataError, match="checkpoint_every must be positive"):
        Checkpointing(tmp_path / "c", every=0)


@pytest.mark.parametrize("name", ["word2vec-skipgram", "fasttext", "glove"])
def test_zoo_train_offers_the_checkpoint_options(name, capsys, monkeypatch):
    from zoo.cli.main import main

    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as done:
        main(["train", name, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for option in ("--checkpoint CHECKPOINT", "--checkpoint-every", "--resume"):
        assert option in out, (name, option)
