"""Training logs: plain lines off a terminal, a bar on one, the JSON-lines metrics log, its curve."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import zoo
from zoo.cli.main import main
from zoo.data.batching import ArrayBatches
from zoo.errors import WeightsError
from zoo.training.progress import MetricsLog, Progress, read_log


class Scale(eqx.Module):
    w: jax.Array

    def loss(self, batch, *, key=None):
        return jnp.mean((self.w * batch["x"] - 1.0) ** 2)


def tiny_run(**options):
    data = ArrayBatches({"x": np.full((8, 2), 2.0, np.float32)}, batch_size=4)
    optimizer = optax.inject_hyperparams(optax.sgd)(learning_rate=0.05)
    return zoo.train(Scale(jnp.zeros(2)), data, steps=12, key=jax.random.key(0), optimizer=optimizer, **options)


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_off_a_terminal_one_plain_line_per_interval_and_a_record_each(tmp_path, capsys):
    log = tmp_path / "metrics.jsonl"
    scores = iter(range(100))
    tiny_run(log_every=3, log_file=log, evaluate=lambda m: {"score": next(scores)}, eval_every=6)
    err = capsys.readouterr().err
    assert "\r" not in err
    intervals = [line for line in err.splitlines() if line.startswith("step ") and "loss" in line]
    assert [line.split()[1] for line in intervals] == ["3/12", "6/12", "9/12", "12/12"]
    assert all("ex/s" in line and "elapsed" in line and "lr 0.05" in line for line in intervals)
    # two batches an epoch: each evaluation falls at an epoch's end, and its line says which
    assert [line for line in err.splitlines() if "score" in line] == [
        "epoch 3 (step 6): score 0",
        "epoch 6 (step 12): score 1",
    ]
    records = lines_of(log)
    trained = [r for r in records if "loss" in r]
    assert [r["step"] for r in trained] == [3, 6, 9, 12]
    for record in trained:
        assert {"step", "loss", "lr", "units_per_s", "elapsed", "time"} <= set(record)
        assert record["lr"] == pytest.approx(0.05) and record["units_per_s"] > 0
    assert trained[-1]["loss"] < trained[0]["loss"]
    assert [(r["step"], r["epoch"], r["score"]) for r in records if "score" in r] == [(6, 3, 0), (12, 6, 1)]
    assert [r["elapsed"] for r in records] == sorted(r["elapsed"] for r in records)


def test_a_mask_counts_tokens_and_says_so(tmp_path, capsys):
    """Throughput names what it counts in the user's words: a batch's mask counts tokens."""
    data = ArrayBatches({"x": np.full((8, 2), 2.0, np.float32), "words_mask": np.ones((8, 3), bool)}, batch_size=4)
    log = tmp_path / "metrics.jsonl"
    zoo.train(Scale(jnp.zeros(2)), data, steps=4, key=jax.random.key(0), log_every=2, units="words_mask", log_file=log)
    intervals = [line for line in capsys.readouterr().err.splitlines() if "loss" in line]
    assert intervals and all(" tok/s" in line and "mask" not in line for line in intervals)
    assert {r["unit"] for r in lines_of(log) if "loss" in r} == {"tok"}


def test_the_evaluation_that_stops_a_run_is_shown_and_logged_like_the_others(tmp_path, capsys):
    from zoo.training.selection import KeepBest, StopTraining

    keeper = KeepBest(lambda m: 0.5, "dev_accuracy", patience=1)
    log = tmp_path / "metrics.jsonl"
    with pytest.raises(StopTraining):
        tiny_run(log_every=6, evaluate=keeper, eval_every=2, log_file=log)
    shown = [line for line in capsys.readouterr().err.splitlines() if "dev_accuracy" in line]
    assert shown == ["epoch 1 (step 2): dev_accuracy 0.5", "epoch 2 (step 4): dev_accuracy 0.5"]
    assert [(r["step"], r["dev_accuracy"]) for r in lines_of(log) if "dev_accuracy" in r] == [(2, 0.5), (4, 0.5)]


def test_a_resumed_or_second_run_appends_and_quiet_shows_no_intervals(tmp_path, capsys):
    log = tmp_path / "metrics.jsonl"
    tiny_run(log_every=6, log_file=log, progress=False)
    tiny_run(log_every=4, log_file=log, progress=False)
    assert [r["step"] for r in lines_of(log)] == [6, 12, 4, 8, 12]
    assert capsys.readouterr().err == ""


def test_on_a_terminal_a_bar_and_no_plain_lines(tmp_path):
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal, MetricsLog(tmp_path / "m.jsonl") as log:
        with Progress(total=4, log=log, stream=terminal) as progress:
            assert not progress.bar.disable and not progress.lines
            for step in range(1, 5):
                progress.advance()
                progress.interval({"step": step, "loss": 1.0 / step}, f"loss {1.0 / step:.4f}", f"step {step}/4")
        terminal.flush()
        shown = os.read(leader, 65536).decode()
    os.close(leader)
    assert "\r" in shown and "step 4/4" not in shown  # the bar, not the plain lines
    assert [r["step"] for r in read_log(tmp_path / "m.jsonl")] == [1, 2, 3, 4]


KILLED = """
import sys, jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx, zoo
from zoo.data.batching import ArrayBatches

