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
    count = np.full(size, _UNSET, dtype=np.int64)
    count[:n] = counts
    parent = np.full(size, -1, dtype=np.int64)
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    binary = np.zeros(size, dtype=bool)
    leaf, node = n - 1, n
    for i in range(n, size):
        pair = []
        for _ in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                pair.append(leaf)
                leaf -= 1
            else:
                pair.append(node)
                node += 1
        left[i], right[i] = pair
        count[i] = count[pair[0]] + count[pair[1]]
        parent[pair[0]] = parent[pair[1]] = i
        binary[pair[1]] = True
    paths, codes = [], []
    for c in range(n):
        path, code, j = [], [], c
        while parent[j] != -1:
            path.append(parent[j] - n)
            code.append(binary[j])
            j = parent[j]
        paths.append(path)
        codes.append(code)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(p) for p in paths], out=offsets[1:])
    flat_nodes = np.fromiter((x for p in paths for x in p), dtype=np.int64, count=int(offsets[-1]))
    flat_codes = np.fromiter((x for c in codes for x in c), dtype=np.bool_, count=int(offsets[-1]))
    return HuffmanTree(offsets, flat_nodes, flat_codes, left, right)


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
