"""Property-based fuzzing of everything that comes from outside: files, metadata, hyperparameters, CLI arguments.

Every generated case must end in a `ZooError` (with a message) or a correct
result: never another exception, a hang, or an allocation out of proportion
to the input. The default run keeps each property to a few dozen examples;
``pytest tests/test_fuzz.py --hypothesis-profile=slow`` runs thousands.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import resource
import sys
import time

import jax
import optax
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import zoo
from zoo.building.weights import seal
from zoo.cli.main import main
from zoo.errors import ZooError
from zoo.testing.base import assert_trees_close
from zoo.training.checkpoint import load_checkpoint, save_checkpoint

# Profiles ("zoo", the default, and "slow") are registered in conftest.py; each test reuses
# its fixtures across examples on purpose (a file per example in its own tmp_path).
pytestmark = pytest.mark.filterwarnings("ignore::zoo.building.weights.WeightsWarning")
fuzz = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
# the same examples on every run: a CI run once stopped with hypothesis's FlakyStrategyDefinition
# (a replay drawing less than its first run) on the crafted-spec property, not reproduced since
fuzz_fixed = settings(fuzz, derandomize=True)

SECONDS_PER_CASE = 20.0
RSS_GROWTH_KIB = 1 << 20  # 1 GiB over a whole property: far beyond what a 20 kB file justifies

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def model(small_seq2seq):
    return small_seq2seq


@pytest.fixture(scope="module")
def original(model, registry, tmp_path_factory):
    """The saved file's bytes, metadata and tensors."""
    path = zoo.save(model, tmp_path_factory.mktemp("fuzz") / "model.safetensors", registry=registry)
    with safe_open(str(path), "numpy") as handle:
        metadata = dict(handle.metadata())
    return path.read_bytes(), metadata, load_file(str(path))


class Bounded:
    """Each case ends within `SECONDS_PER_CASE`; the process's peak memory grows by less than `RSS_GROWTH_KIB`."""

    def __enter__(self):
        self.rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.start
        assert elapsed < SECONDS_PER_CASE, f"a case took {elapsed:.1f} s"
        growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self.rss
        assert growth < RSS_GROWTH_KIB, f"a case grew the peak memory by {growth} KiB"
        return False


def load_or_zoo_error(path, registry, **kwargs):
    """The loaded model, or None when loading raised a `ZooError` (any other exception propagates)."""
    with Bounded():
        try:
            return zoo.load(path, registry=registry, **kwargs)
        except ZooError as error:
            message = str(error)
    assert message, "a ZooError must say what is wrong"
    return None


@fuzz
@given(data=st.data())
def test_damaged_bytes_are_weights_errors_or_the_same_model(data, original, model, registry, tmp_path):
    raw, _, _ = original
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        kind = data.draw(st.sampled_from(["flip", "truncate", "insert", "header"]))
        if kind == "flip" and damaged:
            i = data.draw(st.integers(0, len(damaged) - 1))
            damaged[i] ^= data.draw(st.integers(1, 255))
        elif kind == "truncate":
            damaged = damaged[: data.draw(st.integers(0, len(damaged)))]
        elif kind == "insert":
            i = data.draw(st.integers(0, len(damaged)))
            damaged[i:i] = data.draw(st.binary(min_size=1, max_size=16))
        else:  # the 8-byte header length
            damaged[:8] = data.draw(st.binary(min_size=8, max_size=8))
    path = tmp_path / "damaged.safetensors"
    path.write_bytes(bytes(damaged))
    loaded = load_or_zoo_error(path, registry)
    if loaded is not None:  # only a change that leaves tensors and metadata intact may load
        assert loaded.spec == model.spec
        assert_trees_close(loaded, model, exact=True)


def _spec_paths(spec: dict) -> list[tuple]:
    paths = [("params", k) for k in spec["params"]] + [(k,) for k in spec]
    for i, slot in enumerate(spec["slots"]):
        paths += [("slots", i, "params", k) for k in slot["params"]] + [("slots", i, k) for k in slot]
    return paths


