"""keep_freed_memory: a freed large block is reused without page faults (glibc only)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")

# Allocate, touch and free a block twice, the way XLA:CPU's per-call buffers come
# and go; report the page faults taken while touching the second one. In the main
# thread the block is 48 MiB (glibc maps it on its own); in a worker thread a 40 MiB
# block beside another 40 MiB one (it needs an extra heap of the thread's arena,
# which glibc deletes when the block is freed).
_PROBE = """
import ctypes, json, resource, sys, threading
from zoo.training.memory import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "keep" else False
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def touch(size, beside):
    held = libc.malloc(beside) if beside else None
    block = libc.malloc(size)
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    ctypes.memset(block, 1, size)
    faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before
    libc.free(block)
    libc.free(held)
    return faults
def second(size, beside, out):
    touch(size, beside)
    out.append(touch(size, beside))
main, worker = [], []
second(48 << 20, 0, main)
thread = threading.Thread(target=second, args=(40 << 20, 40 << 20, worker))
thread.start()
thread.join()
print(json.dumps({"applied": applied, "main": main[0], "worker": worker[0]}))
"""


def _huge_pages_always() -> bool:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[always]" in f.read()
    except OSError:
        return False


def _second_touch(mode: str, **env: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _pages(mib: int) -> int:
    return (mib << 20) // os.sysconf("SC_PAGE_SIZE")


def test_a_freed_block_is_reused_without_page_faults():
    default = _second_touch("default")
    kept = _second_touch("keep")
    if not _huge_pages_always():  # otherwise the kernel faults in 2 MiB at a time anyway
        assert default["main"] > _pages(48) // 2  # glibc maps a block this large afresh each time
        assert default["worker"] > _pages(40) // 2  # and deletes the thread's extra heap
    assert kept["applied"]
    assert kept["main"] < _pages(48) // 20 and kept["worker"] < _pages(40) // 20


def test_the_environment_can_opt_out():
    result = _second_touch("keep", ZOO_KEEP_FREED_MEMORY="0")
    assert not result["applied"]
    if not _huge_pages_always():
        assert result["main"] > _pages(48) // 2  # malloc left as it was
