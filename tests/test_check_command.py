"""``zoo check NAME -- PYTEST-ARGS``, run in-process over a plugin installed as a real distribution."""

from __future__ import annotations

import re

import pytest
from kit_harness import component_table, install_plugin, isolated_site

from zoo.cli.check_cmd import split_arguments
from zoo.cli.main import main

NAME = "kit-check-copy"
LUONG = "zoo_attention.multiplicative:LuongGeneralAttention"


@pytest.mark.parametrize(
    ("arguments", "plugins", "rest"),
    [
        (["a", "b"], ["a", "b"], []),
        (["a", "--", "-x", "-k", "foo"], ["a"], ["-x", "-k", "foo"]),
        (["a", "-k", "foo", "--", "-x"], ["a"], ["-k", "foo", "--", "-x"]),
        (["--", "a"], [], ["a"]),
        ([], [], []),
    ],
)
def test_plugin_names_come_before_the_separator_or_the_first_option(arguments, plugins, rest):
    assert split_arguments(arguments) == (plugins, rest)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_plugin(site, NAME, component_table(NAME, "attention", LUONG))
    monkeypatch.chdir(tmp_path)  # no project configuration of pytest applies
    with isolated_site(site):
        yield


def _counts(line: str) -> dict[str, int]:
    return {word: int(n) for n, word in re.findall(r"(\d+) (?:checks )?(passed|skipped|failed|deselected)", line)}


@pytest.mark.parametrize("separator", [["--"], []], ids=["after --", "options directly"])
def test_zoo_check_passes_the_arguments_after_the_names_to_pytest(installed, capsys, separator):
    code = main(["check", NAME, *separator, "-k", "TestComponents or TestEmbedders", "-p", "no:randomly"])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    kit = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    pytest_line = next(line for line in out.splitlines()[::-1] if " passed" in line and "conformance" not in line)
    assert kit.endswith("over 1 components and models of 1 plugins"), kit  # the attention; TestEmbedders has none
    ran, counted = _counts(pytest_line), _counts(kit)
    assert ran["deselected"] > 0, pytest_line  # -k reached pytest: the other classes did not run
    assert counted["passed"] == ran["passed"] >= 6
    assert counted.get("skipped", 0) == ran.get("skipped", 0), (kit, pytest_line)  # no placeholder is counted
    assert counted["failed"] == 0


RAISING = """
from zoo_attention.multiplicative import LuongGeneralAttention


class Raising(LuongGeneralAttention):
    def __init__(self, query_size, key_size, *, key):
        raise RuntimeError("cannot build")
"""


def test_zoo_check_counts_a_check_whose_fixture_fails_as_failed(tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    install_plugin(
        site,
        "kit-raising",
        component_table("kit-raising", "attention", "kit_raising:Raising"),
        modules={"kit_raising": RAISING},
    )
    monkeypatch.chdir(tmp_path)
    with isolated_site(site):
        code = main(["check", "kit-raising", "--", "-k", "TestAttention", "-p", "no:randomly"])
    out = capsys.readouterr().out
    assert code == 1, out[-3000:]
    kit = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    counted = re.search(r"0 checks passed, 0 skipped, (\d+) failed, (\d+) errors, over 1 components and models", kit)
    assert counted, kit
    ran = dict((word, int(n)) for n, word in re.findall(r"(\d+) (failed|errors?)", out.splitlines()[-1]))
    assert ran.get("failed", 0) == int(counted.group(1)), (kit, out.splitlines()[-1])  # the kit counts as pytest
    assert ran.get("errors", ran.get("error")) == int(counted.group(2)) > 0, (kit, out.splitlines()[-1])


def test_zoo_check_names_a_plugin_that_is_not_installed_before_pytest_starts(capsys):
    assert main(["check", "greddy", "--", "-x"]) == 2
    captured = capsys.readouterr()
    assert "no plugin named 'greddy' is installed. Did you mean 'greedy'?" in captured.err
    assert captured.out == ""  # pytest never ran: no collection errors, no summary


def test_zoo_check_takes_its_own_host_options_before_the_separator():
    from zoo.cli.check_cmd import host_options
    from zoo.errors import InvalidParameterError

    assert host_options(["a", "--host", "x", "--every-host", "--", "-v", "--host", "y"]) == (
        ["x"],
        True,
        ["a", "--", "-v", "--host", "y"],
    )
    assert host_options(["a", "--host=x", "-k", "z"]) == (["x"], False, ["a", "-k", "z"])
    with pytest.raises(InvalidParameterError, match="--host needs the name of an architecture"):
        host_options(["a", "--host", "--", "-v"])


def test_zoo_check_dash_v_lists_every_check(installed, capsys):
    code = main(["check", NAME, "--", "-v", "-k", "TestPlugins", "-p", "no:randomly"])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert f"TestPlugins::test_plugin_loads[{NAME}] PASSED" in out, out[-3000:]
