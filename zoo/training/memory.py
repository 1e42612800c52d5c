"""Keep freed memory in the process, so XLA:CPU's per-call buffers stop page-faulting.

XLA:CPU allocates the temporary buffers of a compiled computation (one block, tens
of megabytes for a training step) at every call and frees them when it returns.
glibc's malloc serves a block that large with a fresh ``mmap`` and gives it back
with ``munmap``, so each step takes a page fault for every 4 KiB of its working
set and the kernel zeroes it again: a seq2seq training step (batch 64, hidden
256) spends a fifth of its time so. Telling malloc never to map a block on its
own (``M_MMAP_MAX = 0``), never to trim its heap (``M_TRIM_THRESHOLD``) and to
keep a pad larger than a whole thread heap (``M_TOP_PAD``) keeps a freed block for
the next call. The pad matters for XLA's worker threads: their arenas grow by extra
heaps of up to 64 MiB, and glibc unmaps an emptied extra heap whatever the trim
threshold unless the pad it must keep exceeds a heap; without it a seq2seq training
step took ~15,000 page faults in some runs (and ran ~20% slower) and none in others.

`zoo.train` calls `keep_freed_memory` (when `zoo.training.trainer.make_step` builds its
step); set ``ZOO_KEEP_FREED_MEMORY=0`` to leave malloc alone. The price is that the process holds its peak memory until
it exits. Only glibc (Linux) has ``mallopt``; elsewhere this does nothing. A block
over 64 MiB requested by one of XLA's worker threads is still mapped per call
(glibc's per-thread heaps stop at 64 MiB); there ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``
in the environment of the process (it is read at start-up) makes those mappings
fault in 2 MiB pages instead.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

__all__ = ["keep_freed_memory"]

# mallopt parameters from glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_TOP_PAD = -2
_NEVER_TRIM = 2**31 - 1  # mallopt takes an int: the largest threshold it can express
# More than glibc's largest thread heap (64 MiB on 64-bit): heap_trim deletes a
# thread arena's emptied heap unless the pad it must keep exceeds a whole heap.
_KEEP_HEAPS_PAD = 128 << 20


@functools.cache
def keep_freed_memory() -> bool:
    """Make glibc's malloc reuse freed blocks instead of unmapping them; True if it now does.

    Process-wide, and done once: later calls return the first call's answer. Does
    nothing (returns False) off glibc or when the environment sets
    ``ZOO_KEEP_FREED_MEMORY=0``.
    """
    if os.environ.get("ZOO_KEEP_FREED_MEMORY", "1") == "0" or platform.libc_ver()[0] != "glibc":
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    settings = ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _NEVER_TRIM), (_M_TOP_PAD, _KEEP_HEAPS_PAD))
    return all([bool(mallopt(param, value)) for param, value in settings])
