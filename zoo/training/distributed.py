"""Several processes, one training run: JAX's distributed runtime, started once.

Every process of a run calls `start` (``zoo train`` does it from
``--coordinator HOST:PORT --num-processes N --process-id I``) before any JAX
computation; afterwards ``jax.devices()`` lists the devices of all processes,
`zoo.train` trains over all of them (each process feeds its rows of every
global batch) and process 0 alone writes files (`is_writer`).

Launchers that describe the job in environment variables need no flags: with
none given, `start_from_options` calls ``jax.distributed.initialize()`` without
arguments (JAX's own cluster detection) when one of these describes a job of
more than one process:

- SLURM (``srun``): ``SLURM_JOB_ID``, ``SLURM_STEP_NODELIST``, ``SLURM_NTASKS``,
  ``SLURM_PROCID``, ``SLURM_LOCALID``; the coordinator is the first node of the
  step, on a port derived from the job id (``JAX_COORDINATOR_PORT`` overrides it).
- Open MPI (``mpirun``): ``OMPI_MCA_orte_hnp_uri``, ``OMPI_COMM_WORLD_SIZE``,
  ``OMPI_COMM_WORLD_RANK``, ``OMPI_COMM_WORLD_LOCAL_RANK``.
- ``ZOO_DISTRIBUTED=auto``: any other environment JAX detects itself (Cloud TPU
  pods, Kubernetes, ``mpi4py``).

``ZOO_COORDINATOR_TIMEOUT`` (seconds, default 300) bounds how long a process
waits for the coordinator and the others; ``--coordinator-timeout`` overrides it.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any

from zoo.errors import DistributedError, InvalidParameterError

__all__ = [
    "DEFAULT_TIMEOUT",
    "Processes",
    "barrier",
    "cluster_environment",
    "coordinator_address",
    "default_timeout",
    "is_writer",
    "start",
    "start_from_options",
]

DEFAULT_TIMEOUT = 300
"""Seconds a process waits for the coordinator and the other processes, unless told otherwise."""

_SLURM = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")
_OPEN_MPI = ("OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK")


@dataclass(frozen=True)
class Processes:
    """The run this process belongs to: `count` processes, this one number `index`."""

    index: int
    count: int
    coordinator: str | None = None


_STARTED: Processes | None = None


def coordinator_address(text: str) -> str:
    """An argparse ``type=`` for ``--coordinator``: ``HOST:PORT`` (``[IPv6]:PORT``), port 1-65535."""
    host, colon, port = text.strip().rpartition(":")
    if not colon or not host or not port:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 10.0.0.1:1234 or node01:1234)")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: the port {port!r} must be a number from 1 to 65535")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in host and bare == host:
        raise argparse.ArgumentTypeError(f"{text!r}: write an IPv6 address in brackets, e.g. [{host}]:{port}")
    if not bare or any(c.isspace() or c in "[]/@" for c in bare):
        raise argparse.ArgumentTypeError(f"{text!r}: {host!r} is not a host name or address")
    if ":" in bare:
        try:
            ipaddress.IPv6Address(bare)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {bare!r} is not an IPv6 address") from None
    return f"{host}:{int(port)}"


def default_timeout() -> float:
    """``ZOO_COORDINATOR_TIMEOUT`` if set (seconds > 0), else `DEFAULT_TIMEOUT`."""
    text = os.environ.get("ZOO_COORDINATOR_TIMEOUT")
    if text is None or not text.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise InvalidParameterError(f"ZOO_COORDINATOR_TIMEOUT={text!r} must be a number of seconds > 0")
    return value


def cluster_environment() -> str | None:
    """The launcher whose environment describes a job of several processes ("slurm",
    "open-mpi", or "auto" for ``ZOO_DISTRIBUTED=auto``), or None."""
    env = os.environ
    if env.get("ZOO_DISTRIBUTED", "").strip().lower() == "auto":
        return "auto"
    if all(name in env for name in _OPEN_MPI) and _count(env["OMPI_COMM_WORLD_SIZE"]) > 1:
        return "open-mpi"
    if all(name in env for name in _SLURM) and _count(env["SLURM_NTASKS"]) > 1:
        return "slurm"
    return None


def _count(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def start(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    timeout: float | None = None,
) -> Processes:
    """Join (or, as process 0, host) the run: ``jax.distributed.initialize`` once.

    With all three of `coordinator` (``HOST:PORT`` of process 0), `num_processes`
    and `process_id` given, they are used; with none, JAX detects a cluster
    environment (see the module's docstring). A second call with the same
    settings returns the same `Processes`; other settings are a `DistributedError`.
    One process (``num_processes=1``) starts nothing.

    Before JAX is asked, what can be checked is: the address parses, the id is
    in range, process 0 can listen on the port (it must run on HOST), and every
    other process waits at most `timeout` seconds (default `default_timeout`)
    for the coordinator to answer, then raises `DistributedError` saying so.
    Process 0 then waits up to `timeout` for all the others to join; if one never
    comes, JAX ends the process with ``DEADLINE_EXCEEDED``.
    """
    global _STARTED
    timeout = default_timeout() if timeout is None else _check_timeout(timeout)
    given = (coordinator, num_processes, process_id)
    if coordinator is not None:
        coordinator = _parsed(coordinator)
    if num_processes is not None or process_id is not None:
        num_processes, process_id = _check_ids(num_processes, process_id)
    if _STARTED is not None:
        return _again(_STARTED, coordinator, num_processes, process_id)
    import jax

    if jax.distributed.is_initialized():  # started by the program itself
        _STARTED = Processes(jax.process_index(), jax.process_count(), coordinator)
        return _again(_STARTED, coordinator, num_processes, process_id)
    if num_processes == 1:
        _STARTED = Processes(0, 1, coordinator)
        return _STARTED
    if given == (None, None, None) and cluster_environment() is None:
        raise DistributedError(
            "no run to join: give the coordinator, the number of processes and this process's id "
            "(--coordinator HOST:PORT --num-processes N --process-id I), or start under a launcher JAX "
            "detects (SLURM's srun, Open MPI's mpirun, or ZOO_DISTRIBUTED=auto)"
        )
    if None in given and cluster_environment() is None:
        raise InvalidParameterError(
            "--coordinator, --num-processes and --process-id go together: give all three "
            "(e.g. --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 0 on the first machine), "
            "or none under a launcher that sets them (SLURM, Open MPI)"
        )
    if None not in (coordinator, num_processes, process_id):
        _preflight(coordinator, process_id, timeout)
    try:
        jax.distributed.initialize(
            coordinator, num_processes, process_id, initialization_timeout=max(1, round(timeout))
        )
    except (RuntimeError, ValueError) as error:
        raise DistributedError(_failure(error, coordinator)) from error
    _STARTED = Processes(jax.process_index(), jax.process_count(), coordinator)
    return _STARTED


def start_from_options(options: argparse.Namespace) -> Processes | None:
    """`start` as ``zoo train``'s common options say (`zoo.training.recipes.add_common_arguments`),
    or as a detected cluster environment does; None when the run is one process.
    Called after parsing, before the recipe reads any data; says on standard error which
    process this is and where it connects."""
    if not hasattr(options, "coordinator_timeout"):  # a recipe without the options trains on its own
        return None
    coordinator = getattr(options, "coordinator", None)
    count = getattr(options, "num_processes", None)
    index = getattr(options, "process_id", None)
    timeout = getattr(options, "coordinator_timeout", None)
    if (coordinator, count, index) == (None, None, None) and cluster_environment() is None:
        return None
    _check_ids(count, index)
    where = coordinator or f"the coordinator of the {cluster_environment()} job"
    if count != 1:
        print(f"zoo: process {_or(index)} of {_or(count)} joins {where}", file=sys.stderr, flush=True)
    processes = start(coordinator, count, index, timeout=timeout)
    return processes if processes.count > 1 else None


def is_writer() -> bool:
    """Whether this process writes files: always, except in a run of several processes,
    where process 0 alone does (the others hold the same model)."""
    import jax

    return not jax.distributed.is_initialized() or jax.process_index() == 0


def barrier(name: str) -> None:
    """Wait until every process of the run reaches the barrier `name` (nothing with one process)."""
    import jax

    if jax.distributed.is_initialized() and jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def _or(value: Any) -> str:
    return "?" if value is None else str(value)


def _check_timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise InvalidParameterError(f"timeout={value!r} is out of range: it must be a number of seconds > 0")
    return float(value)


def _parsed(coordinator: str) -> str:
    try:
        return coordinator_address(coordinator)
    except argparse.ArgumentTypeError as error:
        raise InvalidParameterError(f"--coordinator {error}") from None


def _check_ids(count: int | None, index: int | None) -> tuple[int | None, int | None]:
    for flag, value, low in (("--num-processes", count, 1), ("--process-id", index, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InvalidParameterError(f"{flag} {value!r} is out of range: it must be an integer >= {low}")
    if count is not None and index is not None and index >= count:
        raise InvalidParameterError(
            f"--process-id {index} is out of range for --num-processes {count}: "
            f"number the processes 0 to {count - 1} (0 runs the coordinator)"
        )
    return count, index


def _again(started: Processes, coordinator: str | None, count: int | None, index: int | None) -> Processes:
    wanted = (coordinator or started.coordinator, count or started.count, started.index if index is None else index)
    if wanted != (started.coordinator, started.count, started.index):
        raise DistributedError(
            f"this process already joined a run as process {started.index} of {started.count}"
            f"{f' at {started.coordinator}' if started.coordinator else ''}; it cannot join another "
            f"(asked: process {index} of {count} at {coordinator}). Start a new process for another run"
        )
    return started


def _preflight(coordinator: str, process_id: int | None, timeout: float) -> None:
    """Check what can be checked before JAX blocks: the coordinator's host and port."""
    host, port = coordinator.rsplit(":", 1)
    host, port = host.strip("[]"), int(port)
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise DistributedError(f"--coordinator {coordinator}: cannot resolve {host!r} ({error})") from None
    if process_id == 0:
        _check_can_listen(coordinator, addresses, port)
    else:
        _wait_for(coordinator, addresses, timeout)


def _check_can_listen(coordinator: str, addresses: list, port: int) -> None:
    """Process 0 runs the coordinator: HOST must be this machine and PORT free."""
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            try:
                probe.bind((address[0], 0))
            except OSError:
                continue  # not an address of this machine
            break
    else:
        raise DistributedError(
            f"--coordinator {coordinator}: process 0 runs the coordinator, so the host must be this machine, "
            "but it names none of its addresses; start --process-id 0 on that host, or name this one"
        )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise DistributedError(
                    f"--coordinator {coordinator}: port {port} is already in use on this machine "
                    "(another run's coordinator?); choose another port for every process"
                ) from None
            raise DistributedError(f"--coordinator {coordinator}: cannot listen on port {port} ({error})") from None


def _wait_for(coordinator: str, addresses: list, timeout: float) -> None:
    """Return once something listens at the coordinator's address; `DistributedError` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        for family, kind, proto, _, address in addresses:
            with socket.socket(family, kind, proto) as probe:
                probe.settimeout(max(0.1, min(2.0, deadline - time.monotonic())))
                try:
                    probe.connect(address)
                    return
                except OSError:
                    pass
        if time.monotonic() >= deadline:
            raise DistributedError(
                f"no coordinator answered at {coordinator} within {timeout:g} s: start the process with "
                "--process-id 0 on that host with the same --coordinator, check that the port is reachable "
                "from here (firewall), or wait longer with --coordinator-timeout / ZOO_COORDINATOR_TIMEOUT"
            )
        time.sleep(0.2)


def _failure(error: BaseException, coordinator: str | None) -> str:
    text = str(error)
    if "before any JAX computations" in text or ("backend" in text.lower() and "initialized" in text.lower()):
        return (
            "the distributed runtime must start before JAX computes anything in this process: call "
            "zoo.training.distributed.start (or jax.distributed.initialize) first thing"
        )
    where = f" at {coordinator}" if coordinator else ""
    return f"could not join the run{where}: {text}"