def _set(tree, path, value):
    """Set `tree[path]`, unless an earlier edit replaced a container on the way."""
    for part in path[:-1]:
        try:
            tree = tree[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(tree, dict) or (isinstance(tree, list) and isinstance(path[-1], int) and path[-1] < len(tree)):
        tree[path[-1]] = value


@fuzz_fixed
@given(data=st.data())
def test_crafted_spec_values_are_zoo_errors_or_loaded_as_recorded(data, original, model, registry, tmp_path):
    """A re-sealed file (as a crafter would make it) with any values anywhere in its spec."""
    _, metadata, tensors = original
    spec = json.loads(metadata["zoo.spec"])
    paths = st.sampled_from(_spec_paths(spec)) | st.tuples(st.just("params"), st.text(max_size=8))
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        path = data.draw(paths)
        _set(spec, path, data.draw(json_values, label=str(path)))
    text = json.dumps(spec, allow_nan=True)
    out = tmp_path / "crafted.safetensors"
    save_file(tensors, str(out), metadata=seal({**metadata, "zoo.spec": text}, tensors))
    loaded = load_or_zoo_error(out, registry)
    if loaded is not None:  # loaded: every recorded value is the one the model got
        recorded = json.loads(text)
        for key, value in recorded.get("params", {}).items():
            got = loaded.spec.params[key]
            assert got == value or (isinstance(got, float) and math.isclose(got, value)), key
        assert_trees_close(loaded, model, exact=True)  # the tensors fit only the original shapes


@fuzz
@given(
    key=st.sampled_from(["zoo.vocabs", "zoo.aliases", "zoo.format", "zoo.spec", "zoo.name", "zoo.checkpoint"]),
    value=st.one_of(json_values.map(json.dumps), st.text(max_size=30)),
)
def test_any_metadata_entry_is_a_zoo_error_or_ignored(key, value, original, model, registry, tmp_path):
    _, metadata, tensors = original
    out = tmp_path / "meta.safetensors"
    save_file(tensors, str(out), metadata=seal({**metadata, key: value}, tensors))
    loaded = load_or_zoo_error(out, registry)
    if loaded is not None:
        assert_trees_close(loaded, model, exact=True)
    with Bounded(), contextlib.suppress(ZooError):
        load_checkpoint(out, optax.sgd(0.1).init(model), registry=registry)


@fuzz
@given(progress=json_values.map(json.dumps) | st.text(max_size=40))
def test_checkpoint_progress_is_a_weights_error_or_valid(progress, model, registry, tmp_path):
    opt_state = optax.sgd(0.1).init(model)
    path = save_checkpoint(tmp_path / "ckpt.safetensors", model, opt_state, step=1, position=None)
    with safe_open(str(path), "numpy") as handle:
        metadata = dict(handle.metadata())
    tensors = load_file(str(path))
    save_file(tensors, str(path), metadata=seal({**metadata, "zoo.checkpoint": progress}, tensors))
    with Bounded():
        try:
            checkpoint = load_checkpoint(path, opt_state, registry=registry)
        except ZooError:
            return
    assert isinstance(checkpoint.step, int) and checkpoint.step >= 0


ARCHITECTURES = ["seq2seq+beam", "word2vec-skipgram", "fasttext", "lm", "tcn-lm", "textcnn", "bilstm-tagger", "elmo"]


@fuzz
@given(data=st.data())
def test_any_hyperparameter_value_is_a_zoo_error_or_builds(data, registry):
    name = data.draw(st.sampled_from(ARCHITECTURES))
    spec = registry.describe(name)
    keys = sorted(spec.params) + [f"{s.slot}.{k}" for s in spec.slots for k in s.params]
    overrides = {
        data.draw(st.sampled_from(keys) | st.text(max_size=8)): data.draw(json_values)
        for _ in range(data.draw(st.integers(1, 3)))
    }
    with Bounded(), contextlib.suppress(ZooError):
        jax.eval_shape(lambda: zoo.build(name, key=jax.random.key(0), registry=registry, **overrides))


TOKENS = [
    "list", "info", "plugins", "vectors", "similar", "analogy", "translate", "eval", "tag", "classify", "generate",
    "seq2seq", "lm", "--beam", "--n-best", "--method", "--max-length", "--temperature", "--json", "--set", "x=1",
    "-5", "0", "nan", "inf", "3", "--kind", "attention", "--components", "-h", "king", "FILE", "MISSING", "*",
]  # fmt: skip


@fuzz
@given(argv=st.lists(st.sampled_from(TOKENS), min_size=1, max_size=6))
def test_any_command_line_ends_in_an_exit_code(argv, original, tmp_path, capsys, monkeypatch):
    raw, _, _ = original
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1 2 3\nking\n")))
    path = tmp_path / "model.safetensors"
    path.write_bytes(raw)
    argv = [str(path) if t == "FILE" else str(tmp_path / "missing") if t == "MISSING" else t for t in argv]
    with Bounded():
        try:
            code = main(argv)
        except SystemExit as exit:  # argparse's usage errors and --help
            code = exit.code
    assert code in (0, 1, 2), (argv, code)
    capsys.readouterr()
