"""A zoo file is data: nothing in it can make zoo import a module or call a callable.

Each crafted file names a factory in a marker module on `sys.path` whose import
would write a marker file, or names ``os:system`` with a command. Every path
that reads a zoo file must ignore the factory strings a file records, rebuild
the model from the installed registry, and never import the marker.
"""

from __future__ import annotations

import json
import sys

import jax
import numpy as np
import optax
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import zoo
from zoo.building.weights import seal
from zoo.cli.main import main
from zoo.data.vocab import Vocab
from zoo.errors import WeightsError, ZooError
from zoo.testing.base import assert_trees_close
from zoo.training.checkpoint import load_checkpoint
from zoo.vectors.keyed import KeyedVectors
from zoo_seq2seq.tasks import digit_vocab

MARKER = "zoo_marker_module"


@pytest.fixture
def marker(tmp_path, monkeypatch):
    """A module on sys.path whose import (or call) leaves a file behind."""
    folder = tmp_path / "path"
    folder.mkdir()
    touched = tmp_path / "touched"
    (folder / f"{MARKER}.py").write_text(
        f"open({str(touched)!r}, 'w').write('imported')\n"
        "def run(*args, **kwargs):\n"
        f"    open({str(touched)!r}, 'w').write('called')\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, MARKER, raising=False)
    yield touched
    assert not touched.exists(), f"the marker module was {touched.read_text()}"
    assert MARKER not in sys.modules


def craft(source, out, edit):
    """Rewrite `source` with `edit(spec_dict)` applied to its spec, re-sealed (a deliberate, valid-looking file)."""
    with safe_open(str(source), "numpy") as handle:
        meta = dict(handle.metadata())
    tensors = load_file(str(source))
    spec = json.loads(meta["zoo.spec"])
    edit(spec)
    meta["zoo.spec"] = json.dumps(spec)
    save_file(tensors, str(out), metadata=seal(meta, tensors))
    return out


def factories_to_marker(spec):
    spec["factory"] = f"{MARKER}:run"
    for slot in spec["slots"]:
        if slot["factory"]:
            slot["factory"] = f"{MARKER}:run"
            slot["plugin"] = MARKER


def strategy_runs_a_command(tmp_path):
    def edit(spec):
        strategy = next(s for s in spec["slots"] if s["slot"] == "strategy")
        strategy["factory"] = "os:system"
        strategy["params"] = {"command": f"touch {tmp_path / 'touched'}"}

    return edit


@pytest.fixture(scope="module")
def seq2seq(small_seq2seq):
    return small_seq2seq


@pytest.fixture
def saved(seq2seq, tmp_path, registry):
    return zoo.save(seq2seq, tmp_path / "model.safetensors", registry=registry)


def test_recorded_factories_are_ignored_and_the_installed_ones_build(saved, seq2seq, marker, tmp_path, registry):
    crafted = craft(saved, tmp_path / "crafted.safetensors", factories_to_marker)
    loaded = zoo.load(crafted, registry=registry)
    assert loaded.spec == seq2seq.spec  # the installed factories, not the recorded strings
    assert_trees_close(loaded, seq2seq, exact=True)


def test_a_command_in_a_strategy_slot_never_runs(saved, marker, tmp_path, registry):
    crafted = craft(saved, tmp_path / "crafted.safetensors", strategy_runs_a_command(tmp_path))
    with pytest.raises(WeightsError, match=r"strategy\.command is not a hyperparameter"):
        zoo.load(crafted, registry=registry)


def test_an_unregistered_architecture_or_component_is_named(saved, tmp_path, registry):
    def rename(spec):
        spec["arch"] = "seq2seqq"

    with pytest.raises(WeightsError, match="unknown model 'seq2seqq'. Did you mean 'seq2seq'"):
        zoo.load(craft(saved, tmp_path / "a.safetensors", rename), registry=registry)

    def swap(spec):
        slot = next(s for s in spec["slots"] if s["slot"] == "attention")
        slot["component"], slot["plugin"] = "os", "zoo-os-attention"

    with pytest.raises(WeightsError, match="unknown component 'os'.*plugin 'zoo-os-attention' provides it: install"):
        zoo.load(craft(saved, tmp_path / "c.safetensors", swap), registry=registry)


def test_a_nested_spec_in_a_parameter_is_data_too(marker, registry):
    """A tagger rebuilds its contextual embedder from a JSON spec held in a parameter."""
    from zoo.building.construct import build_from_spec

    inner = json.loads(registry.describe("elmo", vocab_size=19, projection_size=6).to_json())
    factories_to_marker(inner)
    tagger = registry.describe("bilstm-tagger", vocab_size=17, num_tags=5, context=json.dumps(inner))
    model = jax.eval_shape(lambda: build_from_spec(tagger, key=jax.random.key(0), registry=registry))
    assert type(model.context).__name__ == "ELMo"


def test_every_loading_path_refuses_the_crafted_file(saved, marker, tmp_path, registry, capsys):
    from plugin_samples import ProvidesWeights

    crafted = craft(saved, tmp_path / "crafted.safetensors", strategy_runs_a_command(tmp_path))
    params = zoo.load(saved, registry=registry)
    with pytest.raises(WeightsError):
        load_checkpoint(crafted, optax.adam(1e-3).init(params), registry=registry)
    with pytest.raises(WeightsError):
        KeyedVectors.load(crafted)
    for argv in (
        ["translate", str(crafted), "1 2 3"],
        ["eval", str(crafted), "--data", str(tmp_path / "none.tsv")],
        ["vectors", "similar", str(crafted), "one"],
        ["tag", str(crafted), "a b"],
        ["classify", str(crafted), "a b"],
        ["generate", str(crafted)],
    ):
        assert main(argv) == 2, argv
        assert "crafted.safetensors" in capsys.readouterr().err
    other = zoo.Registry.with_plugins(environ={})
    other.manager.register(ProvidesWeights(crafted), name="provides")
    with pytest.raises(WeightsError):
        zoo.build("seq2seq.tiny", key=jax.random.key(0), registry=other)


def test_a_checkpoint_with_crafted_progress_is_refused(seq2seq, tmp_path, registry):
    from zoo.training.checkpoint import save_checkpoint

    opt_state = optax.adam(1e-3).init(seq2seq)
    path = save_checkpoint(tmp_path / "ckpt.safetensors", seq2seq, opt_state, step=3, position={"epoch": 1})
    assert load_checkpoint(path, opt_state, registry=registry).step == 3
    for progress, message in [
        ('{"step": -1}', "non-negative integer"),
        ('{"step": true}', "non-negative integer"),
        ('{"step": 2, "position": {"epoch": "x"}}', "non-negative integers"),
        ('{"step": 2, "position": [1]}', "non-negative integers"),
        ('{"step": 2, "extra": 1}', "must be"),
        ("[", "not valid JSON"),
    ]:
        with safe_open(str(path), "numpy") as handle:
            meta = dict(handle.metadata())
        tensors = load_file(str(path))
        save_file(
            tensors, str(tmp_path / "bad.safetensors"), metadata=seal({**meta, "zoo.checkpoint": progress}, tensors)
        )
        with pytest.raises(WeightsError, match=message):
            load_checkpoint(tmp_path / "bad.safetensors", opt_state, registry=registry)


def test_resuming_from_a_checkpoint_of_other_hyperparameters_names_the_difference(seq2seq, tmp_path, registry):
    from zoo.training.checkpoint import save_checkpoint

    vocab = digit_vocab()
    other = zoo.build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        registry=registry,
        vocab={"src": vocab, "tgt": vocab},
        hidden_size=6,
        embedding_size=5,
        label_smoothing=0.1,
    )
    opt_state = optax.adam(1e-3).init(seq2seq)
    path = save_checkpoint(tmp_path / "ckpt.safetensors", other, opt_state, step=3, position=None)
    with pytest.raises(WeightsError, match=r"another run: it has label_smoothing=0.1 \(this run: 0.0\)"):
        load_checkpoint(path, opt_state, model_like=seq2seq, registry=registry)


