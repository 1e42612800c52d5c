"""A third-party plugin installed as its own distribution, and a broken one beside it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Install the sample distributions into a private target directory."""
    target = tmp_path_factory.mktemp("site")
    for dist in ("zoo-scaled-dot", "zoo-broken-plugin"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "--target",
                str(target),
                str(FIXTURES / dist),
            ],
            check=True,
            capture_output=True,
        )
    return target


def run(site, *args, cwd=None, **env):
    environment = {**os.environ, "PYTHONPATH": str(site), **env}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=environment, cwd=cwd)


def test_discovered_through_its_entry_point_and_broken_one_reported(site):
    result = run(site, "-m", "zoo.cli.main", "plugins")
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "zoo-scaled-dot" in rows["scaled-dot"]
    assert "loaded" in rows["scaled-dot"]
    assert "broken" in rows["broken-sample"]
    assert "zoo_broken_plugin_missing_dependency" in rows["broken-sample"]


def test_listing_and_building_keep_working_beside_a_broken_plugin(site):
    listed = run(site, "-m", "zoo.cli.main", "list", "--kind", "attention")
    assert listed.returncode == 0
    assert "scaled-dot" in listed.stdout
    assert "'broken-sample' from distribution 'zoo-broken-plugin' failed to load" in listed.stderr
    code = (
        "import jax, zoo\n"
        "for name in ('seq2seq+scaled-dot', 'seq2seq+luong-general'):\n"
        "    m = zoo.build(name, key=jax.random.key(0), hidden_size=8)\n"
        "    print(m.spec.name, type(m.decoder.attention).__name__)\n"
    )
    built = run(site, "-c", code)
    assert built.returncode == 0, built.stderr
    assert "seq2seq+scaled-dot ScaledBilinearAttention" in built.stdout
    assert "seq2seq+luong-general LuongGeneralAttention" in built.stdout
    strict = run(site, "-c", code, ZOO_STRICT_PLUGINS="1")
    assert strict.returncode != 0
    assert "PluginError" in strict.stderr


@pytest.mark.slow  # the whole kit over an installed plugin
def test_the_sample_plugin_passes_the_conformance_kit(site, tmp_path):
    result = run(site, "-m", "zoo.cli.main", "check", "scaled-dot", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "seq2seq+scaled-dot" in result.stdout or "passed" in result.stdout
    summary = next(line for line in result.stdout.splitlines() if line.startswith("zoo conformance kit:"))
    passed = int(summary.split()[3])
    assert passed >= 15
    assert " 0 failed" in summary
