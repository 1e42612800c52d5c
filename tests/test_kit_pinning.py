"""A plugin's own test suite pins its component: ``class TestMine(AttentionTests): component = "luong-dot"``."""

from __future__ import annotations

import sys
import textwrap

import pytest

AUTHORS_TESTS = """
import zoo.testing


class TestMine(zoo.testing.AttentionTests):
    component = "luong-dot"


class TestMineInAModel(zoo.testing.ModelTests):
    component = "luong-dot"


class TestEveryAttention(zoo.testing.AttentionTests):
    pass
"""


class Collected:
    """A pytest plugin object recording the ids of the items collected, of those that ran, and the
    collection errors."""

    def __init__(self):
        self.ids: list[str] = []
        self.errors: list[str] = []
        self.ran: list[str] = []

    def pytest_collection_modifyitems(self, items):
        self.ids = [item.nodeid.split("::", 1)[1] for item in items]

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.ran.append(report.nodeid.split("::", 1)[1])

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(str(report.longrepr))


def collect(tmp_path, monkeypatch, source: str, *args: str, select: str = "") -> tuple[int, Collected]:
    """Run pytest in-process on `source` as a test module of its own (a fresh name: no module cached)."""
    module = f"test_{tmp_path.name}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    monkeypatch.chdir(tmp_path)  # no project configuration of pytest applies
    collected = Collected()
    argv = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", f"{module}.py{select}"]
    try:
        code = pytest.main([*argv, *args], plugins=[collected])
    finally:
        sys.modules.pop(module, None)
    return int(code), collected


def subjects(ids: list[str], cls: str) -> set[str]:
    return {i.split("[", 1)[1].rstrip("]") for i in ids if i.startswith(f"{cls}::") and "[" in i}


def test_a_pinned_class_checks_only_its_component_and_the_models_hosting_it(tmp_path, monkeypatch):
    code, collected = collect(tmp_path, monkeypatch, AUTHORS_TESTS, "--collect-only")
    assert code == 0, collected.errors
    assert subjects(collected.ids, "TestMine") == {"luong-dot"}
    assert subjects(collected.ids, "TestMineInAModel") == {"seq2seq+luong-dot"}
    every = subjects(collected.ids, "TestEveryAttention")  # unpinned: every installed attention, as before
    assert {"luong-dot", "luong-general", "bahdanau"} <= every


def test_a_pinned_class_runs_its_checks(tmp_path, monkeypatch):
    code, collected = collect(tmp_path, monkeypatch, AUTHORS_TESTS, "-k", "masked or float32", select="::TestMine")
    assert code == 0
    assert len(collected.ran) >= 2 and all(i.startswith("TestMine::") for i in collected.ran), collected.ran
    assert all(i.endswith("[luong-dot]") for i in collected.ran), collected.ran


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("luong-dott", "TestMine.component = 'luong-dott': no installed plugin registers 'luong-dott'"),
        ("lstm", "TestMine.component = 'lstm': 'lstm' is a cell component, but TestMine checks attention components"),
        ("seq2seq", "'seq2seq' is a model, but TestMine checks attention components"),
    ],
)
def test_a_pin_naming_nothing_installed_or_another_kind_is_an_error(tmp_path, monkeypatch, pin, message):
    source = f"import zoo.testing\n\n\nclass TestMine(zoo.testing.AttentionTests):\n    component = {pin!r}\n"
    code, collected = collect(tmp_path, monkeypatch, source, "--collect-only")
    assert code != 0
    assert any(message in error for error in collected.errors), collected.errors
