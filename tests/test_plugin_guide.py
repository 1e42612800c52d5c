"""The plugin guide is a fixture: the "Writing a plugin" code of docs/plugins.md is a complete plugin that installs,
passes the conformance kit and builds into seq2seq, so the guide cannot drift from zoo.

Beside it, `tests/fixtures/zoo-textbook-mha` is multi-head attention written from the guide alone
(per-head projections, ``[heads, src]`` weights, an output projection to its own `context_size`):
both are installed as real distributions and checked in one run of the kit.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kit_harness import isolated_site

import zoo
from zoo.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
MHA = Path(__file__).parent / "fixtures" / "zoo-textbook-mha"
FENCE = re.compile(r"^( *)```(python|toml)\n(.*?)^\1```$", re.S | re.M)


def guide_files() -> dict[str, str]:
    """``{path: source}`` of every code block of the guide whose first line is ``# <path>``."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = page.split("\n## Writing a plugin\n", 1)[1].split("\n## ", 1)[0]
    files = {}
    for indent, _, body in FENCE.findall(section):
        lines = [line[len(indent) :] for line in body.splitlines()]
        if lines and re.fullmatch(r"# [\w./-]+\.(py|toml)", lines[0]):
            files[lines[0][2:]] = "\n".join(lines[1:]).lstrip("\n") + "\n"
    return files


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The guide's plugin, written from docs/plugins.md, and the textbook MHA, pip-installed into a target folder."""
    files = guide_files()
    assert set(files) == {"pyproject.toml", "zoo_scaled_dot/attention.py", "zoo_scaled_dot/plugin.py"}, sorted(files)
    for path, source in files.items():
        assert "..." not in source, f"{path} in the guide is incomplete"
    package = tmp_path_factory.mktemp("guide")
    for path, source in {**files, "zoo_scaled_dot/__init__.py": ""}.items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(source, encoding="utf-8")
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target)]
    done = subprocess.run([*pip, str(package), str(MHA)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return target


@pytest.mark.slow  # the whole kit over two installed plugins
def test_the_guide_plugin_and_a_textbook_mha_pass_the_conformance_kit(site, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no project configuration of pytest applies
    with isolated_site(site):
        code = main(["check", "scaled-dot", "textbook-mha", "--", "-v", "-rs", "-p", "no:randomly"])
    out = capsys.readouterr().out
    assert code == 0, out[-4000:]
    summary = next(line for line in out.splitlines() if line.startswith("zoo conformance kit:"))
    assert " 0 failed" in summary and summary.endswith("over 4 components and models of 2 plugins"), summary
    outcome = dict(re.findall(r"::(test_\w+\[[^\]\s]+\]) (PASSED|SKIPPED|FAILED)", out))
    for name in ("scaled-dot", "textbook-mha"):
        for check in ("test_weights_form_a_distribution_over_real_positions", "test_is_stateless"):
            assert outcome.get(f"{check}[{name}]") == "PASSED", (check, name, out[-4000:])
    # the guide's attention declares LinearInValues and passes its check; the textbook MHA may not
    assert outcome["test_context_is_the_weighted_sum_of_any_values[scaled-dot]"] == "PASSED"
    assert "'textbook-mha' does not declare zoo.interfaces.LinearInValues" in out
    assert outcome["test_each_head_weights_form_a_distribution[textbook-mha]"] == "PASSED"


def test_both_build_into_seq2seq_and_decode(site):
    with isolated_site(site):
        registry = zoo.Registry.with_plugins()
        for name, width in (("scaled-dot", 16), ("textbook-mha", 64)):  # textbook-mha's context: model_size
            model = zoo.build(
                f"seq2seq+{name}",
                key=jax.random.key(0),
                registry=registry,
                src_vocab_size=12,
                tgt_vocab_size=9,
                embedding_size=8,
                hidden_size=16,
                **{"strategy.max_length": 5},
            )
            assert model.spec.name == f"seq2seq+{name}"
            assert model.decoder.attention.context_size == width
            assert model.decoder.combine.weight.shape == (16, width + 16)
            src = jnp.asarray([[4, 5, 6, 0], [7, 8, 0, 0]], jnp.int32)
            hyps = model.decode(src)
            assert hyps.tokens.shape == (2, 1, 5)
            weights = np.asarray(eqx.filter_jit(model.attention_weights)(src[0], hyps.tokens[0, 0]))
            np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
            assert np.all(weights[:, 3] == 0.0)
