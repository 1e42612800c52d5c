"""A third party's word-vector format and subword model, plugged in the way fastText's are."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zoo.cli.main import main
from zoo.errors import DataError, PluginConflictError, RegistryError, WeightsError
from zoo.naming.tables import read_tables
from zoo.plugin_api import KeyedVectors, SubwordModel, VectorFormat
from zoo.vectors import extensions
from zoo.vectors.zoo_file import read_vectors, write_vectors

MAGIC = b"CHARVEC1\n"

TABLES = """
[formats.charvec]
codec = "test_vector_extensions:CharVecFormat"
summary = "a toy format: a magic line, then 'word v1 ... vD' lines"
title = "charvec text"
magic = ["4348415256454331"]
writable = true

[subwords.chars]
codec = "test_vector_extensions:CharSubwords"
title = "character means"

[exports.CharVectors]
module = "zoo.vectors"
target = "test_vector_extensions:CharVectors"
"""


class CharMeans:
    """A word outside the vocabulary is the mean of its characters' vectors."""

    def __init__(self, chars: str, matrix: np.ndarray) -> None:
        self.chars, self.matrix = chars, np.asarray(matrix, np.float32)

    def __call__(self, word: str) -> np.ndarray:
        rows = [self.chars.index(c) for c in word if c in self.chars]
        return self.matrix[rows].mean(0) if rows else np.zeros(self.matrix.shape[1], np.float32)


class CharVectors(KeyedVectors):
    """The vectors this plugin's subword model gives."""

    def characters(self) -> str:
        return self.oov.chars


class CharVecFormat(VectorFormat):
    def read(self, path: Path, *, limit=None, encoding="utf-8", unicode_errors="strict") -> KeyedVectors:
        lines = path.read_bytes()[len(MAGIC) :].decode(encoding, unicode_errors).splitlines()[:limit]
        words = [line.split()[0] for line in lines]
        vectors = np.array([[float(x) for x in line.split()[1:]] for line in lines], np.float32)
        chars = "".join(sorted(set("".join(words))))
        oov = CharMeans(chars, np.stack([vectors[[c in w for w in words]].mean(0) for c in chars]))
        return CharVectors(words, vectors, oov=oov)

    def write(self, keyed: KeyedVectors, path: Path) -> Path:
        rows = "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in zip(keyed.index_to_key, keyed.vectors, strict=True))
        path.write_bytes(MAGIC + rows.encode())
        return path


class CharSubwords(SubwordModel):
    def owns(self, oov: Any) -> bool:
        return isinstance(oov, CharMeans)

    def keyed_class(self) -> type[KeyedVectors]:
        return CharVectors

    def pack(self, oov: CharMeans) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"chars": oov.chars}, {"matrix": oov.matrix}

    def unpack(self, settings: Mapping[str, Any], tensors: Mapping[str, np.ndarray], dim: int) -> CharMeans:
        if set(tensors) != {"matrix"} or tensors["matrix"].shape != (len(settings["chars"]), dim):
            raise DataError("a character model holds one matrix, a row per character")
        return CharMeans(settings["chars"], tensors["matrix"])


@pytest.fixture
def plugged(with_tables):
    return with_tables(TABLES, "charvec")


@pytest.fixture
def charvec(tmp_path):
    path = tmp_path / "toy.vec"
    path.write_bytes(MAGIC + b"cab 1 0\nbad 0 1\nabc 1 1\n")
    return path


def test_a_plugin_format_is_detected_by_its_magic_and_read_by_its_codec(plugged, charvec):
    kv = KeyedVectors.load(charvec)
    assert type(kv) is CharVectors and kv.index_to_key == ["cab", "bad", "abc"]
    assert kv.characters() == "abcd"
    np.testing.assert_allclose(kv["dab"], np.mean([kv.oov.matrix[i] for i in (3, 0, 1)], axis=0))
    assert extensions.sniff(charvec).name == "charvec"
    with pytest.raises(DataError, match=r"a toy format.* \(format 'charvec', read by plugin 'charvec'\): read it with"):
        KeyedVectors.load_word2vec_format(charvec)  # named, not read as a broken word2vec file


