"""A refused command answers at once: ``zoo train NAME`` parses and checks its options before any
training code (JAX, Equinox, optax, numba, SciPy's statistics) is imported, for every recipe.

A user's typo should cost the interpreter's start-up, not the second or two those imports take;
a recipe module that imports them at its top fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from zoo.naming.registry import default_registry

HEAVY = ("jax", "jaxlib", "equinox", "optax", "numba", "torch")

_PROBE = """
import contextlib, io, sys
from zoo.cli.main import main

HEAVY = {heavy!r}
data = sys.argv[1]
for name in sys.argv[2:]:
    for args in (["--help"], ["--data", data, "--out", data + ".out", "--set", "no_such_setting=1"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(["train", name, *args])
            except SystemExit as stop:
                code = stop.code
        loaded = sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in HEAVY}})
        loaded += [m for m in ("scipy.stats",) if m in sys.modules]
        print("RESULT", name, args[0], code, ",".join(loaded) or "-", "no_such_setting" in err.getvalue())
"""


def _one_name_per_recipe() -> list[str]:
    """An architecture's name for each recipe (the word-vector recipe serves four of them)."""
    names: dict[str, str] = {}
    for arch in sorted(default_registry().architectures.values(), key=lambda a: a.name):
        if arch.recipe is not None:
            names.setdefault(arch.recipe, arch.name)
    return sorted(names.values())


def test_every_recipe_refuses_an_option_before_importing_training_code(tmp_path):
    names = _one_name_per_recipe()
    assert len(names) >= 9  # every family that trains from the command line
    data = tmp_path / "data.txt"
    data.write_text("a b\tc d\n")
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), str(data), *names],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    results = [line.split()[1:] for line in out.stdout.splitlines() if line.startswith("RESULT")]
    assert len(results) == 2 * len(names), out.stdout + out.stderr
    for name, first, code, loaded, named in results:
        assert loaded == "-", f"zoo train {name} {first}: imported {loaded} before refusing"
        if first == "--help":
            assert code in ("0", "None"), name
        else:
            assert (code, named) == ("2", "True"), f"zoo train {name}: the unknown setting was not refused by name"
    assert seconds < 60, seconds  # a sanity bound only: the point is what was imported


_FILE_PROBE = """
import contextlib, io, sys
from zoo.cli.main import main

HEAVY = {heavy!r}
damaged, text = sys.argv[1], sys.argv[2]
commands = {{
    "eval": ["eval", damaged, "--data", text],
    "translate": ["translate", damaged, "a b"],
    "classify": ["classify", damaged, "a b"],
    "tag": ["tag", damaged, "a b"],
    "generate": ["generate", damaged],
    "vectors": ["vectors", "similar", damaged, "a"],
    "import": ["import", damaged, "--as", "damaged.v1"],
}}
for name, argv in commands.items():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    loaded = sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in HEAVY}})
    print("RESULT", name, code, ",".join(loaded) or "-", repr(err.getvalue().strip()[:400]))
"""


def test_a_damaged_model_file_is_refused_before_importing_training_code(tmp_path):
    damaged = tmp_path / "model.safetensors"
    damaged.write_bytes(b"\xff" * 16 + bytes(range(256)) * 8)  # a header length no file could hold
    text = tmp_path / "text.txt"
    text.write_text("a b\n")
    out = subprocess.run(
        [sys.executable, "-c", _FILE_PROBE.format(heavy=HEAVY), str(damaged), str(text)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ZOO_HOME": str(tmp_path / "home")},
    )
    results = [line.split(maxsplit=4)[1:] for line in out.stdout.splitlines() if line.startswith("RESULT")]
    assert len(results) == 7, out.stdout + out.stderr
    for name, code, loaded, message in results:
        assert code == "2", f"zoo {name}: exit {code}, {message}"
        assert "model.safetensors" in message, f"zoo {name} does not name the file: {message}"
        assert loaded == "-", f"zoo {name}: imported {loaded} before refusing a damaged file"
