"""One safetensors file rebuilds its model; damaged files give clear errors."""

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import zoo
from zoo.errors import WeightsError
from zoo.testing.base import assert_trees_close


@pytest.fixture(scope="module")
def model(small_seq2seq):
    return small_seq2seq


@pytest.fixture
def saved(model, tmp_path, registry):
    return zoo.save(model, tmp_path / "model.safetensors", registry=registry)


def rewrite(path, out, *, tensors=None, metadata=None):
    """Rewrite a saved file with changed tensors or metadata (re-checksummed: a deliberate edit)."""
    from zoo.building.weights import seal

    with safe_open(str(path), "numpy") as handle:
        meta = dict(handle.metadata())
    arrays = load_file(str(path))
    arrays = tensors(arrays) if tensors else arrays
    meta = metadata(meta) if metadata else meta
    save_file(arrays, str(out), metadata=seal(meta, arrays))
    return out


def test_file_holds_readable_keys_metadata_and_vocabularies(saved, model):
    with safe_open(str(saved), "numpy") as handle:
        meta = handle.metadata()
        keys = set(handle.keys())
    assert {"decoder.attention.weight", "encoder.forward.0.weight_h", "src_embedder.weight"} <= keys
    assert {"__zoo__.vocab.src.bytes", "__zoo__.vocab.src.offsets", "__zoo__.vocab.tgt.counts"} <= keys
    assert meta["zoo.format"] == "2"
    assert meta["zoo.name"] == "seq2seq+luong-general"
    assert json.loads(meta["zoo.spec"])["slots"][4]["component"] == "luong-general"
    assert json.loads(meta["zoo.versions"])["luong-general"] == zoo.__version__
    assert json.loads(meta["zoo.vocabs"])["src"]["eos"] == "</s>"


def test_round_trip_is_exact(saved, model, registry):
    loaded = zoo.load(saved, registry=registry)
    assert loaded.spec == model.spec
    assert loaded.vocabs["src"].tokens == model.vocabs["src"].tokens
    assert_trees_close(loaded, model, exact=True)


def test_a_new_process_rebuilds_from_the_file_alone(saved, model):
    src = [[5, 6, 7, 8, 0, 0]]
    code = (
        "import sys, json, numpy as np, zoo\n"
        f"m = zoo.load(sys.argv[1])\nprint(json.dumps(np.asarray(m.decode(np.array({src}))[0]).tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(saved)], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == np.asarray(model.decode(jnp.array(src))[0]).tolist()


def test_save_is_atomic(saved, model, monkeypatch, registry):
    before = saved.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("safetensors.numpy.save_file", crash)
    with pytest.raises(WeightsError, match="disk full"):
        zoo.save(model, saved, registry=registry)
    assert saved.read_bytes() == before
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]  # no temp file left


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b[: len(b) // 2], "not a readable safetensors file"),
        (lambda b: b"not a model at all", "not a readable safetensors file"),
        (lambda b: b[:9] + b"\xff" + b[10:], "not a readable safetensors file"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "does not match its checksum"),
    ],
)
def test_damaged_files_raise_weights_error(saved, tmp_path, damage, message, registry):
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(damage(saved.read_bytes()))
    with pytest.raises(WeightsError, match=message):
        zoo.load(broken, registry=registry)


def test_plain_safetensors_file_is_not_a_zoo_file(tmp_path, registry):
    save_file({"w": np.zeros(3, np.float32)}, str(tmp_path / "plain.safetensors"))
    with pytest.raises(WeightsError, match="not a zoo weights file"):
        zoo.load(tmp_path / "plain.safetensors", registry=registry)


def test_missing_file(tmp_path, registry):
    with pytest.raises(WeightsError, match="no weights file at"):
        zoo.load(tmp_path / "nothing.safetensors", registry=registry)


