"""Generated sequence-to-sequence tasks for demos and tests.

Each task returns source and target token lists; `Vocab` builds their
vocabularies. Generation is deterministic for a seed.
"""

from __future__ import annotations

import numpy as np

from zoo.data.vocab import Vocab

__all__ = ["digit_vocab", "reversal_pairs"]

DIGITS = [str(d) for d in range(10)]


def digit_vocab() -> Vocab:
    """``<pad> <unk> <s> </s> 0 1 ... 9``: the vocabulary of the digit tasks."""
    return Vocab.build({d: 1 for d in DIGITS})


def reversal_pairs(
    count: int, *, min_length: int = 3, max_length: int = 10, seed: int = 0
) -> tuple[list[list[str]], list[list[str]]]:
    """`count` random digit sequences (lengths uniform in [min, max]) and their reversals."""
    rng = np.random.default_rng(seed)
    sources, targets = [], []
    for _ in range(count):
        length = int(rng.integers(min_length, max_length + 1))
        digits = [DIGITS[d] for d in rng.integers(0, 10, size=length)]
        sources.append(digits)
        targets.append(digits[::-1])
    return sources, targets
