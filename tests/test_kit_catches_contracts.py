"""The conformance kit checks the contracts that hold whatever a component's sizes and names:
``key=None`` is inference, the context of an attention has its declared width, and a component
is tested in every built-in host with its own test values, a host that cannot take a correct
component saying so (a skip naming the host), never failing the component."""

from __future__ import annotations

import tomllib

import pytest
from kit_harness import run_kit

from zoo.naming.catalogue import catalogue_path

BUILTINS = tomllib.loads(catalogue_path().read_text(encoding="utf-8"))["components"]


def _copy(tmp_path, mutant: str, base: str, select: str, **overrides):
    table = {key: BUILTINS[base].get(key) for key in ("params", "test", "domains", "roles")}
    return run_kit(
        tmp_path,
        name=f"kit-{mutant.lower()}",
        kind=BUILTINS[base]["kind"],
        factory=f"kit_mutants_components:{mutant}",
        select=select,
        **{**table, **overrides},
    )


def test_the_kit_catches_dropout_drawn_from_a_fixed_key_without_a_key(tmp_path):
    run = _copy(tmp_path, "FixedDropoutKey", "recurrent", "TestComponents or TestEncoders")
    run.assert_caught("test_key_none_is_inference", "key=None is inference", "dropout=0.5 against dropout=0")


UNDECLARED = {"roles": {}, "test": {**BUILTINS["recurrent"]["test"], "dropout": 0.5}}
"""The recurrent encoder's table with its dropout rate at work in its test values but no dropout role."""


def test_without_a_dropout_role_the_kit_catches_a_fixed_key_by_its_draws(tmp_path):
    run = _copy(tmp_path, "FixedDropoutKey", "recurrent", "TestEncoders and test_key_none_is_inference", **UNDECLARED)
    run.assert_caught("test_key_none_is_inference", "key=None is inference", "jax.random.key(0)", "fixed key")


def test_without_a_dropout_role_a_correct_encoder_passes_the_behavioural_check(tmp_path):
    table = {key: BUILTINS["recurrent"].get(key) for key in ("params", "domains")}
    run = run_kit(
        tmp_path,
        name="kit-undeclared",
        kind="encoder",
        factory=BUILTINS["recurrent"]["factory"],
        select="TestEncoders and test_key_none_is_inference",
        **table,
        **UNDECLARED,
    )
    assert run.check("test_key_none_is_inference").outcome == "passed", run.table()  # exercised, not skipped


def test_the_kit_catches_a_context_of_the_wrong_width(tmp_path):
    run = _copy(tmp_path, "ContextOfKeys", "luong-general", "TestComponents or TestAttention")
    run.assert_caught("test_context_width_is_context_size", "output width", "key_size=4", "context_size")


HEADS = {
    "params": {"hidden_size": 8, "num_heads": 2, "num_layers": 1, "dropout": 0.0},
    "domains": {"hidden_size": "[1, inf)", "num_heads": "[1, inf)", "num_layers": "[1, 64]", "dropout": "[0, 1)"},
    "roles": {"dropout": "dropout"},
}


def _heads(tmp_path, test: dict, *args: str):
    return run_kit(
        tmp_path,
        name="kit-heads",
        kind="encoder",
        factory="kit_mutants_components:HeadsEncoder",
        test=test,
        select="TestPlugins or TestComponents or (TestModels and test_builds_a_final_model)",
        args=args,
        **HEADS,
    )


@pytest.mark.slow
def test_a_component_s_test_values_override_a_host_s_fixed_sizes(tmp_path):
    # bilstm-tagger fixes its chars encoder's hidden_size at 25 (not a multiple of 2 heads): the
    # encoder's own test values (hidden_size 8) take its place, in each of the host's two slots
    run = _heads(tmp_path, {"hidden_size": 8, "num_heads": 2}, "--zoo-host", "bilstm-tagger")
    run.assert_passes()
    built = {o.id for o in run if o.check == "test_builds_a_final_model" and o.outcome == "passed"}
    assert built == {
        "TestModels::test_builds_a_final_model[bilstm-tagger+chars=kit-heads]",
        "TestModels::test_builds_a_final_model[bilstm-tagger+encoder=kit-heads]",
    }, run.table()


@pytest.mark.slow
def test_a_host_that_cannot_take_a_correct_component_says_so_and_the_component_passes(tmp_path):
    run = _heads(tmp_path, {"num_heads": 2})  # hidden_size left to each host: 25 in bilstm-tagger's chars
    run.assert_passes()
    assert run.exit_code == 0, run.output[-2000:]
    refused = run.check("TestModels::test_builds_a_final_model[bilstm-tagger+chars=kit-heads]")
    assert refused.outcome == "skipped", run.table()
    for words in ("host 'bilstm-tagger' cannot take encoder 'kit-heads'", "'hidden_size': 25", "not a fault"):
        assert words in refused.message, refused.message
    hosts = {o.id.split("[")[1].split("+")[0] for o in run if o.check == "test_builds_a_final_model"}
    assert hosts == {"bilstm-tagger", "elmo", "seq2seq", "textcnn"}, run.table()  # every built-in host
    assert run.check("TestModels::test_builds_a_final_model[bilstm-tagger+encoder=kit-heads]").outcome == "passed"


def test_an_unknown_host_is_a_usage_error(tmp_path):
    run = _heads(tmp_path, {"num_heads": 2}, "--zoo-host", "no-such-arch")
    assert run.exit_code != 0 and "--zoo-host: no architecture named ['no-such-arch']" in run.output, run.output[-2000:]


def test_a_multiples_declaration_is_validated():
    from zoo.errors import RegistryError
    from zoo.naming.tables import read_tables

    base = '[components.x]\nkind = "encoder"\nfactory = "m:X"\nparams = { hidden_size = 8, num_heads = 2 }\n'
    entry = read_tables(base + 'multiples = { hidden_size = "num_heads" }\n', plugin="x").components["x"]
    assert entry.multiples == {"hidden_size": "num_heads"}
    with pytest.raises(RegistryError, match=r"multiples.hidden_size: 'heads' is not an integer hyperparameter"):
        read_tables(base + 'multiples = { hidden_size = "heads" }\n', plugin="x")
    with pytest.raises(RegistryError, match=r"test values break the declaration: hidden_size=8 is not a multiple"):
        read_tables(base + 'multiples = { hidden_size = "num_heads" }\ntest = { num_heads = 3 }\n', plugin="x")


@pytest.mark.slow
def test_a_declared_multiple_picks_the_host_sizes_and_the_component_passes_in_every_host(tmp_path):
    from kit_harness import component_table

    tables = component_table(
        "kit-heads", "encoder", "kit_mutants_components:HeadsEncoder", test={"num_heads": 2}, **HEADS
    )
    run = run_kit(
        tmp_path,
        name="kit-heads",
        tables=tables + 'multiples = { hidden_size = "num_heads" }\n',
        select="TestPlugins or TestComponents or (TestModels and test_builds_a_final_model)",
    )
    run.assert_passes()
    # bilstm-tagger fixes its chars encoder's hidden_size to 25; the declaration gives it the component's 8
    assert run.check("TestModels::test_builds_a_final_model[bilstm-tagger+chars=kit-heads]").outcome == "passed"
