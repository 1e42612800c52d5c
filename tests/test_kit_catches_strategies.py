"""The conformance kit catches every broken decoding-strategy contract it names.

Each mutant of `kit_mutants_strategies` is installed as a real third-party plugin with the
table of the built-in it copies and run through the kit until its first failure: that must
be the check named for the broken contract, with a message naming the contract and the
strategy. Unchanged copies of the three built-ins pass every strategy check.

The default run checks each mutant with the class of its contract (after `TestComponents`);
``pytest -m slow`` runs the mutants of beam-search and sampler contracts through
`TestStrategies` first as well, as ``zoo check`` does.
"""

from __future__ import annotations

import tomllib

import pytest
from kit_harness import run_kit

from zoo.naming.catalogue import catalogue_path

FACTORIES = {
    "greedy": "zoo_decoding.greedy:GreedySearch",
    "beam": "zoo_decoding.beam:BeamSearch",
    "sample": "zoo_decoding.sample:Sampling",
}
CLASSES = {"greedy": ["TestStrategies"], "beam": ["TestStrategies", "TestWidthSearch"]}
CLASSES["sample"] = ["TestStrategies", "TestSamplers"]

# mutant, the built-in it copies, the check that must fail first, words its message must hold
MUTANTS = [
    ("EosFilledTail", "beam", "TestStrategies::test_pad_after_eos_and_lengths", ["pad after eos", "must hold pad"]),
    ("UnsortedSamples", "sample", "TestStrategies::test_scores_sorted_best_first", ["scores sorted", "hypothesis"]),
    ("IgnoresMinLength", "greedy", "TestStrategies::test_min_length_is_respected", ["min_length", "eos at position"]),
    ("KeyFromNumpy", "sample", "TestStrategies::test_same_inputs_same_outputs", ["determinism", "position"]),
    ("LetsKPlusOneFinish", "beam", "TestWidthSearch::test_width_one_without_length_penalty_equals_greedy",
     ["width 1 equals greedy", "runner-up", ".tokens"]),
    ("RepeatsTheBest", "beam", "TestWidthSearch::test_n_best_sorted_and_distinct", ["n-best sorted and distinct"]),
    ("StopsWhenTheTopBeamEnds", "beam", "TestWidthSearch::test_length_penalty_stopping_case", ["no early stop"]),
    ("CountsLengthWithoutEos", "beam", "TestWidthSearch::test_width_covering_every_prefix_is_exact",
     ["exact search", "alpha=0.7"]),
    ("SamplesAtZeroTemperature", "sample", "TestSamplers::test_temperature_to_zero_equals_greedy",
     ["temperature 0 equals greedy", "position"]),
    ("FixedKey", "sample", "TestStrategies::test_the_key_decides_the_draw", ["the key decides the draw"]),
    ("ReusesTheKeyAtEachStep", "sample", "TestStrategies::test_draws_at_different_steps_are_independent",
     ["independent draws at every step", "repeat one token"]),
    ("DrawsSharper", "sample", "TestSamplers::test_draws_follow_the_distribution", ["draws follow the distribution"]),
    ("NucleusDropsTheCrossingToken", "sample", "TestSamplers::test_truncation_keeps_only_the_head",
     ["truncation keeps only the head", "top_p"]),
]  # fmt: skip
LATER = [m for m in MUTANTS if not m[2].startswith("TestStrategies::")]

# a nucleus sampler whose truncation parameter is named `p`: caught when its table declares the role,
# and its truncation check skips (saying why, never passing) when the table does not
RENAMED = {
    "params": {"temperature": 1.0, "top_k": 0, "p": 1.0, "num_samples": 1, "max_length": 50, "min_length": 0},
    "domains": {"temperature": "[0, inf)", "top_k": "[0, inf)", "p": "(0, 1]", "num_samples": "[1, inf)",
                "max_length": "[1, 100000]", "min_length": "[0, inf)"},
    "test": {"num_samples": 3, "top_k": 5, "p": 0.9, "max_length": 6},
}  # fmt: skip
RENAMED_ROLES = {"temperature": "temperature", "top_k": "top_k", "num_samples": "num_samples"}


