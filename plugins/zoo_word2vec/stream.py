"""The training corpus as vocabulary ids in a temporary file, read back in jobs.

Tokenising and looking words up once, instead of once per epoch, leaves the
epochs to read int32 ids; keeping them on disk, not in memory, keeps peak
memory independent of the corpus size (it grows with vocabulary × dim). A job
is a run of whole sentences of at most `job_words` ids with -1 after each
sentence (a longer sentence is cut into pieces), the unit one kernel call or
one compiled step trains on.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zoo.plugin_api import CorpusPart, DataError, Vocab, get_tokenizer, iter_ids, ordered_map

__all__ = ["EncodedCorpus", "encode_parts"]

_READ_IDS = 1 << 20
_COPY_BYTES = 1 << 22


class EncodedCorpus:
    """Sentences of vocabulary ids stored as int32 with a -1 after each sentence.

    Build with `EncodedCorpus.write`; iterate `jobs`; `close` (or a ``with``
    block) removes the file.

    - `words`: ids stored (in-vocabulary words, one pass).
    - `sentences`: sentences stored.
    - `streams`: the places `jobs` reads from at once (`with_streams`; 1: file order).
    """

    def __init__(self, path: Path, words: int, sentences: int, *, owned: bool, streams: int = 1) -> None:
        if streams < 1:
            raise DataError(f"streams must be at least 1 (1 reads the corpus in file order), got {streams}")
        self.path, self.words, self.sentences, self._owned = path, words, sentences, owned
        self.streams = streams

    def with_streams(self, streams: int) -> EncodedCorpus:
        """The same file read as `streams` streams (see `jobs`); the view does not own the file."""
        return EncodedCorpus(self.path, self.words, self.sentences, owned=False, streams=streams)

    @classmethod
    def write(cls, sentences: Iterable[np.ndarray], directory: str | os.PathLike | None = None) -> EncodedCorpus:
        """Store `sentences` (int arrays of ids >= 0) in a new temporary file in `directory`."""
        return cls(*_write(sentences, directory), owned=True).checked()

    @classmethod
    def concatenate(cls, pieces: Iterable[EncodedCorpus]) -> EncodedCorpus:
        """One corpus of `pieces` in their order (each written by `write` or by a worker, `encode_parts`):
        the later files are appended to the first and removed, so it holds what one `write` of all
        their sentences would."""
        first: EncodedCorpus | None = None
        try:
            for piece in pieces:
                if first is None:
                    first = piece
                    continue
                with open(first.path, "ab") as out, open(piece.path, "rb") as part:
                    shutil.copyfileobj(part, out, _COPY_BYTES)
                first.words, first.sentences = first.words + piece.words, first.sentences + piece.sentences
                piece.close()
        except BaseException:
            if first is not None:
                first.close()
            raise
        if first is None:
            raise DataError("an encoded corpus needs at least one piece")
        return first.checked()

    def checked(self) -> EncodedCorpus:
        """This corpus, if it holds words to train on (else its file is removed and `DataError` raised)."""
        if self.words == 0:
            self.close()
            raise DataError("the corpus has no in-vocabulary words to train on; check min_count and the tokenizer")
        return self

    def __enter__(self) -> EncodedCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the file (if this object created it)."""
        if self._owned:
            self.path.unlink(missing_ok=True)

    def _blocks(self, start: int, stop: int) -> Iterator[np.ndarray]:
        """The ids ``[start, stop)`` of the file, in blocks."""
        with open(self.path, "rb") as handle:
            handle.seek(4 * start)
            while start < stop:
                block = np.fromfile(handle, dtype=np.int32, count=min(_READ_IDS, stop - start))
                if block.size == 0:
                    return
                start += block.size
                yield block

    def parts(self) -> list[tuple[int, int]]:
        """``[(start, stop)]`` id ranges of the `streams` parts: part k starts after the first
        sentence end at or beyond k/streams of the ids (empty parts left out)."""
        size = self.path.stat().st_size // 4
        starts, k = [0], 1
        while k < self.streams:  # as many steps as parts, not streams (--streams 1000000000 on a small corpus)
            start = self._sentence_start(max(k * size // self.streams, starts[-1]), size)
            if start >= size:
                break
            starts.append(start)
            k = max(k + 1, -(-(start + 1) * self.streams // size))  # the first k whose share begins past `start`
        bounds = [*starts, size]
        return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]

    def _sentence_start(self, at: int, size: int) -> int:
        """The first sentence start at or after id `at` (`size` if none)."""
        if at <= 0:
            return 0
        for block in self._blocks(at - 1, size):
            ends = np.flatnonzero(block < 0)
            if ends.size:
                return at + int(ends[0])
            at += block.size
        return size

    def jobs(self, job_words: int) -> Iterator[np.ndarray]:
        """Yield jobs: whole sentences, at most `job_words` ints each (the -1s included).

        A sentence that alone exceeds a job is cut into pieces. With one stream the
        jobs come in file order; with `streams` = S the corpus is read as fastText's
        S threads read their file, from S places at once: it is cut into S parts of
        about equal size at sentence ends (`parts`) and the jobs take turns, one job
        of each part in order (a part that runs out leaves its turn to the others).
        """
        if job_words < 2:
            raise DataError(f"job_words must be at least 2, got {job_words}")
        readers = [self._part_jobs(job_words, start, stop) for start, stop in self.parts()]
        while readers:
            for reader in list(readers):
                job = next(reader, None)
                if job is None:
                    readers.remove(reader)
                else:
                    yield job

    def _part_jobs(self, job_words: int, start: int, stop: int) -> Iterator[np.ndarray]:
        """The jobs of the ids ``[start, stop)``, which begin a sentence and end one."""
        carry = np.empty(0, dtype=np.int32)
        for block in self._blocks(start, stop):
            data = np.concatenate([carry, block]) if carry.size else block
            consumed = yield from _cut(data, job_words, final=False)
            carry = data[consumed:].copy()
        consumed = yield from _cut(carry, job_words, final=True)
        if consumed != carry.size:
            raise DataError(f"{self.path} ends inside a sentence: the encoded corpus is truncated")


def _write(sentences: Iterable[np.ndarray], directory: str | os.PathLike | None) -> tuple[Path, int, int]:
    """Write `sentences` to a new temporary file in `directory`: ``(path, words, sentences)``."""
    handle, name = tempfile.mkstemp(prefix="zoo-ids-", suffix=".i32", dir=directory)
    words = count = 0
    separator = np.array([-1], dtype=np.int32)
    try:
        with os.fdopen(handle, "wb") as out:
            for ids in sentences:
                ids = np.asarray(ids, dtype=np.int32)
                if ids.size == 0:
                    continue
                if ids.min() < 0:
                    raise DataError("sentence ids must be non-negative vocabulary ids")
                out.write(ids.tobytes())
                out.write(separator.tobytes())
                words += ids.size
                count += 1
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name), words, count


_ENCODER: dict[str, Any] = {}


def _start_encoder(vocab: Vocab, tokenizer: Any, text: dict[str, str], directory: str) -> None:
    """What a worker of `encode_parts` needs for every part: the vocabulary, once."""
    _ENCODER.update(vocab=vocab, tokenizer=get_tokenizer(tokenizer), text=text, directory=directory)


def _encode_part(part: CorpusPart) -> tuple[Path, int, int]:
    e = _ENCODER
    return _write(iter_ids(part, e["vocab"], e["tokenizer"], **e["text"]), e["directory"])


def encode_parts(
    parts: Sequence[CorpusPart],
    vocab: Vocab,
    tokenizer: Any = None,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
    workers: int = 1,
) -> EncodedCorpus:
    """Tokenise and look up the corpus `parts` (`zoo.plugin_api.split_corpus`) into one `EncodedCorpus`.

    With `workers` > 1 each worker process writes its parts' ids to a file of its own and the
    files are joined in part order (`EncodedCorpus.concatenate`): the ids are those one process
    writes, byte for byte. The files are decoded with `encoding` and `errors`.
    """
    text = {"encoding": encoding, "errors": errors}
    if workers <= 1:
        return EncodedCorpus.write(ids for part in parts for ids in iter_ids(part, vocab, tokenizer, **text))
    with tempfile.TemporaryDirectory(prefix="zoo-ids-") as folder:  # removed with every piece, whatever happens
        found = ordered_map(_encode_part, parts, workers=workers, initializer=_start_encoder,
                            initargs=(vocab, tokenizer, text, folder))  # fmt: skip
        with contextlib.closing(found):
            joined = EncodedCorpus.concatenate([EncodedCorpus(*piece, owned=True) for piece in found])
        handle, name = tempfile.mkstemp(prefix="zoo-ids-", suffix=".i32")
        os.close(handle)
        os.replace(joined.path, name)
    return EncodedCorpus(Path(name), joined.words, joined.sentences, owned=True)


def _cut(data: np.ndarray, job_words: int, *, final: bool):
    """Yield the jobs of `data`; return how many ints were used (the rest waits for the next block)."""
    ends = np.flatnonzero(data < 0)
    start = 0
    while start < data.size:
        last = int(np.searchsorted(ends, start + job_words - 1, side="right")) - 1
        if last < 0 or ends[last] < start:  # no whole sentence fits in a job from here
            first = int(np.searchsorted(ends, start))
            if first == len(ends):
                break  # the sentence continues in the next block
            yield from _pieces(data[start : ends[first] + 1], job_words - 1)
            start = int(ends[first]) + 1
            continue
        if not final and last == len(ends) - 1 and start + job_words > data.size:
            break  # more sentences may fit once the next block is read
        yield data[start : ends[last] + 1]
        start = int(ends[last]) + 1
    return start


def _pieces(sentence: np.ndarray, size: int) -> Iterator[np.ndarray]:
    """Cut `sentence` (ending in -1) into pieces of at most `size` ids, each ending in -1."""
    ids = sentence[:-1]
    for start in range(0, ids.size, size):
        yield np.append(ids[start : start + size], np.int32(-1))
