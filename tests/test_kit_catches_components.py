"""The conformance kit catches each broken component contract by the check named for it.

Every mutant in `kit_mutants_components` is a built-in with one contract broken, installed as a
real third-party plugin with the built-in's own table (hyperparameters, domains, test values) and
run through the kit's component checks: the first check to fail must be the one named for that
contract, with a message that names the contract, the component and the leaf or position at
fault. An unchanged copy of each built-in passes every check, and the checks the mutants are
caught by run on it (so none of them passes by being skipped).
"""

from __future__ import annotations

import re
import tomllib

import pytest
from kit_harness import run_kit

from zoo import interfaces, testing
from zoo.naming.catalogue import catalogue_path

BUILTINS = tomllib.loads(catalogue_path().read_text(encoding="utf-8"))["components"]
KIT_CLASS = {"attention": "TestAttention", "cell": "TestCells", "embedder": "TestEmbedders"}


def run_mutant(tmp_path, mutant: str, base: str, name: str):
    """`mutant` (a class of `kit_mutants_components`) as plugin `name`, with built-in `base`'s table,
    through the kit's checks for every component and for its kind."""
    table = BUILTINS[base]
    return run_kit(
        tmp_path,
        name=name,
        kind=table["kind"],
        factory=f"kit_mutants_components:{mutant}",
        params=table.get("params"),
        domains=table.get("domains"),
        test=table.get("test"),
        select=f"TestComponents or {KIT_CLASS[table['kind']]}",
    )


CAUGHT = [
    # (mutant, built-in it copies, check that must fail first, words its message must hold)
    ("MeanOnFullMask", "luong-general", "test_fully_masked_memory_gives_zero_weights_and_context",
     ["fully masked memory", "exactly 0", "position [0]"]),
    ("CachesKeys", "luong-general", "test_is_stateless", ["statelessness", "memory A", "differs at position"]),
    ("KeepsLastWeights", "luong-general", "test_is_stateless", ["statelessness", "last_weights"]),
    ("FixedKeyBias", "rnn", "test_every_parameter_depends_on_the_key", ["parameters from the key", "parameter bias"]),
    ("ReverseBlind", "rnn", "test_reverse_with_padding_starts_at_the_last_real_position",
     ["reverse=True with padding", "row 0", "differs at position"]),
    ("NumpyInit", "token-embedding", "test_init_traces_under_eval_shape",
     ["traceable __init__", "TracerArrayConversionError", "NumPy"]),
    ("NoisyCalls", "token-embedding", "test_same_inputs_same_outputs", ["determinism", "differs at position"]),
    ("HalfPrecisionTable", "token-embedding", "test_parameters_are_float32",
     ["float32 parameters", "parameter weight", "bfloat16"]),
    ("HalfPrecisionOutputs", "token-embedding", "test_outputs_are_float32", ["float32 outputs", "output", "bfloat16"]),
]  # fmt: skip


@pytest.mark.parametrize(("mutant", "base", "check", "words"), CAUGHT, ids=[c[0] for c in CAUGHT])
def test_each_broken_contract_is_caught_by_its_check(tmp_path, mutant, base, check, words):
    name = "kit-" + "".join(f"-{c.lower()}" if c.isupper() else c for c in mutant).strip("-")
    run = run_mutant(tmp_path, mutant, base, name)
    caught = run.assert_caught(check, name, *words)
    assert caught.outcome == "failed", run.table()
    passed = [o for o in run if o.outcome == "passed"]
    assert any(o.id.startswith("TestComponents::") for o in passed), f"no component check passed:\n{run.table()}"


CONTROLS = [("UnchangedAttention", "luong-general"), ("UnchangedCell", "rnn"), ("UnchangedEmbedder", "token-embedding")]


@pytest.mark.parametrize(("control", "base"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_an_unchanged_copy_passes_every_check(tmp_path, control, base):
    run = run_mutant(tmp_path, control, base, f"kit-{base}-copy")
    run.assert_passes()
    kind = BUILTINS[base]["kind"]
    for _, mutant_base, check, _ in CAUGHT:
        if BUILTINS[mutant_base]["kind"] == kind:
            assert run.check(check).outcome == "passed", run.table()


def test_each_interface_names_the_checks_that_enforce_it():
    """The contracts in `zoo.interfaces` and the kit's checks are kept side by side: every check an
    interface's docstring names exists in its kit class, and every check of the class is named."""
    pairs = {
        interfaces.Embedder: testing.EmbedderTests,
        interfaces.RecurrentCell: testing.CellTests,
        interfaces.Encoder: testing.EncoderTests,
        interfaces.Attention: testing.AttentionTests,
    }
    for interface, kit in pairs.items():
        named = set(re.findall(r"``(test_\w+)``", interface.__doc__))
        checks = {n for n in dir(kit) if n.startswith("test_") and callable(getattr(kit, n))}
        assert named - checks == set(), f"{interface.__name__} names checks the kit lacks: {named - checks}"
        unnamed = {n for n in checks - named if not n.startswith(("test_is_an_", "test_is_a_"))}
        assert not unnamed, f"{interface.__name__}'s docstring does not name the checks {sorted(unnamed)}"
