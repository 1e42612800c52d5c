"""Saves that never harm the disk: zoo.building.files on real files, devices, mounts and killed writers."""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from zoo.building import files
from zoo.building.files import check_writable, output_path, sweep_temporaries, write_atomic
from zoo.building.weights import write_atomic as reexported
from zoo.cli.main import main
from zoo.errors import WeightsError

ROOT = os.geteuid() == 0


def tensors(value: float = 1.0, size: int = 16) -> dict[str, np.ndarray]:
    return {"x": np.full(size, value, dtype=np.float32)}


def stored(path: Path) -> tuple[dict[str, str], np.ndarray]:
    with safe_open(str(path), framework="numpy") as handle:
        return dict(handle.metadata() or {}), handle.get_tensor("x")


def leftovers(directory: Path, keep: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p != keep)


def test_zoo_weights_still_exports_the_same_function():
    assert reexported is write_atomic


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_atomic(tmp_path / "m.safetensors", tensors(), {})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "m.safetensors").stat().st_mode) == mode
    assert leftovers(tmp_path, tmp_path / "m.safetensors") == []


def test_a_save_over_a_file_keeps_its_mode_and_replaces_its_content(tmp_path):
    target = tmp_path / "m.safetensors"
    write_atomic(target, tensors(1.0), {"v": "old"})
    target.chmod(0o604)
    before = target.stat().st_ino
    write_atomic(target, tensors(2.0), {"v": "new"})
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert target.stat().st_ino != before  # replaced by a rename, never rewritten in place
    metadata, x = stored(target)
    assert metadata["v"] == "new" and (x == 2.0).all()


@pytest.mark.skipif(not ROOT, reason="only root may give a file to another owner")
def test_root_saving_over_a_users_file_keeps_its_owner(tmp_path):
    target = tmp_path / "m.safetensors"
    write_atomic(target, tensors(1.0), {})
    os.chown(target, 4321, 4322)
    write_atomic(target, tensors(2.0), {})
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4322)


def test_a_symlink_is_followed_its_target_written_and_the_link_kept(tmp_path):
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    real = real_dir / "m.safetensors"
    write_atomic(real, tensors(1.0), {})
    (link_dir / "hop").symlink_to(real)
    (link_dir / "m.safetensors").symlink_to("hop")  # relative, and a chain of two links
    write_atomic(link_dir / "m.safetensors", tensors(2.0), {})
    assert (link_dir / "m.safetensors").is_symlink() and os.readlink(link_dir / "m.safetensors") == "hop"
    assert (stored(real)[1] == 2.0).all()
    assert leftovers(real_dir, real) == [] and sorted(p.name for p in link_dir.iterdir()) == ["hop", "m.safetensors"]


def test_a_dangling_symlink_creates_its_target(tmp_path):
    (tmp_path / "link").symlink_to("later.safetensors")
    write_atomic(tmp_path / "link", tensors(3.0), {})
    assert (tmp_path / "link").is_symlink() and (stored(tmp_path / "later.safetensors")[1] == 3.0).all()


def _directory(path: Path) -> str:
    path.mkdir()
    (path / "inside").write_text("kept")
    return "a directory"


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a named pipe"


def _socket(path: Path) -> str:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return "a socket"


def _null_device(path: Path) -> str:
    if not ROOT:
        pytest.skip("only root may create a device node")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("this system does not let even root create device nodes")
    return "a character device"


@pytest.mark.parametrize("make", [_directory, _fifo, _socket, _null_device])
@pytest.mark.parametrize("through_a_link", [False, True])
def test_what_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, make, through_a_link):
    thing = tmp_path / "thing"
    kind = make(thing)
    before = os.lstat(thing)
    path = thing
    if through_a_link:
        path = tmp_path / "link.safetensors"
        path.symlink_to(thing)
    for attempt in (lambda: check_writable(path), lambda: write_atomic(path, tensors(), {})):
        with pytest.raises(WeightsError, match=kind) as refused:
            attempt()
        assert str(path) in str(refused.value)
    after = os.lstat(thing)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert leftovers(tmp_path, thing) == (["link.safetensors"] if through_a_link else [])
    if kind == "a directory":
        assert (thing / "inside").read_text() == "kept"