def test_tampered_spec_and_newer_format(saved, tmp_path, registry):
    bad = rewrite(saved, tmp_path / "a.safetensors", metadata=lambda m: {**m, "zoo.spec": "{not json"})
    with pytest.raises(WeightsError, match="'zoo.spec' is missing or damaged"):
        zoo.load(bad, registry=registry)
    newer = rewrite(saved, tmp_path / "b.safetensors", metadata=lambda m: {**m, "zoo.format": "99"})
    with pytest.raises(WeightsError, match="format 99; this zoo reads up to 2"):
        zoo.load(newer, registry=registry)


def test_wrong_dtype_unexpected_and_missing_tensors_are_named(saved, tmp_path, registry):
    key = "decoder.attention.weight"
    dtype = rewrite(saved, tmp_path / "d.safetensors", tensors=lambda t: {**t, key: t[key].astype(np.float16)})
    with pytest.raises(WeightsError, match=rf"{key}' has shape \(6, 6\) and dtype float16, expected.*float32"):
        zoo.load(dtype, registry=registry)
    extra = rewrite(saved, tmp_path / "e.safetensors", tensors=lambda t: {**t, "decoder.extra": np.zeros(2)})
    with pytest.raises(WeightsError, match=r"unexpected \['decoder.extra'\]"):
        zoo.load(extra, registry=registry)
    missing = rewrite(saved, tmp_path / "m.safetensors", tensors=lambda t: {k: v for k, v in t.items() if k != key})
    with pytest.raises(WeightsError, match=rf"missing tensors \['{key}'\]"):
        zoo.load(missing, registry=registry)


def test_damaged_vocabulary(saved, tmp_path, registry):
    off = "__zoo__.vocab.src.offsets"
    bad = rewrite(saved, tmp_path / "v.safetensors", tensors=lambda t: {**t, off: t[off][::-1].copy()})
    with pytest.raises(WeightsError, match="vocabulary 'src' is damaged"):
        zoo.load(bad, registry=registry)


def test_migration_hook_upgrades_old_files(saved, tmp_path):
    from plugin_samples import RenamesTensors

    from zoo.naming.registry import Registry

    old = rewrite(
        saved,
        tmp_path / "old.safetensors",
        tensors=lambda t: {(k.replace("decoder.output.", "decoder.out.")): v for k, v in t.items()},
    )
    plain = Registry.with_plugins(environ={})
    with pytest.raises(WeightsError, match="missing tensors"):
        zoo.load(old, registry=plain)
    plain.manager.register(RenamesTensors(), name="renames")
    assert zoo.load(old, registry=plain).spec.name == "seq2seq+luong-general"


def test_saving_something_that_is_not_a_zoo_model(tmp_path):
    with pytest.raises(WeightsError, match="needs a model built by zoo"):
        zoo.save(jnp.zeros(3), tmp_path / "x.safetensors")


def test_shared_leaves_are_stored_once(tmp_path, registry, model):
    import equinox as eqx

    tied = eqx.tree_at(lambda m: m.decoder.embedder.weight, model, model.src_embedder.weight)
    path = zoo.save(tied, tmp_path / "tied.safetensors", registry=registry)
    with safe_open(str(path), "numpy") as handle:
        assert "decoder.embedder.weight" not in set(handle.keys())
        assert json.loads(handle.metadata()["zoo.aliases"]) == {"decoder.embedder.weight": "src_embedder.weight"}
    loaded = zoo.load(path, registry=registry)
    assert_trees_close(loaded, tied, exact=True)


def test_a_vocabulary_of_another_size_than_the_spec_says_is_refused(model):
    from zoo.building.construct import build_from_spec
    from zoo.data.vocab import Vocab, Vocabularies
    from zoo.errors import DataError

    short = Vocab(["a", "b"])
    vocabs = Vocabularies({"src": short, "tgt": model.vocabs["tgt"]})
    size = model.spec.params["src_vocab_size"]
    with pytest.raises(DataError, match=rf"src_vocab_size={size} but the 'src' vocabulary has {len(short)}"):
        build_from_spec(model.spec, key=jax.random.key(0), vocabs=vocabs)