def test_a_file_without_a_checksum_loads_only_when_asked_with_a_warning(saved, tmp_path, seq2seq, registry):
    from zoo.building.weights import WeightsWarning

    with safe_open(str(saved), "numpy") as handle:
        meta = {k: v for k, v in handle.metadata().items() if k != "zoo.checksum"}
    tensors = load_file(str(saved))
    tensors["decoder.attention.weight"] = tensors["decoder.attention.weight"] + 1
    save_file(tensors, str(tmp_path / "bare.safetensors"), metadata=meta)
    with pytest.raises(WeightsError, match="has no checksum.*verify=False"):
        zoo.load(tmp_path / "bare.safetensors", registry=registry)
    with pytest.warns(WeightsWarning, match="has no checksum"):
        loaded = zoo.load(tmp_path / "bare.safetensors", registry=registry, verify=False)
    assert np.allclose(loaded.decoder.attention.weight, seq2seq.decoder.attention.weight + 1)


def test_a_flipped_spec_value_is_detected(saved, tmp_path, registry):
    """The checksum covers the metadata: a changed hyperparameter no longer loads silently."""
    with safe_open(str(saved), "numpy") as handle:
        meta = dict(handle.metadata())
    tensors = load_file(str(saved))
    meta["zoo.spec"] = meta["zoo.spec"].replace('"label_smoothing": 0.0', '"label_smoothing": 0.5')
    save_file(tensors, str(tmp_path / "flipped.safetensors"), metadata=meta)
    with pytest.raises(WeightsError, match="does not match its checksum"):
        zoo.load(tmp_path / "flipped.safetensors", registry=registry)


