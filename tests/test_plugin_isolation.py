"""Plugins cannot take the host down: exits, entry-point conflicts, slow imports; and a CLI that behaves in pipes.

Third-party distributions are real ones: a ``.dist-info`` folder written into a
temporary site directory, found by `importlib.metadata` there (in process) or
on ``PYTHONPATH`` (in a subprocess), its entry points naming the sample
plugins of ``plugin_samples*.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import EntryPoint, distributions
from pathlib import Path

import jax
import numpy as np
import pytest

import zoo
from zoo.cli.main import CLOSED_PIPE, build_parser, main
from zoo.errors import PluginConflictError, PluginError
from zoo.naming.loader import PluginWarning, discover_entry_points
from zoo.naming.registry import Registry

TESTS = Path(__file__).parent
BUILTINS = discover_entry_points()
SIZES = {"hidden_size": 4, "src_vocab_size": 9, "tgt_vocab_size": 9}


def ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group="zoo.plugins")


def install(site: Path, name: str, version: str, **entry_points: str) -> list[EntryPoint]:
    """Write the metadata of distribution `name` into `site`; return its zoo entry points (bound to it)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = "".join(f"{key.replace('_', '-')} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[zoo.plugins]\n{lines}", encoding="utf-8")
    (dist,) = [d for d in distributions(path=[str(site)]) if d.metadata["Name"] == name]
    return [e for e in dist.entry_points if e.group == "zoo.plugins"]


