"""The zoo command: instant listing, information, plugins, errors, training."""

import os
import subprocess
import sys

import pytest

from zoo.cli.common import parse_overrides
from zoo.cli.main import main
from zoo.errors import UnknownParameterError


def zoo_cmd(*args, env=None):
    """Run ``python -m zoo.cli.main`` in a fresh process (as a user would)."""
    return subprocess.run(
        [sys.executable, "-m", "zoo.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_list_imports_neither_jax_nor_plugin_code():
    code = (
        "import sys\nfrom zoo.cli.main import main\nmain(['list'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jax', 'jaxlib', 'equinox', 'optax') or m.startswith('zoo_'))\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    assert "seq2seq-reversal" in out.stdout
    assert "HEAVY []" in out.stdout
    assert "jax" not in [line.rsplit("|", 1)[-1].strip().split(".")[0] for line in out.stderr.splitlines()]


def test_list_patterns_and_components(capsys):
    assert main(["list", "seq2seq*"]) == 0
    assert "seq2seq-reversal" in capsys.readouterr().out
    assert main(["list", "--kind", "attention"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("bahdanau", "luong-dot", "luong-general", "luong-concat"))
    assert main(["list", "nothing*"]) == 0
    assert "no models match 'nothing*'" in capsys.readouterr().out


def test_info_shows_slots_defaults_plugin_and_version(capsys):
    assert main(["info", "seq2seq+gru+bahdanau"]) == 0
    out = capsys.readouterr().out
    assert "cell [cell] = gru (default lstm)" in out
    assert "attention [attention] = bahdanau (default none)" in out
    assert "plugin: seq2seq (zoo " in out
    assert main(["info", "luong-general"]) == 0
    assert "attention component" in capsys.readouterr().out


def test_unknown_names_exit_2_with_a_suggestion():
    result = zoo_cmd("info", "seq2seq+luong-genral")
    assert result.returncode == 2
    assert "Did you mean 'luong-general'" in result.stderr
    assert "Traceback" not in result.stderr


def test_plugins_table_reports_status():
    result = zoo_cmd("plugins")
    assert result.returncode == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "loaded" in lines["luong-general"]
    blocked = zoo_cmd("plugins", env={"ZOO_DISABLE_PLUGINS": "luong-general"})
    assert "disabled" in {line.split()[0]: line for line in blocked.stdout.splitlines()[1:]}["luong-general"]


def test_set_values_are_typed():
    assert parse_overrides(["a=2", "b=0.5", "c=true", "d=[1, 2]", "e=word", 'f.g="x"']) == {
        "a": 2,
        "b": 0.5,
        "c": True,
        "d": [1, 2],
        "e": "word",
        "f.g": "x",
    }
    with pytest.raises(UnknownParameterError, match="KEY=VALUE"):
        parse_overrides(["novalue"])


@pytest.mark.slow  # trains a model end to end through the command line
def test_train_a_tiny_model_from_the_command_line(tmp_path):
    out = tmp_path / "rev.safetensors"
    result = zoo_cmd(
        "train",
        "seq2seq+luong-dot",
        "--task",
        "reversal",
        "--steps",
        "30",
        "--quiet",
        "--out",
        str(out),
        "--set",
        "hidden_size=8",
        "--set",
        "embedding_size=8",
        "--valid-size",
        "20",
    )
    assert result.returncode == 0, result.stderr
    assert "exact_match" in result.stdout + result.stderr
    import zoo

    model = zoo.load(out)
    assert model.spec.name == "seq2seq+luong-dot"
    assert model.spec.slot("encoder").params["hidden_size"] == 8


def test_train_rejects_unknown_hyperparameters(tmp_path):
    result = zoo_cmd("train", "seq2seq", "--task", "reversal", "--out", str(tmp_path / "x"), "--set", "hiden=3")
    assert result.returncode == 2
    assert "'hiden' is not a hyperparameter" in result.stderr


def test_unknown_demo_suggests():
    result = zoo_cmd("demo", "reversl")
    assert result.returncode == 2
    assert "Did you mean 'reversal'" in result.stderr
