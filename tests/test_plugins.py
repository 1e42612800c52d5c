"""Plugin loading in isolation, through synthetic entry points."""

from importlib.metadata import EntryPoint

import pytest

from zoo.errors import PluginConflictError, PluginError, UnknownNameError
from zoo.naming.loader import PluginWarning, discover_entry_points
from zoo.naming.registry import Registry


def ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group="zoo.plugins")


BUILTINS = discover_entry_points()  # the installed plugins


def test_a_good_plugin_registers_its_names():
    registry = Registry.with_plugins([ep("dot-copy", "plugin_samples:good")], environ={})
    assert registry.plugins["dot-copy"].ok
    assert registry.plugins["dot-copy"].names == ("dot-copy",)
    assert registry.component("dot-copy").plugin == "dot-copy"


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("plugin_samples_broken:plugin", "ModuleNotFoundError: No module named 'a_dependency_that_is_not_installed'"),
        ("plugin_samples:raises", "RuntimeError: cannot reach the model server"),
        ("plugin_samples:misspelt", r"unknown hooks \['zoo_register_tabels'\]"),
        ("plugin_samples:bad_toml", "invalid TOML"),
        ("plugin_samples:claims_other", "cannot register names for 'lstm'"),
        ("plugin_samples:nothing_here", "AttributeError"),
    ],
)
def test_a_broken_plugin_is_reported_and_the_rest_keep_working(value, error):
    with pytest.warns(PluginWarning, match=rf"zoo plugin 'broken' failed to load.*{error}"):
        registry = Registry.with_plugins([ep("broken", value), *BUILTINS], environ={})
    record = registry.plugins["broken"]
    assert record.status == "broken"
    assert error.split(":")[0].replace("\\", "") in record.error
    assert registry.plugins["seq2seq"].ok
    assert registry.describe("seq2seq+luong-dot").name == "seq2seq+luong-dot"
    assert "dot-copy" not in registry.components  # nothing half-registered


def test_strict_mode_makes_a_broken_plugin_fatal():
    with pytest.raises(PluginError, match="'broken' failed to load"):
        Registry.with_plugins([ep("broken", "plugin_samples:raises")], environ={"ZOO_STRICT_PLUGINS": "1"})


def test_disable_and_allow_lists():
    eps = [ep("dot-copy", "plugin_samples:good"), *BUILTINS]
    blocked = Registry.with_plugins(eps, environ={"ZOO_DISABLE_PLUGINS": "dot-copy, luong-dot"})
    assert blocked.plugins["dot-copy"].status == "disabled"
    assert "dot-copy" not in blocked.components
    with pytest.raises(PluginError, match=r"plugin 'luong-dot', which is disabled \(ZOO_DISABLE_PLUGINS\)"):
        blocked.describe("seq2seq+luong-dot")
    allowed = Registry.with_plugins(eps, environ={"ZOO_LOAD_PLUGINS": "seq2seq"})
    assert [r.name for r in allowed.plugins.values() if r.ok] == ["seq2seq"]
    assert allowed.plugins["luong-dot"].status == "not allowed"
    none = Registry.with_plugins(eps, environ={"ZOO_LOAD_PLUGINS": ""})
    assert not any(r.ok for r in none.plugins.values())


def test_two_plugins_claiming_one_name_are_both_named():
    eps = [ep("first", "plugin_samples:good"), ep("second", "plugin_samples:same_name"), *BUILTINS]
    with pytest.warns(PluginWarning, match="'first' and 'second' both register 'dot-copy'"):
        registry = Registry.with_plugins(eps, environ={})
    with pytest.raises(PluginConflictError, match="'first', 'second'"):
        registry.describe("seq2seq+dot-copy")
    assert registry.describe("seq2seq+luong-dot").name == "seq2seq+luong-dot"


def test_two_entry_points_with_one_name_are_both_disabled_and_the_rest_load():
    eps = [ep("dup", "plugin_samples:good"), ep("dup", "plugin_samples:same_name"), *BUILTINS]
    with pytest.warns(PluginWarning, match=r"'dup' is disabled: its entry-point name is declared twice"):
        registry = Registry.with_plugins(eps, environ={})
    assert registry.plugins["dup"].status == "in conflict"
    assert "plugin_samples:good" in registry.plugins["dup"].error
    assert "plugin_samples:same_name" in registry.plugins["dup"].error
    assert "dot-copy" not in registry.components
    assert registry.describe("seq2seq+luong-dot").name == "seq2seq+luong-dot"


def test_every_builtin_plugin_loads_from_the_installed_entry_points(registry):
    names = {e.name for e in discover_entry_points()}
    assert {"seq2seq", "luong-general", "bahdanau", "lstm", "greedy"} <= names
    broken = {r.name: r.error for r in registry.plugins.values() if r.distribution == "zoo" and not r.ok}
    assert broken == {}


def test_uninstalled_catalogue_entry_explains_itself():
    registry = Registry.with_plugins([e for e in BUILTINS if e.name != "bahdanau"], environ={})
    with pytest.raises(PluginError, match="comes from plugin 'bahdanau', which is not installed"):
        registry.describe("seq2seq+bahdanau")
    with pytest.raises(UnknownNameError, match="unknown component 'bahdanau2'"):
        registry.describe("seq2seq+bahdanau2")


def test_the_weights_hook_resolves_a_tag(tmp_path, getkey):
    from plugin_samples import ProvidesWeights

    import zoo

    registry = Registry.with_plugins(environ={})
    model = zoo.build("seq2seq", key=getkey(), registry=registry, hidden_size=4, src_vocab_size=9, tgt_vocab_size=9)
    path = zoo.save(model, tmp_path / "tiny.safetensors")
    registry.manager.register(ProvidesWeights(path), name="weights")
    loaded = zoo.build("seq2seq.tiny", key=getkey(), registry=registry)
    assert loaded.spec == model.spec
    with pytest.raises(UnknownNameError, match=r"no plugin provides weights for seq2seq.other"):
        zoo.build("seq2seq.other", key=getkey(), registry=registry)
