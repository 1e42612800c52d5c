"""A third party's model file format, plugged in as fastText's supervised files are (`zoo.building.foreign`):
``zoo.load``, ``zoo import`` and model commands take its files; the file's bytes choose no code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import zoo
from zoo.building.store import Store
from zoo.cli.main import main
from zoo.errors import DataError, PluginError, RegistryError, WeightsError
from zoo.naming.tables import read_tables
from zoo.plugin_api import KeyedVectors, ModelFormat, VectorFormat, Vocab

MAGIC = b"TOYCLS1\n"

TABLES = """
[formats.toycls]
codec = "test_model_formats:ToyVectors"
model_codec = "test_model_formats:ToyClassifiers"
summary = "a toy format: a magic line, then JSON: words, labels, and 'model' when it holds a classifier"
title = "toy classifier"
magic = ["544f59434c5331"]
"""


def _header(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes()[len(MAGIC) :])


class ToyVectors(VectorFormat):
    def read(self, path: Path, *, limit=None, encoding="utf-8", unicode_errors="strict") -> KeyedVectors:
        words = _header(path)["words"][:limit]
        return KeyedVectors(words, np.eye(len(words), 3, dtype=np.float32))


class ToyClassifiers(ModelFormat):
    def holds_model(self, path: Path) -> bool:
        return "model" in _header(path)

    def read_model(self, path: Path) -> Any:
        header = _header(path)
        if not isinstance(header["model"], dict) or header["model"].get("dim", 0) < 1:
            raise DataError(f"{path}: 'model' must give a positive dim")
        vocab = {"words": Vocab(header["words"], None, {}), "labels": Vocab(header["labels"], None, {})}
        return zoo.build("fasttext-classifier", key=jax.random.key(0), vocab=vocab, dim=header["model"]["dim"])


@pytest.fixture
def plugged(with_tables):
    return with_tables(TABLES, "toycls")


def _toy(path: Path, **header: Any) -> Path:
    content = {"words": ["good", "bad", "</s>"], "labels": ["pos", "neg"], **header}
    path.write_bytes(MAGIC + json.dumps(content).encode())
    return path


def test_zoo_load_reads_a_plugin_formats_model(plugged, tmp_path):
    model = zoo.load(_toy(tmp_path / "m.toy", model={"dim": 4}))
    assert model.spec.arch == "fasttext-classifier" and model.spec["dim"] == 4
    assert model.vocabs["labels"].tokens == ("pos", "neg")
    assert model.predict_proba(["good"]).shape == (1, 2)


def test_zoo_import_stores_it_as_a_zoo_model_and_commands_take_it(plugged, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    path = _toy(tmp_path / "m.toy", model={"dim": 4})
    assert main(["import", str(path), "--as", "toy.cls"]) == 0
    assert "model, fasttext-classifier" in capsys.readouterr().out
    entry = Store(tmp_path / "home").get("toy.cls")
    assert entry.kind == "model" and entry.source.endswith("(toy classifier)")
    stored = zoo.load("toy.cls")
    np.testing.assert_array_equal(stored.predict_proba(["good bad"]), zoo.load(path).predict_proba(["good bad"]))
    assert main(["classify", str(path), "--k", "-1", "good"]) == 0
    assert capsys.readouterr().out.split()[::2] in (["pos", "neg"], ["neg", "pos"])
    assert main(["import", str(path), "--as", "toy.two", "--limit", "2"]) != 0
    assert "--limit keeps the first words of word vectors" in capsys.readouterr().err


def test_a_file_of_the_format_holding_vectors_is_read_as_vectors(plugged, tmp_path, monkeypatch):
    path = _toy(tmp_path / "v.toy")
    with pytest.raises(WeightsError, match=r"a toy classifier file of word vectors, not a model"):
        zoo.load(path)
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    assert main(["import", str(path), "--as", "toy.vectors"]) == 0
    assert KeyedVectors.load("toy.vectors").index_to_key == ["good", "bad", "</s>"]


def test_the_codecs_errors_and_a_codec_of_the_wrong_kind(plugged, tmp_path):
    with pytest.raises(DataError, match="'model' must give a positive dim"):
        zoo.load(_toy(tmp_path / "bad.toy", model={"dim": 0}))
    plugged.formats["toycls"] = type(plugged.formats["toycls"])(
        **{**plugged.formats["toycls"].__dict__, "model_codec": "test_model_formats:ToyVectors"}
    )
    with pytest.raises(PluginError, match="not a zoo.building.foreign.ModelFormat"):
        zoo.load(_toy(tmp_path / "m.toy", model={"dim": 4}))


def test_a_zoo_file_is_never_handed_to_a_plugin(plugged, tmp_path):
    model = zoo.load(_toy(tmp_path / "m.toy", model={"dim": 4}))
    saved = zoo.save(model, tmp_path / "m.safetensors")
    assert zoo.load(saved).spec == model.spec


def test_an_empty_model_codec_is_refused_in_the_tables():
    with pytest.raises(RegistryError, match="'model_codec' must be a non-empty string"):
        read_tables('[formats.x]\ncodec = "m:a"\nmodel_codec = ""', plugin="p")
