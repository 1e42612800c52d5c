"""An ordered pool of worker processes: ``function(item)`` for many items, results in item order.

Each worker is a fresh Python (``python -c``, never a fork: a process that runs
JAX has threads, and forking it can deadlock), and it never imports the
caller's ``__main__``, so a script, a notebook or code piped to ``python -``
uses workers without an ``if __name__ == "__main__":`` guard. Work travels as
pickles through the worker's standard input and output (the worker's own
prints go to standard error): `function` and the initializer must be
picklable, that is module-level functions. The workers start with this
process's ``sys.path``, so what it imports they import too.

::

    for counts in ordered_map(count_part, parts, workers=4, initializer=setup, initargs=(tokenizer,)):
        ...   # parts[0]'s result first, whichever worker finished first
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, TypeVar

from zoo.errors import ZooError

__all__ = ["WorkerFailed", "ordered_map"]

Item = TypeVar("Item")
Result = TypeVar("Result")

_SERVE = "import sys; sys.path[:] = {path!r}; import zoo.data.worker_pool as pool; pool._serve()"
_HEADER = struct.Struct("<Q")
_IN_FLIGHT = 2  # items sent ahead to each worker, so none waits for the next


class WorkerFailed(ZooError, RuntimeError):
    """A worker process ended without answering (killed, out of memory) or could not start."""


def _send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    """The next message, or `EOFError` at the stream's end."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _serve() -> None:
    """A worker's loop: set up, then answer ``(index, function, item)`` with ``(index, ok, value)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller handles Ctrl-C and closes the pipes
    inbox, outbox = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # a print in the work goes to standard error, not into the pipe
    sys.stdout = sys.stderr
    initializer, initargs = _receive(inbox)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            index, function, item = _receive(inbox)
        except EOFError:
            return
        try:
            answer = (index, True, function(item))
        except Exception as error:  # sent back, raised in the caller
            answer = (index, False, (_portable(error), traceback.format_exc()))
        try:
            _send(outbox, answer)
        except Exception as error:  # a result that cannot be pickled
            _send(outbox, (index, False, (WorkerFailed(f"the worker's answer cannot be pickled: {error}"), "")))


def _portable(error: Exception) -> Exception:
    """`error` if it survives pickling both ways, else a `WorkerFailed` that says what it was."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return WorkerFailed(f"{type(error).__name__}: {error}")
    return error


class _Worker:
    """One worker process and the thread that reads its answers into the pool's queue."""

    def __init__(self, number: int, answers: queue.Queue) -> None:
        self.number = number
        serve = _SERVE.format(path=list(sys.path))  # this process's path, before anything else is imported
        self.process = subprocess.Popen([sys.executable, "-c", serve], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read, args=(answers,), daemon=True)
        self.reader.start()

    def set_up(self, setup: bytes) -> None:
        """Send the initializer and its arguments (written once every worker has started)."""
        try:
            self.process.stdin.write(setup)
            self.process.stdin.flush()
        except OSError:
            raise self.failed() from None

    def failed(self) -> WorkerFailed:
        """The error of a worker that stopped answering."""
        code = self.process.wait()
        return WorkerFailed(
            f"worker process {self.process.pid} ended without answering (exit status {code}): killed, or out of "
            "memory, or it could not start (its error is above)? Use fewer workers, or workers=1 to read here"
        )

    def _read(self, answers: queue.Queue) -> None:
        while True:
            try:
                answers.put((self.number, _receive(self.process.stdout)))
            except Exception:  # EOF, or a message that cannot be read: the worker is gone or lost
                answers.put((self.number, None))
                return

    def give(self, index: int, function: Callable, item: Any) -> None:
        try:
            _send(self.process.stdin, (index, function, item))
        except OSError:
            raise self.failed() from None

    def stop(self, *, now: bool) -> None:
        """End the worker: at once (`now`: its work is not wanted), or once it has read to its input's end."""
        if now:
            self.process.kill()
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.reader.join(timeout=10)


def _setup(initializer: Callable | None, initargs: tuple) -> bytes:
    blob = pickle.dumps((initializer, initargs), protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(blob)) + blob


def ordered_map(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    *,
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[Result]:
    """``function(item)`` for each of `items` on `workers` processes, yielded in the order of `items`.

    `initializer(*initargs)` runs once in each worker before its first item (what
    every item needs, such as a vocabulary, travels once per worker this way). An
    exception raised by `function` is raised here when its item's turn comes (the
    worker's traceback attached as a note); a worker that dies is a `WorkerFailed`.
    With one worker or one item everything runs in this process, as a plain loop.
    """
    if workers <= 1 or len(items) <= 1:
        if initializer is not None:
            initializer(*initargs)
        yield from map(function, items)
        return
    setup = _setup(initializer, initargs)
    answers: queue.Queue = queue.Queue()
    pool: list[_Worker] = []
    finished = False
    try:
        pool.extend(_Worker(n, answers) for n in range(min(workers, len(items))))
        for worker in pool:  # all started first: each reads its setup once its imports are done
            worker.set_up(setup)
        yield from _run(pool, answers, function, items)
        finished = True
    finally:
        for worker in pool:
            worker.stop(now=not finished)


def _run(pool: list[_Worker], answers: queue.Queue, function: Callable, items: Sequence) -> Iterator:
    done: dict[int, Any] = {}
    sent = turn = 0
    for _ in range(_IN_FLIGHT):
        for worker in pool:
            if sent < len(items):
                worker.give(sent, function, items[sent])
                sent += 1
    while turn < len(items):
        while turn not in done:
            number, message = answers.get()
            worker = pool[number]
            if message is None:
                raise worker.failed()
            index, ok, value = message
            done[index] = (ok, value)
            if sent < len(items):
                worker.give(sent, function, items[sent])
                sent += 1
        ok, value = done.pop(turn)
        if not ok:
            error, remote = value
            if remote and not isinstance(error, ZooError):  # a bug, not bad input: say where it happened
                error.add_note(f"in a worker process:\n{remote}")
            raise error
        yield value
        turn += 1