def test_a_format_1_file_still_loads_with_a_warning(saved, tmp_path, seq2seq, registry):
    from zoo.building.weights import WeightsWarning, checksum

    with safe_open(str(saved), "numpy") as handle:
        meta = {k: v for k, v in handle.metadata().items() if k != "zoo.checksum"}
    tensors = load_file(str(saved))
    meta.update({"zoo.format": "1", "zoo.sha256": checksum(tensors)})
    save_file(tensors, str(tmp_path / "old.safetensors"), metadata=meta)
    with pytest.warns(WeightsWarning, match="older zoo"):
        loaded = zoo.load(tmp_path / "old.safetensors", registry=registry)
    assert_trees_close(loaded, seq2seq, exact=True)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["slots"][2]["params"].update(num_layers=100000), r"num_layers=100000 is out of range"),
        (lambda s: s["slots"][2]["params"].update(hidden_size=-3), r"hidden_size=-3 is out of range"),
        (lambda s: s["params"].update(src_vocab_size=300_000_000), "vocabulary has 14"),
        (lambda s: s["params"].update(label_smoothing=float("nan")), "label_smoothing=nan is out of range"),
        (lambda s: s["params"].update(label_smoothing="0.1"), "label_smoothing must be float"),
        (lambda s: s["slots"][2]["params"].update(depth=3), "encoder.depth is not a hyperparameter"),
        (lambda s: s.update(slots=s["slots"][:-1]), "not those of the installed architecture"),
        (lambda s: s.update(slots={}), "'slots' must be a list"),
        (lambda s: s.update(evil=1), r"unknown keys \['evil'\]"),
        (lambda s: s["slots"][1].update(component="bahdanau"), "slot 'cell' takes a cell"),
        (lambda s: s["slots"][2]["params"].update(hidden_size={"$ref": 1}), "must be a number, a string"),
    ],
)
def test_crafted_specs_are_weights_errors_before_anything_is_allocated(saved, tmp_path, registry, edit, message):
    with pytest.raises(WeightsError, match=message):
        zoo.load(craft(saved, tmp_path / "crafted.safetensors", edit), registry=registry)