def _table(builtin: str) -> dict:
    """The built-in's params, test params and domains, for a copy to register as its own."""
    table = tomllib.loads(catalogue_path().read_text(encoding="utf-8"))["components"][builtin]
    return {key: table.get(key) for key in ("params", "test", "domains", "roles")}


def _assert_caught(tmp_path, mutant: str, builtin: str, check: str, words: list[str], classes: list[str]) -> None:
    name = f"kit-{mutant.lower()}"
    run = run_kit(
        tmp_path,
        name=name,
        kind="strategy",
        factory=f"kit_mutants_strategies:{mutant}",
        select=" or ".join(["TestComponents", *classes]),
        args=("-x",),  # what fails after the first failure tells nothing
        **_table(builtin),
    )
    caught = run.assert_caught(check, *words, f"strategy {name!r}")
    assert caught.outcome == "failed", run.table()


@pytest.mark.slow  # one kit run per broken strategy: minutes in all; the unchanged copies stay in the default run
@pytest.mark.parametrize(("mutant", "builtin", "check", "words"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_the_kit_catches_a_broken_strategy(tmp_path, mutant, builtin, check, words):
    _assert_caught(tmp_path, mutant, builtin, check, words, [check.split("::")[0]])


@pytest.mark.slow
@pytest.mark.parametrize(("mutant", "builtin", "check", "words"), LATER, ids=[m[0] for m in LATER])
def test_the_kit_catches_a_broken_strategy_with_every_strategy_check(tmp_path, mutant, builtin, check, words):
    _assert_caught(tmp_path, mutant, builtin, check, words, CLASSES[builtin])


@pytest.mark.parametrize("builtin", sorted(FACTORIES))
def test_an_unchanged_copy_passes(tmp_path, builtin):
    name = f"kit-{builtin}-copy"
    run = run_kit(
        tmp_path,
        name=name,
        kind="strategy",
        factory=FACTORIES[builtin],
        select=" or ".join(["TestComponents", *CLASSES[builtin]]),
        **_table(builtin),
    )
    run.assert_passes()
    ran = {o.id.split("::")[0] for o in run if o.outcome == "passed"}
    assert {"TestComponents", *CLASSES[builtin]} <= ran, run.table()
    for check in [check for _, b, check, _ in MUTANTS if b == builtin]:  # each passes, in every parametrization
        outcomes = [o.outcome for o in run if o.is_named(check)]
        assert outcomes and set(outcomes) == {"passed"}, f"{check}: {outcomes}\n{run.table()}"


def _renamed(tmp_path, mutant: str, roles: dict, select: str = "TestComponents or TestSamplers"):
    return run_kit(
        tmp_path,
        name=f"kit-{mutant.lower()}",
        kind="strategy",
        factory=f"kit_mutants_strategies:{mutant}",
        select=select,
        roles=roles,
        **RENAMED,
    )


def test_the_kit_catches_a_truncation_parameter_that_does_nothing_by_its_declared_role(tmp_path):
    run = _renamed(tmp_path, "NucleusNamedPIgnored", {**RENAMED_ROLES, "top_p": "p"})
    run.assert_caught("TestSamplers::test_truncation_keeps_only_the_head", "truncation keeps only the head", "p=0.75")


@pytest.mark.slow
def test_a_correct_renamed_truncation_parameter_passes_by_its_declared_role(tmp_path):
    run = _renamed(tmp_path, "NucleusNamedP", {**RENAMED_ROLES, "top_p": "p"})
    run.assert_passes()
    assert run.check("test_truncation_keeps_only_the_head").outcome == "passed", run.table()


def test_an_undeclared_truncation_role_is_skipped_with_its_reason_not_passed(tmp_path):
    roles = {"temperature": "temperature", "num_samples": "num_samples"}
    run = _renamed(tmp_path, "NucleusNamedPIgnored", roles, select="test_truncation_keeps_only_the_head")
    outcome = run.check("test_truncation_keeps_only_the_head")
    assert outcome.outcome == "skipped" and 'roles = { top_p = "p" }' in outcome.message, run.table()