def test_a_file_in_the_path_is_not_a_directory(tmp_path):
    (tmp_path / "file").write_text("kept")
    for attempt in (check_writable, lambda p: write_atomic(p, tensors(), {})):
        with pytest.raises(WeightsError, match="not a directory"):
            attempt(tmp_path / "file" / "m.safetensors")
    assert (tmp_path / "file").read_text() == "kept"


def test_missing_directories_are_checked_not_created_and_then_created_by_the_save(tmp_path):
    path = tmp_path / "a" / "b" / "m.safetensors"
    assert check_writable(path) == path
    assert list(tmp_path.iterdir()) == []  # the probe left nothing, not even the directories
    write_atomic(path, tensors(), {})
    assert (stored(path)[1] == 1.0).all()


def test_a_path_under_proc_is_refused_naming_the_path():
    with pytest.raises(WeightsError, match=r"/proc/nope/x\.safetensors"):
        check_writable("/proc/nope/x.safetensors")


def test_a_failure_midway_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    """A real write error (the process's file size limit, EFBIG) in the middle of the data."""
    target = tmp_path / "m.safetensors"
    write_atomic(target, tensors(1.0), {"v": "old"})
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, hard))
    try:
        with pytest.raises(WeightsError, match="too large") as refused:
            write_atomic(target, tensors(2.0, size=1 << 20), {"v": "new"})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert str(target) in str(refused.value) and refused.value.__cause__ is not None
    assert stored(target)[0]["v"] == "old" and leftovers(tmp_path, target) == []


def test_an_interrupt_during_the_save_removes_the_temporary(tmp_path):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach only the main thread")
    # Python's own Ctrl-C handler, whatever the test runner installed (a worker may ignore SIGINT).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    class Interrupting(dict):
        def items(self):  # read by safetensors once the temporary exists: a real Ctrl-C arrives then
            os.kill(os.getpid(), signal.SIGINT)
            return super().items()

    target = tmp_path / "m.safetensors"
    write_atomic(target, tensors(1.0), {"v": "old"})
    try:
        with pytest.raises(KeyboardInterrupt):
            write_atomic(target, Interrupting(tensors(2.0)), {})
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stored(target)[0]["v"] == "old" and leftovers(tmp_path, target) == []


# -- permissions, read-only and full file systems, for real ---------------------------------

ATTEMPTS = """
import json, sys
import numpy as np
from zoo.errors import WeightsError
from zoo.building.files import check_writable, write_atomic
size, results = int(sys.argv[1]), []
for path in sys.argv[2:]:
    for attempt in (lambda: check_writable(path), lambda: write_atomic(path, {"x": np.ones(size, np.float32)}, {})):
        try:
            attempt()
            results.append("written")
        except WeightsError as error:
            results.append(str(error))
print(json.dumps(results))
"""


