"""Corpus BLEU (Papineni et al. 2002) over token lists.

``BLEU = BP * exp(mean_n log p_n)`` with clipped n-gram precisions ``p_n``
(n = 1..4) summed over the corpus (geometric mean), and brevity penalty
``BP = min(1, exp(1 - r / c))`` for total hypothesis length c and total
closest-reference length r. Matches sacreBLEU on the same tokens
(``tokenize="none"``); use sacreBLEU itself for scores comparable to papers.

??? cite
    Papineni, Roukos, Ward, Zhu. BLEU: a Method for Automatic Evaluation of
    Machine Translation. ACL 2002.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from zoo.errors import DataError

__all__ = ["BleuResult", "corpus_bleu"]


class BleuResult(NamedTuple):
    """`score` in [0, 100], the n-gram `precisions` (percent), `brevity_penalty`,
    and the total `hypothesis_length` and `reference_length`."""

    score: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(
    hypotheses: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]] | Sequence[Sequence[Sequence[str]]],
    *,
    max_order: int = 4,
    smooth: bool = True,
) -> BleuResult:
    """BLEU of tokenised `hypotheses` against one reference each (token lists)
    or several (lists of token lists). With `smooth` (sacreBLEU's default
    "exp" method) an order without any match counts as 1/2, 1/4, ... of a
    match; without it such a corpus scores 0."""
    if len(hypotheses) != len(references):
        raise DataError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    matches, totals = [0] * max_order, [0] * max_order
    hyp_len = ref_len = 0
    for hyp, refs in zip(hypotheses, references, strict=True):
        if refs and isinstance(refs[0], str):
            refs = [refs]
        if not refs:
            raise DataError("every hypothesis needs at least one reference")
        hyp_len += len(hyp)
        ref_len += min((abs(len(r) - len(hyp)), len(r)) for r in refs)[1]
        for n in range(1, max_order + 1):
            counts = _ngrams(hyp, n)
            best: Counter = Counter()
            for ref in refs:
                best |= _ngrams(ref, n)
            matches[n - 1] += sum(min(c, best[g]) for g, c in counts.items())
            totals[n - 1] += max(len(hyp) - n + 1, 0)
    bp = 1.0 if hyp_len > ref_len else (math.exp(1.0 - ref_len / hyp_len) if hyp_len else 0.0)
    precisions, doubling = [], 1.0
    for m, t in zip(matches, totals, strict=True):
        if m == 0 and smooth and t:
            doubling *= 2.0  # sacreBLEU's "exp" smoothing: 1/2, 1/4, ... of a match
            precisions.append(100.0 / (doubling * t))
        else:
            precisions.append(100.0 * m / t if t else 0.0)
    if min(precisions) == 0.0:
        return BleuResult(0.0, tuple(precisions), bp, hyp_len, ref_len)
    log_mean = sum(math.log(p / 100.0) for p in precisions) / max_order
    return BleuResult(100.0 * bp * math.exp(log_mean), tuple(precisions), bp, hyp_len, ref_len)
