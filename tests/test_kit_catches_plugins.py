"""The conformance kit fails a plugin zoo refuses, one with nothing to check, and a subject whose
every check was skipped, through pytest and through ``zoo check`` (non-zero, with the plugin's error)."""

from __future__ import annotations

import pytest
from kit_harness import component_table, install_plugin, isolated_site, run_kit

from zoo.cli.main import main

GREEDY = "zoo_decoding.greedy:GreedySearch"


def _greedy(name: str, extra: str = "") -> str:
    return component_table(name, "strategy", GREEDY, params={"max_length": 50, "min_length": 0}) + extra


def test_the_kit_fails_a_plugin_whose_table_zoo_refuses(tmp_path):
    run = run_kit(tmp_path, name="kit-unknown-key", tables=_greedy("kit-unknown-key", 'colour = "red"\n'))
    caught = run.assert_caught("test_plugin_loads", "kit-unknown-key", "broken", "unknown keys ['colour']")
    assert caught.outcome == "failed"
    assert run.exit_code == 1, run.output[-2000:]
    assert run.summary.endswith("1 failed, 0 errors, over 0 components and models of 1 plugins"), run.summary


def test_the_kit_fails_a_plugin_that_registers_nothing_to_check(tmp_path):
    run = run_kit(tmp_path, name="kit-empty", tables="")
    run.assert_caught("test_plugin_registers_something_to_check", "kit-empty", "no component, architecture or preset")
    assert run.exit_code == 1


def test_a_subject_whose_every_check_is_skipped_fails_the_run(tmp_path):
    # a greedy search has no n-best list: the one check selected skips, and the run must not pass
    run = run_kit(tmp_path, name="kit-greedy", tables=_greedy("kit-greedy"), select="test_n_best_sorted_and_distinct")
    assert {o.outcome for o in run} == {"skipped"}, run.table()
    assert run.exit_code == 1, run.output[-2000:]
    assert "FAILED kit-greedy: every one of its 1 checks that ran was skipped" in run.output, run.output[-2000:]


@pytest.mark.parametrize(
    ("tables", "words"),
    [
        (_greedy("kit-broken", 'colour = "red"\n'), "unknown keys ['colour']"),
        ("[components.greedy]\nkind = 'strategy'\nfactory = 'x:y'\n", "'greedy' is also registered by 'greedy'"),
    ],
    ids=["broken", "name taken"],
)
def test_zoo_check_of_a_refused_plugin_exits_non_zero_with_its_error(tmp_path, monkeypatch, capsys, tables, words):
    site = tmp_path / "site"
    install_plugin(site, "kit-broken", tables)
    monkeypatch.chdir(tmp_path)
    with isolated_site(site):
        code = main(["check", "kit-broken", "--", "-p", "no:randomly", "-p", "no:xdist"])
    out = capsys.readouterr().out
    assert code == 1, out[-3000:]
    assert words in out, out[-3000:]
