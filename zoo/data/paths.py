"""Where real data for benchmarks and long tests lives.

The project never needs this folder to install or to run its main job; tests
that use it skip with a clear reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["shared_data", "require_shared_data"]

ENV = "ZOO_DATA_DIR"


def _root() -> Path | None:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    checkout = Path(__file__).resolve().parents[2]
    candidate = checkout.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def shared_data(*parts: str) -> Path | None:
    """``$ZOO_DATA_DIR/<parts>``, else ``../shared/data/<parts>`` beside the checkout; None if missing."""
    root = _root()
    if root is None:
        return None
    path = root.joinpath(*parts)
    return path if path.exists() else None


def require_shared_data(*parts: str) -> Path:
    """Like `shared_data`, but raise `FileNotFoundError` saying how to provide it."""
    path = shared_data(*parts)
    if path is None:
        raise FileNotFoundError(
            f"{'/'.join(parts)} not found: set {ENV} to the folder holding the shared data "
            "(corpus/, lm/, seq2seq/, ...) or place it at ../shared/data beside the checkout"
        )
    return path
