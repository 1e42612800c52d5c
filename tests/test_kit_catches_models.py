"""The kit catches each broken model and infrastructure contract with the check named for it.

Every mutant (`kit_mutants_models`) is installed as a real third-party plugin and run through the
kit in-process (`kit_harness.run_kit`); the first check to fail must be the one named for the
broken contract, with a message naming it. The unchanged copy passes every check.
"""

from __future__ import annotations

import jax
import pytest
from kit_harness import run_kit
from kit_mutants_models import X64_AT_IMPORT, glove_table

MUTANTS = "kit_mutants_models"
LUONG = "zoo_attention.multiplicative:LuongGeneralAttention"
MODEL_CONTRACTS = [
    "test_jax_configuration_is_unchanged",
    "test_init_traces_under_eval_shape",
    "test_every_parameter_depends_on_the_key",
    "test_parameters_and_loss_are_float32",
    "test_shapes_follow_the_spec",
]


def run_model(tmp_path, name: str, cls: str):
    return run_kit(tmp_path, name=name, tables=glove_table(name, f"{MUTANTS}:{cls}"))


def test_an_unchanged_model_passes_every_check_and_none_passes_vacuously(tmp_path):
    run = run_model(tmp_path, "kit-glove-copy", "CopiedGloVe")
    run.assert_passes()
    for check in MODEL_CONTRACTS:  # the constants of the mutants' module were perturbed, and changed nothing
        assert run.check(f"TestModels::{check}").outcome == "passed", run.table()
    assert run.summary.endswith("over 1 components and models of 1 plugins"), run.summary  # no placeholder counted


@pytest.mark.parametrize(
    ("cls", "check", "words"),
    [
        ("FixedKeyGloVe", "test_every_parameter_depends_on_the_key", ["parameters from the key", "context_bias"]),
        ("NumPyKeyGloVe", "test_init_traces_under_eval_shape", ["traceable __init__", "NumPy", "zoo.load"]),
        ("HalfPrecisionGloVe", "test_parameters_and_loss_are_float32", ["float32 parameters", "word", "bfloat16"]),
        (
            "ConstantWidthGloVe",
            "test_shapes_follow_the_spec",
            ["shapes determined by the spec alone", "kit_mutants_models.VECTOR_WIDTH", "register it"],
        ),
        ("X64GloVe", "test_jax_configuration_is_unchanged", ["JAX's global configuration", "jax_enable_x64"]),
    ],
)
def test_a_broken_model_fails_the_check_named_for_its_contract(tmp_path, cls, check, words):
    name = f"kit-{cls.lower()}"
    run = run_model(tmp_path, name, cls)
    caught = run.assert_caught(f"TestModels::{check}", *words, f"model {name!r}")
    assert caught.outcome == "failed"
    assert not jax.config.values["jax_enable_x64"]  # the harness put the configuration back


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        ("ConstantSizeAttention", ["module constant kit_mutants_models.ATTENTION_SIZE = 5", "register it"]),
        ("DefaultSizeAttention", ["the default attention_size=7 of DefaultSizeAttention.__init__", "register it"]),
    ],
)
def test_a_component_sized_outside_its_spec_is_caught(tmp_path, cls, words):
    name = f"kit-{cls.lower()}"
    run = run_kit(tmp_path, name=name, kind="attention", factory=f"{MUTANTS}:{cls}", select="TestComponents")
    run.assert_caught("TestComponents::test_shapes_follow_the_spec", "shapes determined by the spec alone", *words)


@pytest.mark.parametrize(
    ("flag", "value"),
    [("jax_enable_x64", True), ("jax_default_matmul_precision", "highest"), ("jax_numpy_rank_promotion", "raise")],
)
def test_a_plugin_changing_jax_configuration_at_import_is_caught_first(tmp_path, flag, value):
    before = jax.config.values[flag]
    run = run_kit(
        tmp_path,
        name="kit-configures",
        kind="attention",
        factory=LUONG,
        prelude=f"import jax\njax.config.update({flag!r}, {value!r})\n",
        select="TestComponents",
    )
    run.assert_caught(
        "TestComponents::test_jax_configuration_is_unchanged",
        "JAX's global configuration unchanged",
        "plugin 'kit-configures' changed it when loading",
        f"{flag} {before!r} -> {value!r}",
    )
    assert jax.config.values[flag] == before


def test_a_factory_module_changing_jax_configuration_is_caught_first(tmp_path):
    run = run_kit(
        tmp_path,
        name="kit-configures-late",
        kind="attention",
        factory="kit_configuring:ConfiguringAttention",
        modules={"kit_configuring": X64_AT_IMPORT.format(flag="jax_enable_x64", value=True)},
        select="TestComponents",
    )
    run.assert_caught(
        "TestComponents::test_jax_configuration_is_unchanged",
        "when importing and building 'kit-configures-late'",
        "jax_enable_x64 False -> True",
    )
