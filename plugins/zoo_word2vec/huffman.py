"""The Huffman tree of hierarchical softmax (Morin & Bengio 2005), built as fastText and word2vec.c build it.

The family's one tree: fastText's classifier builds it over its labels, skip-gram, CBOW and
FastText with ``hs`` over their words (`word_paths`, word2vec.c's ``CreateBinaryTree``, the
same construction). fastText's ``HierarchicalSoftmaxLoss::buildTree`` takes the counts of the ``n`` labels in
their order (most frequent first) as leaves ``0 .. n-1`` and makes the internal nodes
``n .. 2n-2`` in order: each joins the two least counted of the leaves not yet joined
(taken from the least frequent end) and the nodes made so far, a leaf winning only when
its count is strictly smaller; the first taken becomes the left child, the second the
right. Node ``n + i``'s decision is output row ``i``; a label's path runs from its leaf up
to the root ``2n - 2``, and its code is 1 where the path comes from a right child. The
probability of a label is the product along its path of ``sigmoid(row . hidden)`` (right)
or ``1 - sigmoid(row . hidden)`` (left).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["HuffmanTree", "huffman_tree", "word_paths"]

_UNSET = 10**15  # fastText's count of a node not yet made


class HuffmanTree(NamedTuple):
    """Each label's path, leaf to root, as CSR: label c's nodes (output rows) are
    ``nodes[offsets[c]:offsets[c + 1]]`` and their codes (True: the path comes from the right
    child) ``codes[...]``; `left` and `right` ``[2n - 1]`` give each node's children (-1 at leaves)."""

    offsets: np.ndarray
    nodes: np.ndarray
    codes: np.ndarray
    left: np.ndarray
    right: np.ndarray

    @property
    def depth(self) -> int:
        """The longest path."""
        return int(np.diff(self.offsets).max(initial=0))


def huffman_tree(counts: np.ndarray) -> HuffmanTree:
    """fastText's tree over `counts` ``[n]`` (the labels' counts in the model's label order)."""
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.size
    size = max(2 * n - 1, 0)
    parent, left, right, binary = _merge(counts.tolist(), size)
    offsets, nodes, codes = _leaf_paths(parent, binary, n)
    return HuffmanTree(offsets, nodes, codes, left, right)


def _merge(counts: list[int], size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tree's merges over the `n` leaf `counts` (most counted first): each node's
    ``(parent, left, right, binary)`` ``[size = 2n - 1]`` (-1 where none; `binary`: it is its
    parent's right child). Plain lists: the loop is sequential, and list items are cheap to reach."""
    n = len(counts)
    count = counts + [_UNSET] * (size - n)
    parent, left, right, binary = [-1] * size, [-1] * size, [-1] * size, [False] * size
    leaf, node = n - 1, n
    for i in range(n, size):
        if leaf >= 0 and count[leaf] < count[node]:
            first, leaf = leaf, leaf - 1
        else:
            first, node = node, node + 1
        if leaf >= 0 and count[leaf] < count[node]:
            second, leaf = leaf, leaf - 1
        else:
            second, node = node, node + 1
        left[i], right[i] = first, second
        count[i] = count[first] + count[second]
        parent[first] = parent[second] = i
        binary[second] = True
    as_int = lambda values: np.array(values, dtype=np.int64)
    return as_int(parent), as_int(left), as_int(right), np.array(binary, dtype=bool)


def _leaf_paths(parent: np.ndarray, binary: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each leaf's path up to the root as CSR ``(offsets [n + 1], nodes, codes)``: the inner
    nodes (numbered from 0, node ``n + i`` as ``i``) and whether the path comes from their right
    child, leaf first. One level at a time for every leaf at once."""
    steps, codes = [], []
    at = np.arange(n)
    while True:
        up = parent[at] if at.size else at
        if not np.any(up >= 0):
            break
        steps.append(up)
        codes.append(binary[at] & (up >= 0))
        at = np.where(up >= 0, up, at)
    if not steps:
        return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    up, code = np.stack(steps, axis=1), np.stack(codes, axis=1)  # [n, depth], -1 past a path's end
    real = up >= 0
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(real.sum(axis=1), out=offsets[1:])
    return offsets, up[real] - n, code[real]


def word_paths(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each word's path in the tree over its corpus `counts` ``[V]``, padded: ``(nodes [V, depth] int32,
    codes [V, depth] int32)``, leaf to root; `nodes` holds the inner node (its output row, ``0 .. V-2``)
    and -1 past the path's end, `codes` 1 where the path comes from the right child (the label the
    node's sigmoid is trained towards, as fastText's hs loss), 0 elsewhere.

    The words are the leaves in order of decreasing count, ties in vocabulary order (a vocabulary
    sorted most frequent first, as zoo builds them, keeps its order; one grown by an update is
    sorted here), so the same counts always give the same tree. One word alone has an empty path.
    """
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    tree = huffman_tree(counts[order])
    lengths = np.diff(tree.offsets)
    depth = max(int(lengths.max(initial=0)), 1)
    nodes = np.full((counts.size, depth), -1, dtype=np.int32)
    codes = np.zeros((counts.size, depth), dtype=np.int32)
    slot = np.arange(depth)[None, :] < lengths[:, None]
    nodes[order[:, None].repeat(depth, 1)[slot], np.nonzero(slot)[1]] = tree.nodes
    codes[order[:, None].repeat(depth, 1)[slot], np.nonzero(slot)[1]] = tree.codes
    return nodes, codes
