"""Word Mover's Distance: the least total distance that moves one document's words onto another's.

Each document is a bag of words with weights summing to one (a word's share of the
document's tokens); moving mass from word i to word j costs the Euclidean distance
of their vectors. The optimal transport problem is solved exactly by POT's network
simplex (`ot.emd2`), an optional dependency: ``pip install 'zoo[wmd]'``.

??? cite

    Kusner, Sun, Kolkin & Weinberger 2015, From Word Embeddings To Document
    Distances (ICML). Flamary et al. 2021, POT: Python Optimal Transport (JMLR).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

__all__ = ["word_movers_distance"]

MISSING_POT = (
    "Word Mover's Distance needs the POT package (Python Optimal Transport), which zoo installs "
    "only on request: pip install 'zoo[wmd]'"
)


def _emd2():
    try:
        from ot import emd2
    except ImportError as error:
        raise ImportError(MISSING_POT) from error
    return emd2


def word_movers_distance(
    first: np.ndarray, first_weights: np.ndarray, second: np.ndarray, second_weights: np.ndarray
) -> float:
    """The optimal transport cost between two weighted sets of vectors.

    **Arguments:**

    - `first`: ``[n, D]`` the vectors of the first document's distinct words.
    - `first_weights`: ``[n]`` their shares of the document (summing to 1).
    - `second`, `second_weights`: ``[m, D]`` and ``[m]``, the same for the second document.

    **Returns:** ``sum_ij T_ij |first_i - second_j|`` for the cheapest plan ``T`` whose rows
    sum to `first_weights` and columns to `second_weights` (float64 arithmetic).

    Raises `ImportError` naming the ``wmd`` extra when POT is not installed.
    """
    emd2 = _emd2()
    cost = cdist(np.asarray(first, np.float64), np.asarray(second, np.float64))
    a = np.asarray(first_weights, np.float64)
    b = np.asarray(second_weights, np.float64)
    return float(emd2(a, b, cost))
