"""``hf://OWNER/REPO[@REVISION]/PATH``: a file already in the Hugging Face hub's local cache.

zoo never downloads: it reads the cache that ``huggingface_hub`` (``hf download
OWNER/REPO PATH``, ``huggingface-cli download``) fills, in that package's
layout::

    HUB/models--OWNER--REPO/refs/REVISION          the commit a branch or tag points to
    HUB/models--OWNER--REPO/snapshots/COMMIT/PATH  the file (a link into blobs/)

``HUB`` is ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``. `REVISION` defaults to ``main``; a 40-digit commit
is used as it is. Owner, repository, revision and every part of `PATH` are
checked (no ``..``, no absolute path), and the file found must lie inside that
repository's cache folder. The file is then read as any other: `zoo.load`
checks it whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from zoo.data.inputs import read_small
from zoo.errors import DataError, NameSyntaxError, WeightsError

__all__ = ["PREFIX", "canonical", "hub_cache", "hub_file", "is_address"]

PREFIX = "hf://"
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REF_BYTES = 4096


def hub_cache(environ: Mapping[str, str] | None = None) -> Path:
    """The hub cache directory, as ``huggingface_hub`` chooses it."""
    environ = os.environ if environ is None else environ
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"]).expanduser()
    home = Path(environ["HF_HOME"]).expanduser() if environ.get("HF_HOME") else Path.home() / ".cache" / "huggingface"
    return home / "hub"


def is_address(text: str) -> bool:
    """Whether `text` is an ``hf://`` address (also as `pathlib.Path` spells it: ``hf:/...``)."""
    return text.startswith("hf:/")


def canonical(text: str) -> str:
    """`text` as ``hf://...`` (`pathlib.Path` turns the ``//`` into ``/``)."""
    return PREFIX + text[len("hf:/") :].lstrip("/")


def _parse(address: str) -> tuple[str, str, str, list[str]]:
    parts = address[len(PREFIX) :].split("/")
    if len(parts) < 3:
        raise NameSyntaxError(f"{address!r}: expected hf://OWNER/REPO[@REVISION]/PATH")
    owner, repo, path = parts[0], parts[1], parts[2:]
    repo, _, revision = repo.partition("@")
    revision = revision or "main"
    for what, part in [("owner", owner), ("repository", repo), ("revision", revision)] + [
        ("path part", p) for p in path
    ]:
        if not _PART.fullmatch(part) or part.strip(".") == "":
            raise NameSyntaxError(
                f"{address!r}: bad {what} {part!r} (letters, digits, '.', '-', '_'; no '..', no empty part)"
            )
    return owner, repo, revision, path


def hub_file(address: str, environ: Mapping[str, str] | None = None) -> Path:
    """The cached file an ``hf://`` `address` names; `WeightsError` saying how to get it if it is not cached."""
    address = canonical(address)
    owner, repo, revision, path = _parse(address)
    folder = hub_cache(environ) / f"models--{owner}--{repo}"
    commit = revision
    if not _COMMIT.fullmatch(revision):
        ref = folder / "refs" / revision
        try:  # a ref holds 40 hex digits: a larger file, a FIFO or a device is refused, never read whole
            commit = read_small(ref, "hub cache ref", limit=_REF_BYTES).decode("ascii").strip() if ref.exists() else ""
        except UnicodeDecodeError:
            commit = ""
        except DataError as error:
            raise WeightsError(f"{address}: {error}") from None
        if not _COMMIT.fullmatch(commit):
            raise WeightsError(_not_cached(address, owner, repo, revision, path, folder))
    file = folder / "snapshots" / commit / Path(*path)
    if not file.is_file():
        raise WeightsError(_not_cached(address, owner, repo, revision, path, folder))
    if not file.resolve().is_relative_to(folder.resolve()):
        raise WeightsError(f"{address}: the cached file leads outside its repository's cache folder ({folder})")
    return file


def _not_cached(address: str, owner: str, repo: str, revision: str, path: list[str], folder: Path) -> str:
    where = f" --revision {revision}" if revision != "main" else ""
    return (
        f"{address} is not in the Hugging Face cache ({folder}); zoo never downloads: fetch it with "
        f"`hf download {owner}/{repo} {'/'.join(path)}{where}`, then try again"
    )
