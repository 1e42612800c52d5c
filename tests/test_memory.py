"""keep_freed_memory: a freed large block is reused without page faults (glibc only)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")

# Allocate, touch and free a 48 MiB block twice, the way XLA:CPU's per-call buffers
# come and go; report the page faults taken while touching the second one.
_PROBE = """
import ctypes, json, resource, sys
from zoo.memory import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "keep" else False
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
size = 48 << 20
def touch():
    block = libc.malloc(size)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    ctypes.memset(block, 1, size)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    libc.free(block)
    return faults
touch()
print(json.dumps({"applied": applied, "faults": touch()}))
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


def test_a_freed_block_is_reused_without_page_faults():
    pages = (48 << 20) // os.sysconf("SC_PAGE_SIZE")
    default = _second_touch("default")
    kept = _second_touch("keep")
    if not _huge_pages_always():  # otherwise the kernel faults in 2 MiB at a time anyway
        assert default["faults"] > pages // 2  # glibc maps a block this large afresh each time
    assert kept["applied"] and kept["faults"] < pages // 20


def test_the_environment_can_opt_out():
    result = _second_touch("keep", ZOO_KEEP_FREED_MEMORY="0")
    assert not result["applied"]
    if not _huge_pages_always():
        assert result["faults"] > (48 << 20) // os.sysconf("SC_PAGE_SIZE") // 2  # malloc left as it was