def test_its_subword_model_survives_a_zoo_vectors_file(plugged, charvec, tmp_path):
    kv = KeyedVectors.load(charvec)
    path = write_vectors(kv, tmp_path / "toy.safetensors")
    back = KeyedVectors.load(path)
    assert type(back) is CharVectors
    np.testing.assert_array_equal(back["dab"], kv["dab"])
    assert json.loads(read_vectors_metadata(path)["zoo.vectors"])["subwords"] == "chars"


def read_vectors_metadata(path: Path) -> dict[str, str]:
    from safetensors import safe_open

    with safe_open(str(path), "np") as handle:
        return dict(handle.metadata())


def test_a_file_naming_a_subword_model_no_plugin_provides_is_refused(plugged, charvec, tmp_path, monkeypatch):
    path = write_vectors(KeyedVectors.load(charvec), tmp_path / "toy.safetensors")
    del plugged.subwords["chars"]
    with pytest.raises(WeightsError, match=r"'chars' subword model, which no installed plugin provides"):
        read_vectors(path)


def test_import_export_and_the_cli_take_the_plugin_format(plugged, charvec, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    assert main(["import", str(charvec), "--as", "toy.mine"]) == 0
    assert type(KeyedVectors.load("toy.mine")) is CharVectors
    out = tmp_path / "again.vec"
    assert main(["vectors", "export", "toy.mine", str(out), "--format", "charvec"]) == 0
    assert out.read_bytes() == charvec.read_bytes().replace(b"1 0\n", b"1.0 0.0\n").replace(
        b"0 1\n", b"0.0 1.0\n"
    ).replace(b"1 1\n", b"1.0 1.0\n")
    capsys.readouterr()
    assert main(["vectors", "export", "toy.mine", str(out), "--format", "charvek"]) != 0
    assert (
        "no vector format 'charvek' (installed: charvec, fasttext). Did you mean 'charvec'?" in capsys.readouterr().err
    )
    assert main(["import", str(charvec), "--as", "toy.other", "--format", "charvek"]) != 0
    assert "unknown format 'charvek'" in capsys.readouterr().err


def test_exports_are_served_from_zoo_vectors(plugged):
    import zoo.vectors

    assert zoo.vectors.CharVectors is CharVectors
    assert "CharVectors" in dir(zoo.vectors)
    with pytest.raises(ImportError):
        from zoo.vectors import NoSuchName  # noqa: F401


def test_two_plugins_declaring_one_format_are_a_conflict_naming_both(plugged, charvec):
    plugged.add_tables(read_tables(TABLES.split("[subwords")[0], plugin="rival"), plugin="rival")
    with pytest.raises(PluginConflictError, match=r"'charvec', 'rival'"):
        KeyedVectors.load(charvec)


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ('[formats.x]\ncodec = "m:a"\nmagic = ["zz"]', "not hexadecimal"),
        ('[formats.x]\ncodec = "m:a"\nmagic = ["' + "00" * 17 + '"]', "1 to 16 bytes"),
        ('[formats.x]\ncodec = "m:a"\nwritable = "yes"', "true or false"),
        ('[formats.x]\nmagic = ["00"]', "'codec' must be a non-empty string"),
        ('[exports.x]\ntarget = "m:a"\nmodule = "zoo.eval"', "serves no exports"),
        ('[exports._x]\ntarget = "m:a"\nmodule = "zoo.vectors"', "not a public Python name"),
        ('[subwords.x]\ncodec = "m:a"\nsizes = 3', "unknown keys"),
    ],
)
def test_malformed_extension_tables_are_refused(table, error):
    with pytest.raises(RegistryError, match=error):
        read_tables(table, plugin="p")