def attempt(paths: list[Path], *, size: int = 16, setup: str = "") -> list[str]:
    """Check then save each path in a child process where permissions bind even for root.

    As root the child runs in a user namespace: unmapped (``setup`` empty), so
    file modes apply to it; or mapped with its own mounts, after the shell
    commands `setup` (a read-only bind mount, a tiny tmpfs).
    """
    command = [sys.executable, "-c", ATTEMPTS, str(size), *map(str, paths)]
    if setup:
        shell = f"{setup} && exec {shlex.join(command)}"
        command = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", shell]
    elif ROOT:
        command = ["unshare", "--user", *command]
    if command[0] == "unshare" and shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to drop root's rights or mount a file system")
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        pytest.skip(f"cannot isolate the child here: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


def test_a_directory_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    write_atomic(locked / "m.safetensors", tensors(), {})
    locked.chmod(0o500)
    (tmp_path / "read-only.safetensors").write_bytes(b"kept")
    (tmp_path / "read-only.safetensors").chmod(0o444)
    try:
        results = attempt([locked / "new.safetensors", locked / "m.safetensors", tmp_path / "read-only.safetensors"])
    finally:
        locked.chmod(0o700)
    assert all("permission denied" in r for r in results), results
    assert str(locked / "new.safetensors") in results[0]
    assert "read-only" in results[4] and (tmp_path / "read-only.safetensors").read_bytes() == b"kept"
    assert sorted(p.name for p in locked.iterdir()) == ["m.safetensors"]


def test_a_read_only_file_system_is_refused(tmp_path):
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    write_atomic(shelf / "m.safetensors", tensors(1.0), {})
    setup = f"mount --bind {shelf} {shelf} && mount -o remount,bind,ro {shelf}"
    results = attempt([shelf / "m.safetensors", shelf / "sub" / "n.safetensors"], setup=setup)
    assert all("read-only file system" in r for r in results), results
    assert str(shelf / "m.safetensors") in results[0]
    assert sorted(p.name for p in shelf.iterdir()) == ["m.safetensors"]
    assert (stored(shelf / "m.safetensors")[1] == 1).all()


FULL_DISK = """
import json, os, sys
import numpy as np
from zoo.errors import WeightsError
from zoo.building.files import check_writable, write_atomic
disk = sys.argv[1]
target = os.path.join(disk, "m.safetensors")
results = {}
write_atomic(target, {"x": np.ones(16, np.float32)}, {"v": "old"})
try:
    write_atomic(target, {"x": np.ones(1 << 20, np.float32)}, {"v": "new"})
except WeightsError as error:
    results["save"] = str(error)
with open(target, "rb") as kept:
    results["kept"] = b'"v":"old"' in kept.read()
results["left"] = sorted(os.listdir(disk))
with open(os.path.join(disk, "filler"), "wb", buffering=0) as filler:
    try:
        while True:
            filler.write(b"\\0" * 4096)
    except OSError:
        pass
try:
    check_writable(os.path.join(disk, "n.safetensors"))
except WeightsError as error:
    results["check"] = str(error)
print(json.dumps(results))
"""


def test_a_full_disk_is_a_weights_error_and_keeps_the_old_file(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    command = [sys.executable, "-c", FULL_DISK, str(disk)]
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a tiny file system")
    shell = f"mount -t tmpfs -o size=256k tmpfs {disk} && exec {shlex.join(command)}"
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", shell],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0 and "mount" in result.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()[-300:]}")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    target = str(disk / "m.safetensors")
    assert results["save"].startswith(f"cannot save to {target}: no space left on the device")
    assert results["kept"] and results["left"] == ["m.safetensors"]
    assert "no space left on the device" in results["check"]


# -- temporaries of killed writers ----------------------------------------------------------

WRITER = """
import hashlib, sys
import numpy as np
from zoo.building.files import write_atomic
target, size = sys.argv[1], int(sys.argv[2])
versions = []
for seed in (1, 2):
    x = np.random.default_rng(seed).random(size, dtype=np.float32)
    versions.append(({"x": x}, {"sha256": hashlib.sha256(x.tobytes()).hexdigest()}))
print("ready", flush=True)
while True:
    for tensors, metadata in versions:
        write_atomic(target, tensors, metadata)
"""


def whole(path: Path) -> bool:
    metadata, x = stored(path)
    return hashlib.sha256(x.tobytes()).hexdigest() == metadata["sha256"]


def test_kill_9_during_saves_leaves_the_old_or_new_file_and_no_lasting_temporary(tmp_path):
    target = tmp_path / "m.safetensors"
    x = np.zeros(4, np.float32)
    write_atomic(target, {"x": x}, {"sha256": hashlib.sha256(x.tobytes()).hexdigest()})
    rng, midway = random.Random(15), 0
    for _ in range(5):
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target), str(4 << 20)], stdout=subprocess.PIPE, text=True
        ) as writer:
            assert writer.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.03, 0.2))
            writer.kill()
            writer.wait()
        left = leftovers(tmp_path, target)
        midway += bool(left)
        assert len(left) <= 1, left  # each writer swept those of the writers killed before it
        assert whole(target)
    assert midway >= 1  # the kills did land inside saves
    write_atomic(target, {"x": x}, {"sha256": hashlib.sha256(x.tobytes()).hexdigest()})
    assert leftovers(tmp_path, target) == [] and whole(target)