def test_damaged_vocabulary_and_alias_metadata_are_weights_errors(saved, tmp_path, registry):
    with safe_open(str(saved), "numpy") as handle:
        meta = dict(handle.metadata())
    tensors = load_file(str(saved))
    off = "__zoo__.vocab.src.offsets"
    cases = [
        ({"zoo.vocabs": "[1, 2]"}, {}, "must be a JSON object"),
        ({"zoo.vocabs": '{"src": 3, "tgt": {}}'}, {}, "vocabulary 'src' is damaged"),
        ({"zoo.vocabs": json.dumps({**json.loads(meta["zoo.vocabs"]), "words": {}})}, {}, "not roles of 'seq2seq'"),
        ({"zoo.aliases": '{"x": 3}'}, {}, "alias 'x' -> 3 is malformed"),
        ({"zoo.aliases": '{"x": "nope"}'}, {}, "points to missing tensor"),
        ({}, {off: np.zeros((0,), np.int64)}, "non-empty 1-d integer"),
        ({}, {off: tensors[off].astype(np.float32)}, "non-empty 1-d integer"),
        ({}, {"__zoo__.vocab.src.bytes": np.full(tensors["__zoo__.vocab.src.bytes"].shape, 255, np.uint8)}, "UTF-8"),
        ({}, {"__zoo__.vocab.zz.bytes": np.zeros(3, np.uint8)}, "belong to no vocabulary"),
    ]
    for metadata, arrays, message in cases:
        out = tmp_path / "bad.safetensors"
        changed = {**tensors, **arrays}
        save_file(changed, str(out), metadata=seal({**meta, **metadata}, changed))
        with pytest.raises(WeightsError, match=message):
            zoo.load(out, registry=registry)


def test_domains_reject_out_of_range_hyperparameters_by_name(registry):
    key = jax.random.key(0)
    for overrides, message in [
        ({"hidden_size": 0}, r"encoder.hidden_size=0 is out of range: it must be an integer >= 1"),
        ({"dropout": 1.5}, r"embedder.dropout=1.5 is out of range: it must be a number in \[0, 1\)"),
        ({"label_smoothing": -1.0}, r"label_smoothing=-1.0 is out of range"),
        ({"encoder.num_layers": 0}, r"encoder.num_layers=0 is out of range: it must be an integer in \[1, 64\]"),
        ({"attention.attention_size": 0}, None),  # luong-general has no attention_size: an unknown key
    ]:
        with pytest.raises(ZooError) as error:
            zoo.build("seq2seq+luong-general", key=key, registry=registry, **overrides)
        if message is not None:
            assert error.match(message)
            assert error.match(r"--set ")
    with pytest.raises(ZooError, match=r"strategy.top_p=1.5 is out of range: it must be a number in \(0, 1\]"):
        registry.describe("seq2seq+sample", **{"strategy.top_p": 1.5})
    with pytest.raises(ZooError, match="nonlinearity='sigmoid' is out of range: it must be one of 'tanh', 'relu'"):
        registry.describe("lm+rnn", nonlinearity="sigmoid")


def test_vocabulary_tokens_are_rebuilt_exactly(saved, registry, seq2seq):
    loaded = zoo.load(saved, registry=registry)
    assert loaded.vocabs["src"] == seq2seq.vocabs["src"]
    assert isinstance(loaded.vocabs["src"], Vocab)


def test_a_hook_that_exits_during_a_load_is_a_plugin_error(saved, tmp_path):
    from zoo.errors import PluginError
    from zoo.naming.hookspecs import hookimpl

    class ExitsOnMigrate:
        @hookimpl
        def zoo_migrate_weights(self, metadata, tensors):
            sys.exit("bye")

    class ExitsOnResolve:
        @hookimpl
        def zoo_resolve_weights(self, name, tag):
            raise SystemExit(3)

    plain = zoo.Registry.with_plugins(environ={})
    plain.manager.register(ExitsOnMigrate(), name="exits")
    with pytest.raises(PluginError, match="zoo_migrate_weights hook failed: SystemExit: bye"):
        zoo.load(saved, registry=plain)
    other = zoo.Registry.with_plugins(environ={})
    other.manager.register(ExitsOnResolve(), name="exits")
    with pytest.raises(PluginError, match="zoo_resolve_weights hook failed"):
        zoo.build("seq2seq.tiny", key=jax.random.key(0), registry=other)
