"""Vocabularies: token <-> id, with counts and reserved ids; saved as tensors."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from zoo.errors import DataError

__all__ = ["SPECIALS", "Vocab", "Vocabularies"]

SPECIALS = {"pad": "<pad>", "unk": "<unk>", "bos": "<s>", "eos": "</s>"}


class Vocab:
    """An immutable vocabulary.

    Reserved tokens come first, in the order given by `specials` (a role ->
    token mapping, e.g. ``{"pad": "<pad>", "unk": "<unk>"}``), then the rest.
    Hashing and equality use a content fingerprint, so a `Vocab` can be a static
    field of a module without slowing `jit`.

    **Arguments:**

    - `tokens`: every token, reserved ones included, in id order.
    - `counts`: corpus frequency per id (0 for reserved), or None.
    - `specials`: role -> token; every token must be in `tokens`.
    """

    def __init__(
        self,
        tokens: Sequence[str],
        counts: Sequence[int] | np.ndarray | None = None,
        specials: Mapping[str, str] | None = None,
    ) -> None:
        self.tokens: tuple[str, ...] = tuple(tokens)
        self.index: dict[str, int] = {t: i for i, t in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            dupes = [t for t, n in Counter(self.tokens).items() if n > 1][:5]
            raise DataError(f"a vocabulary cannot hold a token twice; repeated: {dupes}")
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        if self.counts is not None and self.counts.shape != (len(self.tokens),):
            raise DataError(f"counts has shape {self.counts.shape}, expected ({len(self.tokens)},)")
        self.specials: dict[str, str] = dict(specials or {})
        for role, token in self.specials.items():
            if token not in self.index:
                raise DataError(f"special {role}={token!r} is not among the tokens")
        digest = hashlib.sha256("\0".join(self.tokens).encode())
        digest.update(json.dumps(self.specials, sort_keys=True).encode())
        self.fingerprint = digest.hexdigest()

    @classmethod
    def build(
        cls,
        counts: Mapping[str, int] | Iterable[Iterable[str]],
        *,
        min_count: int = 1,
        max_size: int | None = None,
        specials: Mapping[str, str] | Sequence[str] = ("pad", "unk", "bos", "eos"),
    ) -> Vocab:
        """Build from token counts (or from an iterable of token sequences).

        Tokens are kept when seen at least `min_count` times, most frequent
        first (ties by first appearance), at most `max_size` besides the reserved ones.
        `specials` lists roles from `SPECIALS` or maps roles to custom tokens.
        """
        if not isinstance(counts, Mapping):
            counter: Counter[str] = Counter()
            for sequence in counts:
                counter.update(sequence)
            counts = counter
        if not isinstance(specials, Mapping):
            unknown = [r for r in specials if r not in SPECIALS]
            if unknown:
                raise DataError(f"unknown special roles {unknown}; known: {sorted(SPECIALS)}")
            specials = {role: SPECIALS[role] for role in specials}
        reserved = list(specials.values())
        kept = [(t, c) for t, c in counts.items() if c >= min_count and t not in specials.values()]
        kept.sort(key=lambda tc: -tc[1])  # stable: ties keep insertion order
        if max_size is not None:
            kept = kept[:max_size]
        tokens = reserved + [t for t, _ in kept]
        return cls(tokens, [0] * len(reserved) + [c for _, c in kept], specials)

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tokens)

    def __contains__(self, token: object) -> bool:
        return token in self.index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, specials={self.specials})"

    def special_id(self, role: str) -> int:
        if role not in self.specials:
            raise DataError(f"this vocabulary has no {role!r} token; it has {sorted(self.specials)}")
        return self.index[self.specials[role]]

    @property
    def pad_id(self) -> int:
        return self.special_id("pad")

    @property
    def unk_id(self) -> int:
        return self.special_id("unk")

    @property
    def bos_id(self) -> int:
        return self.special_id("bos")

    @property
    def eos_id(self) -> int:
        return self.special_id("eos")

    def id(self, token: str) -> int:
        """The id of `token`; unknown tokens map to ``unk`` (KeyError if there is none)."""
        found = self.index.get(token)
        if found is not None:
            return found
        if "unk" in self.specials:
            return self.index[self.specials["unk"]]
        raise KeyError(f"{token!r} is not in the vocabulary (and it has no unk token)")

    def encode(self, tokens: Iterable[str], *, bos: bool = False, eos: bool = False) -> np.ndarray:
        """Token ids as an int32 array, optionally wrapped in bos/eos."""
        ids = [self.id(t) for t in tokens]
        if bos:
            ids.insert(0, self.bos_id)
        if eos:
            ids.append(self.eos_id)
        return np.asarray(ids, dtype=np.int32)

    def decode(self, ids: Iterable[int], *, strip: bool = True) -> list[str]:
        """Tokens of `ids`; with `strip`, stop at eos and drop pad/bos."""
        out = []
        eos = self.index.get(self.specials.get("eos", ""), -1)
        skip = {self.index[self.specials[r]] for r in ("pad", "bos") if r in self.specials}
        for i in ids:
            i = int(i)
            if strip and i == eos:
                break
            if strip and i in skip:
                continue
            out.append(self.tokens[i])
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """``bytes`` (uint8, utf-8 of all tokens), ``offsets`` (int64, len+1), ``counts``."""
        encoded = [t.encode("utf-8") for t in self.tokens]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(b) for b in encoded])
        arrays = {
            "bytes": np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
            "offsets": offsets,
        }
        if self.counts is not None:
            arrays["counts"] = self.counts
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], specials: Mapping[str, str]) -> Vocab:
        """The vocabulary `to_arrays` wrote; `DataError` naming what is inconsistent otherwise."""
        unknown = sorted(set(arrays) - {"bytes", "offsets", "counts"})
        if unknown or "bytes" not in arrays or "offsets" not in arrays:
            raise DataError(
                f"vocabulary tensors must be 'bytes', 'offsets' and optionally 'counts', got {sorted(arrays)}"
            )
        raw, offsets = np.asarray(arrays["bytes"]), np.asarray(arrays["offsets"])
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise DataError(f"vocabulary bytes must be a 1-d uint8 tensor, got {raw.dtype} of shape {raw.shape}")
        if offsets.dtype.kind not in "iu" or offsets.ndim != 1 or offsets.size == 0:
            raise DataError(
                f"vocabulary offsets must be a non-empty 1-d integer tensor, got {offsets.dtype} {offsets.shape}"
            )
        data = raw.tobytes()
        if offsets[0] != 0 or offsets[-1] != len(data) or np.any(np.diff(offsets.astype(np.int64)) < 0):
            raise DataError("vocabulary offsets are inconsistent with its bytes")
        counts = arrays.get("counts")
        if counts is not None and (
            np.asarray(counts).dtype.kind not in "iu" or np.shape(counts) != (offsets.size - 1,)
        ):
            raise DataError(f"vocabulary counts must be {offsets.size - 1} integers, got {np.shape(counts)}")
        if not isinstance(specials, Mapping) or not all(isinstance(v, str) for v in [*specials, *specials.values()]):
            raise DataError(f"vocabulary specials must map role names to tokens, got {specials!r:.80}")
        try:
            tokens = [data[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        except UnicodeDecodeError as error:
            raise DataError(f"a vocabulary token is not valid UTF-8: {error}") from None
        return cls(tokens, counts, specials)


class Vocabularies(Mapping[str, Vocab]):
    """An immutable role -> `Vocab` mapping, hashable (a static module field)."""

    def __init__(self, vocabs: Mapping[str, Vocab] | None = None) -> None:
        self._data = dict(sorted((vocabs or {}).items()))
        for role, vocab in self._data.items():
            if not isinstance(vocab, Vocab):
                raise DataError(f"vocabulary {role!r} must be a zoo Vocab, got {type(vocab).__name__}")

    def __getitem__(self, role: str) -> Vocab:
        if role not in self._data:
            raise KeyError(f"no {role!r} vocabulary; this model has {sorted(self._data)}")
        return self._data[role]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple((k, v.fingerprint) for k, v in self._data.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabularies) and hash(self) == hash(other) and self._data == other._data

    def __repr__(self) -> str:
        return f"Vocabularies({self._data})"