def test_the_sweep_removes_only_dead_writers_temporaries_of_the_same_target(tmp_path):
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    host, mine = files._HOST, os.getpid()
    old = time.time() - 2 * files.STALE_AFTER_S
    swept = [f".m.safetensors.{host}.{dead}.0123abcd.tmp", ".m.safetensors.elsewhere.7.00000001.tmp"]
    kept = [
        f".m.safetensors.{host}.{mine}.89abcdef.tmp",  # a live writer (this very process)
        ".m.safetensors.elsewhere.7.00000002.tmp",  # another host's, recent: it may still be writing
        f".n.safetensors.{host}.{dead}.0123abcd.tmp",  # another target's
    ]
    for name in swept + kept:
        (tmp_path / name).mkdir()
        (tmp_path / name / "data").write_bytes(b"partial")
    os.utime(tmp_path / swept[1], (old, old))
    (tmp_path / ".m.safetensors.ab_12cd3.tmp").write_bytes(b"earlier zoo")  # legacy single file, old
    os.utime(tmp_path / ".m.safetensors.ab_12cd3.tmp", (old, old))
    swept.append(".m.safetensors.ab_12cd3.tmp")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data").write_bytes(b"not ours")
    (tmp_path / f".m.safetensors.{host}.{dead}.44444444.tmp").symlink_to(elsewhere)  # never followed
    unrelated = ["m.safetensors.bak", ".tmpAbC123", ".m.safetensors.notes", ".m.safetensors.ab_12cd45.tmp"]
    for name in unrelated:
        (tmp_path / name).write_bytes(b"someone's")
    for name in unrelated[2:]:  # old, but not named as zoo names its temporaries
        os.utime(tmp_path / name, (old, old))
    kept += [*unrelated, f".m.safetensors.{host}.{dead}.44444444.tmp", "elsewhere"]

    assert sweep_temporaries(tmp_path / "m.safetensors") == 3
    write_atomic(tmp_path / "m.safetensors", tensors(), {})
    remaining = set(os.listdir(tmp_path))
    assert remaining == {*kept, "m.safetensors"}
    assert (elsewhere / "data").read_bytes() == b"not ours"
    assert (tmp_path / kept[0] / "data").read_bytes() == b"partial"


# -- the command line checks its outputs before it works ------------------------------------


def test_output_path_is_a_clean_argparse_error(tmp_path):
    import argparse

    parser = argparse.ArgumentParser(prog="prog")
    parser.add_argument("--out", type=output_path)
    assert parser.parse_args(["--out", str(tmp_path / "m.safetensors")]).out == tmp_path / "m.safetensors"
    with pytest.raises(SystemExit):
        parser.parse_args(["--out", str(tmp_path)])


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("the cat sat on the mat and the dog sat on the log\n" * 40)
    return path


def test_train_with_an_unwritable_out_fails_before_training(corpus, tmp_path, capsys):
    bad = "/proc/nope/x.safetensors"
    start = time.perf_counter()
    with pytest.raises(SystemExit) as stopped:
        main(["train", "word2vec-skipgram", "--corpus", str(corpus), "--min-count", "1", "--out", bad])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and elapsed < 1.0, elapsed
    assert "usage: zoo train word2vec-skipgram" in err and f"argument --out: cannot save to {bad}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "word2vec-cbow", "--corpus", "{corpus}", "--out", "{bad}"],
        ["train", "glove", "--corpus", "{corpus}", "--out", "{bad}"],
        ["train", "ppmi-svd", "--corpus", "{corpus}", "--out", "{bad}"],
        ["train", "seq2seq", "--out", "{good}", "--checkpoint", "{bad}"],
        ["train", "lm", "--out", "{bad}"],
        ["demo", "reversal", "--out", "{bad}"],
        ["vectors", "export", "{good}", "{bad}"],
        ["plot", "embeddings", "{good}", "--words", "cat,dog", "--out", "{bad}"],
        ["plot", "attention", "{good}", "text", "--out", "{bad}"],
        ["translate", "{good}", "text", "--output", "{bad}"],
        ["tag", "{good}", "--output", "{bad}"],
        ["classify", "{good}", "--output", "{bad}"],
    ],
    ids=lambda argv: "-".join(a for a in argv[:2] if "{" not in a),
)
def test_every_command_that_writes_checks_its_output_first(corpus, tmp_path, capsys, argv):
    bad = tmp_path / "a-directory"
    bad.mkdir()
    values = {"corpus": str(corpus), "bad": str(bad), "good": str(tmp_path / "m.safetensors")}
    with pytest.raises(SystemExit) as stopped:
        main([a.format(**values) for a in argv])
    assert stopped.value.code == 2
    assert f"cannot save to {bad}: it is a directory" in capsys.readouterr().err
