"""docs/plugins.md's worked examples are a plugin: its encoder and strategy, written from the page
into a real distribution, pass ``zoo check`` (component checks by default; every host: slow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kit_harness import isolated_site

from zoo.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
SECTION = "Worked examples: an encoder and a strategy"


def example_files() -> dict[str, str]:
    """``{path: source}`` of the section's code blocks whose first line is ``# <path>``."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = page.split(f"\n## {SECTION}\n", 1)[1].split("\n## ", 1)[0]
    files = {}
    for body in FENCE.findall(section):
        first, _, rest = body.partition("\n")
        if re.fullmatch(r"# [\w./-]+\.py", first):
            files[first[2:]] = rest
    return files


@pytest.fixture
def site(tmp_path, monkeypatch):
    files = example_files()
    assert set(files) == {"zoo_kinds/bag.py", "zoo_kinds/nucleus.py", "zoo_kinds/plugin.py"}, sorted(files)
    site = tmp_path / "site"
    (site / "zoo_kinds").mkdir(parents=True)
    (site / "zoo_kinds" / "__init__.py").write_text("", encoding="utf-8")
    for path, source in files.items():
        (site / path).write_text(source, encoding="utf-8")
    info = site / "zoo_kinds_example-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zoo-kinds-example\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[zoo.plugins]\nkinds-example = zoo_kinds.plugin\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no project configuration of pytest applies
    with isolated_site(site):
        yield


def _check(capsys, *pytest_args: str) -> tuple[int, str]:
    code = main(["check", "kinds-example", "--", "-p", "no:randomly", "-p", "no:xdist", "-rs", *pytest_args])
    return code, capsys.readouterr().out


def test_the_worked_encoder_and_strategy_pass_their_component_checks(site, capsys):
    code, out = _check(capsys, "-k", "not TestModels and not TestCausalModels")
    assert code == 0, out[-4000:]
    summary = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    assert " 0 failed, 0 errors" in summary and "over 2 components" in summary, summary
    for skip in ("declares no dropout role", "declares no 'temperature' role", "declares no truncation role"):
        assert skip not in out, out[-4000:]  # every role the checks of these two need is declared


@pytest.mark.slow
def test_the_worked_examples_pass_zoo_check_in_every_host(site, capsys):
    code, out = _check(capsys, "-v")
    assert code == 0, out[-4000:]
    summary = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    assert " 0 failed, 0 errors" in summary, summary
    for host in ("bilstm-tagger+chars=bag", "elmo+bag", "seq2seq+bag", "textcnn+bag", "seq2seq+nucleus"):
        assert f"[{host}] PASSED" in out, (host, out[-4000:])  # the checks ran in that host