class Scale(eqx.Module):
    w: jax.Array
    def loss(self, batch, *, key=None):
        return jnp.mean((self.w * batch["x"] - 1.0) ** 2)

data = ArrayBatches({"x": np.full((8, 2), 2.0, np.float32)}, batch_size=4)
zoo.train(Scale(jnp.zeros(2)), data, steps=10**9, key=jax.random.key(0), optimizer=optax.sgd(0.01),
          log_every=1, log_file=sys.argv[1], evaluate=lambda m: {"w": float(m.w[0])}, eval_every=1)
"""


def test_a_run_killed_mid_way_leaves_every_line_valid(tmp_path):
    log = tmp_path / "metrics.jsonl"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(KILLED))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([sys.executable, str(script), str(log)], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # a guard against hanging, not a measurement
        while (not log.exists() or log.read_text().count("\n") < 200) and time.monotonic() < deadline:
            assert proc.poll() is None, "the training script ended by itself"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    text = log.read_text()
    lines = text.splitlines()
    assert len(lines) >= 200
    for line in lines if text.endswith("\n") else lines[:-1]:  # a line being written may be cut; none was
        json.loads(line)
    assert text.endswith("\n")
    records = read_log(log)
    assert len(records) == len(lines)
    assert {r["step"] for r in records if "loss" in r} >= set(range(1, 100))


def test_the_word_vector_loop_writes_the_same_records(tmp_path, capfd):
    words = ["the", "cat", "dog", "sat", "on", "a", "mat", "big", "small", "red", "blue", "ran"]
    rng = np.random.default_rng(0)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(words, 10)) for _ in range(600)) + "\n")
    log = tmp_path / "w2v.jsonl"
    out = tmp_path / "v.safetensors"
    args = ["train", "word2vec-skipgram", "--data", str(corpus), "--out", str(out), "--dim", "8"]
    assert main([*args, "--epochs", "3", "--min-count", "1", "--threads", "1", "--log-file", str(log)]) == 0
    err = capfd.readouterr().err
    assert "\r" not in err
    records = lines_of(log)
    assert {"step", "epoch", "words", "loss", "lr", "units_per_s", "elapsed"} <= set(records[-1])
    ends = [r for r in records if r["words"] % 6000 == 0 and r["words"] == 6000 * r["epoch"]]
    assert sorted({r["epoch"] for r in ends}) == [1, 2, 3]  # each epoch's end is a record
    assert records[-1]["lr"] < records[0]["lr"]
    plain = [line for line in err.splitlines() if " words  loss " in line]
    assert len(plain) == len(records)  # one plain line per record
    assert plain[-1].startswith("word2vec-skipgram: epoch 3/3  18k/18k words")


def test_zoo_plot_curve_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    log = tmp_path / "metrics.jsonl"
    with MetricsLog(log) as metrics:
        for step in range(1, 21):
            metrics.write({"step": step, "loss": 3.0 / step, "units_per_s": 100.0, "elapsed": step * 0.1})
            if step % 5 == 0:
                metrics.write({"step": step, "valid_bleu": step * 1.5, "elapsed": step * 0.1})
    with open(log, "a") as handle:
        handle.write('{"step": 21, "lo')  # cut short by a crash
    out = tmp_path / "curve.png"
    assert main(["plot", "curve", str(log), "--metric", "loss", "--metric", "valid_bleu", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "curve", str(log), "--metric", "bleu", "--out", str(out)]) == 2
    assert "its metrics are: loss, valid_bleu" in capsys.readouterr().err


def test_an_unwritable_log_file_is_refused_before_training(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    bad = blocker / "metrics.jsonl"
    out = tmp_path / "m.safetensors"
    with pytest.raises(SystemExit) as stopped:
        main(["train", "seq2seq", "--task", "reversal", "--steps", "5", "--out", str(out), "--log-file", str(bad)])
    assert stopped.value.code == 2
    assert "--log-file" in capsys.readouterr().err
    assert not out.exists()
    calls = []

    def loss(model, batch, *, key=None):
        calls.append(1)
        return model.loss(batch)

    with pytest.raises(WeightsError):
        tiny_run(log_file=bad, loss=loss)
    assert calls == []  # not one step traced


def topic_corpus(path):
    from word_corpora import topic_sentences

    path.write_text("\n".join(" ".join(s) for s in topic_sentences(sentences=300)) + "\n")
    return path


def test_glove_writes_a_record_and_a_plain_line_an_epoch_and_plot_curve_draws_them(tmp_path, capfd):
    corpus, log = topic_corpus(tmp_path / "corpus.txt"), tmp_path / "glove.jsonl"
    args = ["train", "glove", "--data", str(corpus), "--out", str(tmp_path / "g.safetensors"), "--dim", "6"]
    args += ["--min-count", "1", "--tokenizer", "whitespace", "--epochs", "4", "--batch-size", "128", "--lr", "0.2"]
    args += ["--log-file", str(log)]
    assert main(args) == 0
    err = capfd.readouterr().err
    assert "\r" not in err
    plain = [line for line in err.splitlines() if line.startswith("glove: epoch ")]
    assert [line.split()[2] for line in plain] == ["1/4", "2/4", "3/4", "4/4"]
    assert all("entries/s" in line and "elapsed" in line for line in plain)
    records = lines_of(log)
    assert [r["epoch"] for r in records] == [1, 2, 3, 4]
    steps = records[0]["step"]  # AdaGrad steps an epoch
    assert steps > 1 and [r["step"] for r in records] == [steps * e for e in (1, 2, 3, 4)]
    for record in records:
        assert {"loss", "lr", "units_per_s", "elapsed", "time"} <= set(record) and record["unit"] == "entry"
        assert record["lr"] == pytest.approx(0.2) and record["units_per_s"] > 0
    assert records[-1]["loss"] < records[0]["loss"]
    assert main(["train", "glove", *args[2:], "--quiet"]) == 0  # quiet: no lines, the log appended to
    assert "glove: epoch" not in capfd.readouterr().err
    assert [r["epoch"] for r in lines_of(log)] == [1, 2, 3, 4] * 2
    pytest.importorskip("matplotlib")
    out = tmp_path / "curve.png"
    assert main(["plot", "curve", str(log), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ppmi_logs_each_phase_with_its_duration_and_sizes(tmp_path, capfd):
    corpus, log = topic_corpus(tmp_path / "corpus.txt"), tmp_path / "ppmi.jsonl"
    out = tmp_path / "p.safetensors"
    args = ["train", "ppmi-svd", "--data", str(corpus), "--out", str(out), "--dim", "5", "--min-count", "1"]
    args += ["--tokenizer", "whitespace"]
    assert main([*args, "--log-file", str(log)]) == 0
    err = capfd.readouterr().err
    records = lines_of(log)
    assert [r["phase"] for r in records] == ["vocabulary", "cooccurrences", "ppmi", "svd"]
    assert all(r["seconds"] >= 0 and {"elapsed", "time"} <= set(r) for r in records)
    vocabulary, counts, ppmi, svd = records
    assert vocabulary["vocab_size"] == 48 and "vocabulary: 48 words" in err
    assert 0 < ppmi["nnz"] <= counts["nnz"] <= 48 * 48 and f"co-occurrences: {counts['nnz']} non-zero" in err
    assert svd["dim"] == 5 and svd["solver"] == "arpack" and svd["top_singular_value"] > 0
    assert f"PPMI: {ppmi['nnz']} positive entries" in err and "SVD: 5 dimensions (arpack)" in err
    assert [r["elapsed"] for r in records] == sorted(r["elapsed"] for r in records)
    # phases have no step: plotting against it says to draw against elapsed time, which works
    pytest.importorskip("matplotlib")
    png = tmp_path / "ppmi.png"
    assert main(["plot", "curve", str(log), "--metric", "seconds", "--out", str(png)]) == 2
    assert "no record of the log has a number for 'step'" in capfd.readouterr().err
    assert main(["plot", "curve", str(log), "--metric", "seconds", "--x", "elapsed", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