def zoo_cmd(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m zoo.cli.main ARGS`` with `site` (and the sample plugins) importable."""
    path = os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "zoo.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path, **env},
    )


def rows(stdout: str) -> dict[str, str]:
    return {line.split()[0]: line for line in stdout.splitlines()[1:] if line.strip()}


def assert_everything_else_works(registry: Registry, tmp_path: Path, name: str = "seq2seq+luong-general") -> None:
    """Every built-in but the named ones loaded; `name` lists, builds, saves and loads back equal."""
    assert registry.list_models("seq2seq") == ["seq2seq"]
    assert "luong-general" in registry.list_components(kind="attention")
    model = zoo.build(name, key=jax.random.key(0), registry=registry, **SIZES)
    path = zoo.save(model, tmp_path / "other.safetensors", registry=registry)
    loaded = zoo.load(path, registry=registry)
    assert loaded.spec == model.spec
    leaves = jax.tree_util.tree_leaves(model)
    for a, b in zip(leaves, jax.tree_util.tree_leaves(loaded), strict=True):
        if hasattr(a, "shape"):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# -- SystemExit and other BaseExceptions ---------------------------------------------------


def test_a_plugin_calling_sys_exit_at_import_is_broken_and_the_rest_work(tmp_path):
    with pytest.warns(PluginWarning, match=r"'exits' failed to load.*sys.exit\('this plugin needs a GPU'\)"):
        registry = Registry.with_plugins([ep("exits", "plugin_samples_exits"), *BUILTINS], environ={})
    assert registry.plugins["exits"].status == "broken"
    assert registry.plugins["exits"].error.startswith("SystemExit")
    assert "plugin_samples_exits" not in sys.modules  # the failed import left nothing behind
    assert all(r.ok for name, r in registry.plugins.items() if name != "exits")
    assert_everything_else_works(registry, tmp_path)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("plugin_samples:exits", r"SystemExit: the plugin called sys.exit\('no GPU here'\)"),
        ("plugin_samples:exits_zero", r"SystemExit: the plugin called sys.exit\(0\)"),
        ("plugin_samples:generator_exit", "GeneratorExit"),
    ],
)
def test_a_base_exception_during_registration_is_a_broken_plugin(value, error):
    with pytest.warns(PluginWarning, match=rf"'quits' failed to load and is disabled: {error}"):
        registry = Registry.with_plugins([ep("quits", value), ep("dot-copy", "plugin_samples:good")], environ={})
    assert registry.plugins["quits"].status == "broken"
    assert registry.manager.get_plugin("quits") is None  # unregistered: its hooks are never called
    assert registry.component("dot-copy").plugin == "dot-copy"


def test_strict_mode_turns_sys_exit_into_a_plugin_error():
    with pytest.raises(PluginError, match="'exits' failed to load.*SystemExit"):
        Registry.with_plugins([ep("exits", "plugin_samples:exits")], environ={"ZOO_STRICT_PLUGINS": "1"})


def test_keyboard_interrupt_goes_through_and_leaves_nothing_registered():
    registry = Registry()
    with pytest.raises(KeyboardInterrupt):
        registry.load_plugins([ep("ctrl-c", "plugin_samples:interrupted")], environ={})
    assert registry.manager.get_plugin("ctrl-c") is None
    assert registry.plugins["ctrl-c"].status == "broken"


def test_zoo_list_and_plugins_survive_an_installed_plugin_that_exits(tmp_path):
    install(tmp_path, "zoo-exits", "0.3", exits="plugin_samples_exits")
    listed = zoo_cmd(tmp_path, "list", "--kind", "attention")
    assert listed.returncode == 0, listed.stderr
    assert "luong-general" in listed.stdout
    assert "'exits' from distribution 'zoo-exits' failed to load" in listed.stderr
    plugins = zoo_cmd(tmp_path, "plugins")
    assert plugins.returncode == 0, plugins.stderr
    assert "broken" in rows(plugins.stdout)["exits"] and "SystemExit" in rows(plugins.stdout)["exits"]
    assert "loaded" in rows(plugins.stdout)["luong-general"]


# -- entry-point name conflicts ------------------------------------------------------------


def test_two_distributions_with_one_entry_point_name_disable_only_that_plugin(tmp_path):
    rivals = [
        *install(tmp_path, "zoo-dot-copy", "1.0", dot_copy="plugin_samples:good"),
        *install(tmp_path, "zoo-dot-fork", "2.0", dot_copy="plugin_samples:same_name"),
    ]
    expected = (
        r"'dot-copy' is disabled: its entry-point name is declared twice, by "
        r"'plugin_samples:good' from distribution 'zoo-dot-copy' 1.0 and "
        r"'plugin_samples:same_name' from distribution 'zoo-dot-fork' 2.0"
    )
    with pytest.warns(PluginWarning, match=expected) as caught:
        registry = Registry.with_plugins([*rivals, *BUILTINS], environ={})
    assert len(caught) == 1  # one conflict, one report
    assert registry.plugins["dot-copy"].status == "in conflict"
    assert "dot-copy" not in registry.components
    assert registry.manager.get_plugin("dot-copy") is None
    assert all(r.ok for name, r in registry.plugins.items() if name != "dot-copy")
    assert_everything_else_works(registry, tmp_path, "seq2seq+luong-dot")


def test_a_third_party_entry_point_named_like_a_builtin_disables_only_that_name(tmp_path):
    rival = install(tmp_path, "zoo-rival", "0.1", luong_dot="plugin_samples:good")
    with pytest.warns(PluginWarning, match=r"'luong-dot' is disabled.*distribution 'zoo'.*distribution 'zoo-rival'"):
        registry = Registry.with_plugins([*BUILTINS, *rival], environ={})
    assert registry.plugins["luong-dot"].status == "in conflict"
    with pytest.raises(PluginConflictError, match=r"'luong-dot', which is in conflict.*'zoo'.*'zoo-rival'"):
        zoo.build("seq2seq+luong-dot", key=jax.random.key(0), registry=registry, **SIZES)
    assert "dot-copy" not in registry.components  # the rival's own names are not registered either
    assert_everything_else_works(registry, tmp_path)


def test_strict_mode_makes_an_entry_point_conflict_fatal(tmp_path):
    rival = install(tmp_path, "zoo-rival", "0.1", luong_dot="plugin_samples:good")
    with pytest.raises(PluginError, match="'luong-dot' is disabled: its entry-point name is declared twice"):
        Registry.with_plugins([*BUILTINS, *rival], environ={"ZOO_STRICT_PLUGINS": "1"})


def test_disabling_the_name_silences_the_conflict(tmp_path):
    rival = install(tmp_path, "zoo-rival", "0.1", luong_dot="plugin_samples:good")
    registry = Registry.with_plugins([*BUILTINS, *rival], environ={"ZOO_DISABLE_PLUGINS": "luong-dot"})
    assert registry.plugins["luong-dot"].status == "disabled"


def test_a_rival_arriving_after_the_name_was_loaded_is_not_loaded():
    registry = Registry.with_plugins([ep("dot-copy", "plugin_samples:good")], environ={})
    assert registry.load_plugins([ep("dot-copy", "plugin_samples:good")], environ={}) == []  # the same: no-op
    with pytest.warns(PluginWarning, match="'dot-copy' is disabled.*zoo keeps the first, loaded already"):
        (record,) = registry.load_plugins([ep("dot-copy", "plugin_samples:same_name")], environ={})
    assert record.status == "in conflict"
    assert registry.plugins["dot-copy"].ok
    assert registry.component("dot-copy").plugin == "dot-copy"


def test_zoo_list_and_plugins_with_a_builtin_name_declared_twice(tmp_path):
    install(tmp_path, "zoo-rival", "0.1", luong_dot="plugin_samples:good")
    listed = zoo_cmd(tmp_path, "list", "--kind", "attention")
    assert listed.returncode == 0, listed.stderr
    attention = rows(listed.stdout)
    assert "luong-general" in attention and "bahdanau" in attention
    assert "luong-dot" not in attention  # it would not build
    assert "distribution 'zoo'" in listed.stderr and "distribution 'zoo-rival'" in listed.stderr
    plugins = zoo_cmd(tmp_path, "plugins")
    assert plugins.returncode == 0, plugins.stderr
    assert "in conflict" in rows(plugins.stdout)["luong-dot"]
    assert rows(plugins.stdout)["luong-general"].split()[4].endswith("s")  # its load time


def test_a_table_name_claimed_by_two_plugins_fails_alone(tmp_path):
    eps = [ep("first", "plugin_samples:good"), ep("second", "plugin_samples:same_name"), *BUILTINS]
    with pytest.warns(PluginWarning, match="'first' and 'second' both register 'dot-copy'"):
        registry = Registry.with_plugins(eps, environ={})
    assert registry.plugins["first"].ok and registry.plugins["second"].ok
    with pytest.raises(PluginConflictError, match="'first', 'second'"):
        zoo.build("seq2seq+dot-copy", key=jax.random.key(0), registry=registry, **SIZES)
    assert_everything_else_works(registry, tmp_path, "seq2seq+luong-dot")


# -- slow plugins --------------------------------------------------------------------------


def test_a_plugin_slow_to_import_is_named(monkeypatch):
    monkeypatch.delitem(sys.modules, "plugin_samples_slow", raising=False)
    with pytest.warns(PluginWarning, match=r"'slow' took 0\.\d s to load \(more than 0.1 s\)"):
        registry = Registry.with_plugins([ep("slow", "plugin_samples_slow:plugin")], {"ZOO_SLOW_PLUGIN_SECONDS": "0.1"})
    assert registry.plugins["slow"].ok
    assert registry.plugins["slow"].seconds >= 0.3
    assert registry.component("dot-copy").plugin == "slow"


def test_slow_registration_counts_and_zero_turns_the_warning_off():
    with pytest.warns(PluginWarning, match="'slow' took"):
        Registry.with_plugins([ep("slow", "plugin_samples:slow")], environ={"ZOO_SLOW_PLUGIN_SECONDS": "0.2"})
    quiet = Registry.with_plugins([ep("slow", "plugin_samples:slow")], environ={"ZOO_SLOW_PLUGIN_SECONDS": "0"})
    assert quiet.plugins["slow"].seconds >= 0.3  # measured, not reported
    fast = Registry.with_plugins([ep("slow", "plugin_samples:slow")], environ={})  # default: 2 s
    assert fast.plugins["slow"].ok


def test_a_bad_threshold_is_reported_and_the_default_used():
    with pytest.warns(PluginWarning, match="ZOO_SLOW_PLUGIN_SECONDS='soon' is not a number of seconds"):
        registry = Registry.with_plugins([ep("dot-copy", "plugin_samples:good")], {"ZOO_SLOW_PLUGIN_SECONDS": "soon"})
    assert registry.plugins["dot-copy"].ok


# -- the command line in pipes and with positional text after options ----------------------


def test_a_closed_pipe_ends_zoo_list_quietly():
    command = [sys.executable, "-m", "zoo.cli.main", "list"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()  # the reader is gone before zoo writes a line
        stderr = process.stderr.read().decode()
    assert process.returncode == CLOSED_PIPE
    assert stderr == ""


def test_zoo_list_piped_into_head():
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{sys.executable}' -m zoo.cli.main list --components | head -1"],
        capture_output=True,
        text=True,
    )
    assert result.stdout.split() == ["COMPONENT", "KIND", "SUMMARY"]
    assert result.stderr == ""
    assert result.returncode in (0, CLOSED_PIPE)  # 0 when zoo wrote everything before head left


@pytest.mark.parametrize(
    ("argv", "positionals"),
    [
        (["translate", "m", "--beam", "2", "a b"], {"model": Path("m"), "text": ["a b"]}),
        (["translate", "m", "one", "--beam", "2", "two"], {"model": Path("m"), "text": ["one", "two"]}),
        (["translate", "--beam", "2", "m", "one"], {"model": Path("m"), "text": ["one"]}),
        (["translate", "m", "--beam", "2", "--", "--not-an-option"], {"text": ["--not-an-option"]}),
        (["tag", "m", "--format", "conll", "the cat"], {"text": ["the cat"]}),
        (["classify", "m", "--probabilities", "good", "--out", "o", "bad"], {"text": ["good", "bad"]}),
        (["vectors", "similar", "v", "king", "--n-best", "3", "queen"], {"words": ["king", "queen"]}),
        (["vectors", "analogy", "v", "--n-best", "3", "a", "b", "c"], {"a": "a", "b": "b", "c": "c"}),
        (["plot", "attention", "m", "--beam", "2", "a b"], {"text": "a b"}),
        (["train", "seq2seq", "--steps", "5"], {"name": "seq2seq"}),  # passthrough: options stay unparsed
    ],
)
def test_positional_arguments_anywhere_among_the_options(argv, positionals):
    args, extra = build_parser().parse_known_args(argv)
    assert {key: getattr(args, key) for key in positionals} == positionals
    assert extra == (["--steps", "5"] if argv[0] == "train" else [])


def test_translate_takes_the_text_after_its_options(tmp_path, capsys):
    from zoo_seq2seq.data import build_vocabs

    src, tgt = build_vocabs([["a", "b", "c"]], [["x", "y", "z"]])
    model = zoo.build("seq2seq", key=jax.random.key(0), vocab={"src": src, "tgt": tgt}, embedding_size=4, hidden_size=4)
    path = str(zoo.save(model, tmp_path / "tiny.safetensors"))
    assert main(["translate", path, "a b", "c", "--beam", "2", "--max-length", "3"]) == 0
    before = capsys.readouterr().out
    assert main(["translate", path, "--beam", "2", "a b", "--max-length", "3", "c"]) == 0
    after = capsys.readouterr().out
    assert after == before
    assert len(after.splitlines()) == 2
