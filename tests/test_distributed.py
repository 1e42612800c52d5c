"""Training on several processes (`zoo.training.distributed`): the same result as one process.

The multi-process tests launch real processes on 127.0.0.1, one CPU device each,
joined by JAX's distributed runtime (gloo collectives on CPU), and compare the
final parameters with a single-process run of the same global batches.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import zoo
from zoo.cli.main import main
from zoo.data.batching import ArrayBatches
from zoo.data.sharding import ProcessRows, even_rows
from zoo.errors import DataError, DistributedError, InvalidParameterError
from zoo.training import distributed
from zoo.training.recipes import add_common_arguments

HERE = Path(__file__).parent
CLI = "from zoo.cli.main import main; raise SystemExit(main())"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def process_env(**extra: str) -> dict[str, str]:
    """The test's environment for one process: one CPU device, no launcher's variables but `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_", "ZOO_DISTRIBUTED"))}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=1", **extra)
    return env


def finish(processes: list[subprocess.Popen], timeout: float = 240) -> list[str]:
    """Wait for every process (killing all of them if one fails or hangs); their standard error."""
    errors = []
    try:
        for process in processes:
            _, err = process.communicate(timeout=timeout)
            errors.append(err)
            assert process.returncode == 0, err[-3000:]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    return errors


def max_difference(a, b) -> float:
    pairs = zip(jax.tree.leaves(eqx_arrays(a)), jax.tree.leaves(eqx_arrays(b)), strict=True)
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in pairs)


def eqx_arrays(model):
    import equinox as eqx

    return eqx.filter(model, eqx.is_array)


# -- several real processes --------------------------------------------------------------------


@pytest.mark.slow  # several real processes training
def test_seq2seq_on_two_processes_equals_one_process_and_process_0_alone_writes(tmp_path):
    """``zoo train seq2seq --coordinator ... --num-processes 2 --process-id I`` on the reversal task:
    each process feeds 4 of the 8 rows of every batch; the model equals a one-process run's."""
    from zoo_seq2seq.tasks import reversal_pairs

    sources, targets = reversal_pairs(48, min_length=4, max_length=4, seed=0)  # one bucket: one compilation
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{' '.join(s)}\t{' '.join(t)}\n" for s, t in zip(sources, targets, strict=True)))
    common = ["train", "seq2seq", "--data", str(pairs), "--valid-size", "0", "--steps", "4", "--batch-size", "8"]
    common += ["--set", "hidden_size=8", "--set", "embedding_size=4", "--quiet"]
    run = ["--coordinator", f"127.0.0.1:{free_port()}", "--num-processes", "2", "--coordinator-timeout", "120"]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CLI, *common, *run, "--process-id", f"{i}", "--out", f"{tmp_path}/{i}.safetensors"],
            env=process_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    try:  # the reference, here, while they run
        assert main([*common, "--out", str(tmp_path / "one.safetensors")]) == 0
    finally:
        errors = finish(processes)
    assert "process 1 of 2 done: process 0 saved" in errors[1]
    assert (tmp_path / "0.safetensors").exists()
    assert not (tmp_path / "1.safetensors").exists()  # process 1 wrote nothing
    one, two = zoo.load(tmp_path / "one.safetensors"), zoo.load(tmp_path / "0.safetensors")
    assert max_difference(one, two) < 1e-5
    untrained = zoo.build("seq2seq", key=jax.random.key(0), vocab=one.vocabs, hidden_size=8, embedding_size=4)
    assert max_difference(one, untrained) > 1e-4  # it did train


@pytest.mark.slow  # several real processes training
def test_language_model_on_four_slurm_processes_resumes_and_equals_one_process(tmp_path):
    """Four processes under SLURM's variables (JAX's own detection, no flags), one row of the
    carried state each: 3 steps, a checkpoint, 3 more resumed from it; the model and every
    process's final carry equal one process's; one process's time budget stops all of them after
    the same step; data that differs between processes is refused."""
    sys.path.insert(0, str(HERE))
    try:
        import distributed_worker
    finally:
        sys.path.remove(str(HERE))
    (tmp_path / "four").mkdir()
    (tmp_path / "one").mkdir()
    slurm = dict(SLURM_JOB_ID="4242", SLURM_STEP_NODELIST="127.0.0.1", SLURM_NTASKS="4")
    port = str(free_port())
    processes = [
        subprocess.Popen(
            [sys.executable, str(HERE / "distributed_worker.py"), str(tmp_path / "four")],
            env=process_env(**slurm, SLURM_PROCID=str(i), SLURM_LOCALID=str(i), JAX_COORDINATOR_PORT=port),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    try:
        reference, _ = distributed_worker.lm_run(tmp_path / "one")
    finally:
        finish(processes)
    one, four = zoo.load(tmp_path / "one" / "lm.safetensors"), zoo.load(tmp_path / "four" / "lm.safetensors")
    assert max_difference(one, four) < 1e-5
    carry = np.load(tmp_path / "one" / "carry-0.npz")
    for index in range(4):
        report = json.loads((tmp_path / "four" / f"report-{index}.json").read_text())
        assert (report["processes"], report["index"]) == (4, index)
        assert (report["first_step"], report["step"], report["position"]) == (3, 6, reference["position"])
        assert "the processes disagree on the first batch" in report["disagreement"]
        assert report["stopped"] == [1, True]  # process 3's time budget stopped all four after step 1
        theirs = np.load(tmp_path / "four" / f"carry-{index}.npz")
        assert theirs["0"].shape == carry["0"].shape == (4, 8)  # every process ends with the whole carry
        for name in carry:
            np.testing.assert_allclose(theirs[name], carry[name], atol=1e-5)


# -- flags, errors, the data shard (one process) -------------------------------------------------


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_common_arguments(parser, steps=10, batch_size=8, lr=0.1)
    return parser.parse_args(["--out", "x.safetensors", *flags])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--coordinator", "node01"], "'node01' is not HOST:PORT"),
        (["--coordinator", "node01:http"], "the port 'http' must be a number from 1 to 65535"),
        (["--coordinator", "node01:70000"], "must be a number from 1 to 65535"),
        (["--coordinator", "::1:1234"], "write an IPv6 address in brackets"),
        (["--num-processes", "0"], "--num-processes: 0 is out of range: it must be an integer >= 1"),
        (["--process-id", "-1"], "--process-id: -1 is out of range"),
        (["--coordinator-timeout", "0"], "--coordinator-timeout: 0 is out of range"),
    ],
)
def test_bad_flags_are_usage_errors(flags, message, capsys):
    with pytest.raises(SystemExit):
        parse(*flags)
    assert message in capsys.readouterr().err


def test_good_flags_parse():
    options = parse("--coordinator", "[::1]:1234", "--num-processes", "4", "--process-id", "3")
    assert (options.coordinator, options.num_processes, options.process_id) == ("[::1]:1234", 4, 3)
    assert options.coordinator_timeout == distributed.DEFAULT_TIMEOUT


def test_an_inconsistent_run_is_refused_before_the_recipe_reads_data(tmp_path, capsys):
    never = tmp_path / "no-such-pairs.tsv"  # reading it would fail: the check comes first
    flags = ["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "2"]
    status = main(["train", "seq2seq", "--data", str(never), "--out", str(tmp_path / "m.safetensors"), *flags])
    assert status == 2
    assert "--process-id 2 is out of range for --num-processes 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (dict(coordinator="127.0.0.1:1234", num_processes=2), InvalidParameterError, "go together: give all three"),
        (dict(coordinator="127.0.0.1:1234", num_processes=2, process_id=5), InvalidParameterError, "0 to 1"),
        (dict(coordinator="127.0.0.1", num_processes=2, process_id=1), InvalidParameterError, "is not HOST:PORT"),
        (dict(), DistributedError, "no run to join"),
        (dict(coordinator="192.0.2.1:1234", num_processes=2, process_id=0), DistributedError, "must be this machine"),
    ],
)
def test_start_refuses_what_cannot_work(call, error, message, monkeypatch):
    for name in [*os.environ]:
        if name.startswith(("SLURM_", "OMPI_", "ZOO_DISTRIBUTED")):
            monkeypatch.delenv(name)
    with pytest.raises(error, match=message):
        distributed.start(**call, timeout=1)


def test_a_coordinator_that_never_answers_is_an_error_after_the_timeout():
    port = free_port()  # nothing listens there
    with pytest.raises(DistributedError, match=rf"no coordinator answered at 127.0.0.1:{port} within 0.5 s"):
        distributed.start(f"127.0.0.1:{port}", 2, 1, timeout=0.5)


def test_process_0_refuses_a_port_in_use():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(DistributedError, match=f"port {port} is already in use"):
            distributed.start(f"127.0.0.1:{port}", 2, 0, timeout=1)


def test_cluster_environments_are_detected_from_their_variables(monkeypatch):
    for name in [*os.environ]:
        if name.startswith(("SLURM_", "OMPI_", "ZOO_DISTRIBUTED")):
            monkeypatch.delenv(name)
    assert distributed.cluster_environment() is None
    slurm = dict(SLURM_JOB_ID="1", SLURM_STEP_NODELIST="n[01-04]", SLURM_NTASKS="1", SLURM_PROCID="0")
    for name, value in {**slurm, "SLURM_LOCALID": "0"}.items():
        monkeypatch.setenv(name, value)
    assert distributed.cluster_environment() is None  # one task: nothing to join
    monkeypatch.setenv("SLURM_NTASKS", "4")
    assert distributed.cluster_environment() == "slurm"
    monkeypatch.setenv("ZOO_DISTRIBUTED", "auto")
    assert distributed.cluster_environment() == "auto"
    monkeypatch.setenv("ZOO_COORDINATOR_TIMEOUT", "soon")
    with pytest.raises(InvalidParameterError, match="ZOO_COORDINATOR_TIMEOUT='soon'"):
        distributed.default_timeout()


def test_one_process_starts_nothing_and_writes():
    assert distributed.start_from_options(argparse.Namespace()) is None  # a recipe without the options
    assert distributed.is_writer()
    distributed.barrier("nothing to wait for")


def test_process_rows_split_every_batch_into_blocks_at_the_same_positions():
    data = ArrayBatches({"x": np.arange(24).reshape(12, 2), "y": np.arange(12)}, batch_size=6, seed=3)
    whole = data.iterate({"epoch": 1, "batch": 1})
    parts = [ProcessRows(data, even_rows(i, 3)).iterate({"epoch": 1, "batch": 1}) for i in range(3)]
    for _ in range(3):
        batch, position = next(whole)
        pieces = [next(part) for part in parts]
        assert all(p == position for _, p in pieces)
        for name in batch:
            np.testing.assert_array_equal(np.concatenate([piece[name] for piece, _ in pieces]), batch[name])
    with pytest.raises(DataError, match="a batch of 6 rows cannot be split evenly over 4 processes"):
        next(ProcessRows(data, even_rows(0, 4)).iterate())
