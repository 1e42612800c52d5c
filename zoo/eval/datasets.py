"""The evaluation sets shipped inside zoo (see ``zoo/eval/data/README.md``), by name."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from zoo.errors import DataError, close_matches

__all__ = ["DATASETS", "dataset_path"]

DATASETS: dict[str, str] = {
    "google": "questions-words.txt",
    "questions-words": "questions-words.txt",
    "wordsim353": "wordsim353.tsv",
    "ws353": "wordsim353.tsv",
    "simlex999": "simlex999.txt",
    "simlex": "simlex999.txt",
}
"""Short names of the shipped sets (aliases included) -> file name."""


def dataset_path(name_or_path: str | os.PathLike) -> Path:
    """A shipped set by name (``"google"``, ``"wordsim353"``, ``"simlex999"``), or a file path.

    Raises `DataError` when it is neither a known name nor an existing file.
    """
    if isinstance(name_or_path, str) and name_or_path.lower() in DATASETS:
        return Path(str(resources.files("zoo.eval") / "data" / DATASETS[name_or_path.lower()]))
    path = Path(name_or_path)
    if path.is_file():
        return path
    raise DataError(
        f"{str(name_or_path)!r} is neither a file nor a shipped evaluation set; shipped sets: "
        f"{sorted(set(DATASETS))}.{close_matches(str(name_or_path), DATASETS)}"
    )
