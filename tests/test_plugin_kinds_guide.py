"""docs/plugins.md's worked examples are plugins: its encoder and strategy, and its embedder, cell,
decoder and architecture (with its recipe), written from the page into real distributions, pass
``zoo check`` (a few component checks and ``zoo train`` by default; every check in every host: slow)."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import numpy as np
import pytest
from kit_harness import isolated_site

from zoo.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
SECTION = "Worked examples: an encoder and a strategy"
MORE = "Worked examples: an embedder, a cell, a decoder and an architecture"


def example_files(section_title: str = SECTION) -> dict[str, str]:
    """``{path: source}`` of the section's code blocks whose first line is ``# <path>``."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = page.split(f"\n## {section_title}\n", 1)[1].split("\n## ", 1)[0]
    files = {}
    for body in FENCE.findall(section):
        first, _, rest = body.partition("\n")
        if re.fullmatch(r"# [\w./-]+\.py", first):
            files[first[2:]] = rest
    return files


def _install(tmp_path, monkeypatch, files, package, dist, entry):
    site = tmp_path / "site"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("", encoding="utf-8")
    for path, source in files.items():
        (site / path).write_text(source, encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[zoo.plugins]\n{entry} = {package}.plugin\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no project configuration of pytest applies
    return site


@pytest.fixture
def site(tmp_path, monkeypatch):
    files = example_files()
    assert set(files) == {"zoo_kinds/bag.py", "zoo_kinds/nucleus.py", "zoo_kinds/plugin.py"}, sorted(files)
    with isolated_site(_install(tmp_path, monkeypatch, files, "zoo_kinds", "zoo-kinds-example", "kinds-example")):
        yield


MORE_FILES = {"scaled.py", "elman.py", "decoder.py", "bigram.py", "recipe.py", "plugin.py"}


@pytest.fixture
def more_site(tmp_path, monkeypatch):
    files = example_files(MORE)
    assert set(files) == {f"zoo_more/{name}" for name in MORE_FILES}, sorted(files)
    with isolated_site(_install(tmp_path, monkeypatch, files, "zoo_more", "zoo-more-kinds", "more-kinds")):
        yield


def _check(capsys, *pytest_args: str, plugin: str = "kinds-example") -> tuple[int, str]:
    code = main(["check", plugin, "--", "-p", "no:randomly", "-p", "no:xdist", "-rs", *pytest_args])
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


def test_the_worked_embedder_and_cell_pass_their_own_checks(more_site, capsys):
    code, out = _check(capsys, "-k", "TestEmbedders or TestCells", plugin="more-kinds")
    assert code == 0, out[-4000:]
    summary = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    assert " 0 failed, 0 errors" in summary, summary
    assert summary.endswith("over 2 components and models of 1 plugins"), summary  # -k left out TestPlugins
    assert "declares no dropout role" not in out, out[-4000:]


def test_the_worked_architecture_trains_with_zoo_train(more_site, fresh_default_registry, tmp_path, capsys):
    import zoo

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\na cat and a dog\n", encoding="utf-8")
    out = tmp_path / "bigram.safetensors"
    args = ["train", "bigram", "--data", str(corpus), "--out", str(out), "--steps", "30", "--quiet"]
    assert main(args) == 0, capsys.readouterr()
    model = zoo.load(out)
    assert type(model).__name__ == "BigramModel" and model.spec["vocab_size"] == 9  # the corpus's words
    batch = {"ids": np.array([[1, 2, 3, 4]], np.int32), "ids_mask": np.ones((1, 4), bool)}
    fresh = zoo.build("bigram", key=jax.random.key(0), vocab_size=9)
    assert float(model.loss(batch)) != float(fresh.loss(batch))  # training moved the parameters


@pytest.mark.slow
def test_the_more_worked_examples_pass_zoo_check_in_every_host(more_site, capsys):
    code, out = _check(capsys, "-v", plugin="more-kinds")
    assert code == 0, out[-4000:]
    summary = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    assert " 0 failed, 0 errors" in summary, summary
    for host in ("seq2seq+scaled", "seq2seq+elman", "seq2seq+one-layer", "bigram"):
        assert f"[{host}] PASSED" in out, (host, out[-4000:])  # the checks ran in that host
