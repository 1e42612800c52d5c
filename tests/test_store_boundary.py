"""The store stays inside itself and serves only what it imported: links, FIFOs, replaced
files, names with a newline, escape sequences, unreadable or oversized indexes."""

import os
import time

import pytest

from zoo.building.hub import hub_file
from zoo.building.intake import import_file
from zoo.building.store import Store, check_name
from zoo.cli.main import main
from zoo.errors import NameSyntaxError, WeightsError
from zoo.vectors import KeyedVectors


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _glove(path, words=("king", "queen", "apple")):
    path.write_text("".join(f"{w} {i} 0.5 {i + 1}\n" for i, w in enumerate(words)))
    return path


def test_a_link_planted_at_an_entry_is_never_written_through(home, tmp_path):
    store = Store(home)
    import_file(_glove(tmp_path / "g.txt"), "glove.v1", store=store)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    entry = store.path_of("glove.v1")
    entry.unlink()
    entry.symlink_to(outside)
    with pytest.raises(WeightsError, match="is a symbolic link"):
        import_file(_glove(tmp_path / "g2.txt"), "glove.v1", store=store, replace=True)
    assert outside.read_text() == "precious\n"
    with pytest.raises(WeightsError, match="is a symbolic link"):
        KeyedVectors.load("glove.v1")
    entry.unlink()
    entry.symlink_to(tmp_path / "nowhere.safetensors")  # dangling: never created
    with pytest.raises(WeightsError, match="is a symbolic link"):
        import_file(_glove(tmp_path / "g2.txt"), "glove.v1", store=store, replace=True)
    assert not (tmp_path / "nowhere.safetensors").exists()
    assert "glove.v1" not in store.entries()


def test_a_file_replaced_after_import_is_refused(home, tmp_path):
    store = Store(home)
    import_file(_glove(tmp_path / "g.txt"), "glove.v1", store=store)
    import_file(_glove(tmp_path / "h.txt", ("pear", "plum")), "other.v1", store=store)
    os.replace(store.path_of("other.v1"), store.path_of("glove.v1"))  # another valid vectors file
    with pytest.raises(WeightsError, match="was replaced after it was imported"):
        KeyedVectors.load("glove.v1")
    _glove(store.path_of("glove.v1"))  # GloVe text in its place
    with pytest.raises(WeightsError, match="it is not a zoo file"):
        KeyedVectors.load("glove.v1")


def test_names_are_matched_whole(home, tmp_path):
    with pytest.raises(NameSyntaxError):
        check_name("a.b\n")
    assert main(["import", str(_glove(tmp_path / "g.txt")), "--as", "a.b\n"]) == 2


def test_listings_escape_control_characters(home, tmp_path, capsys):
    source = _glove(tmp_path / "evil\x1b[2Jname\x07.txt")
    assert main(["import", str(source), "--as", "evil.v1"]) == 0
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[2Jname\\x07" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_index_or_ref_is_refused_at_once(home, tmp_path, monkeypatch):
    home.mkdir()
    os.mkfifo(home / "index.json")
    start = time.perf_counter()
    assert main(["models"]) == 2
    with pytest.raises(WeightsError, match="FIFO"):
        import_file(_glove(tmp_path / "g.txt"), "glove.v1", store=Store(home))
    hub = tmp_path / "hub"
    (hub / "models--o--r" / "refs").mkdir(parents=True)
    os.mkfifo(hub / "models--o--r" / "refs" / "main")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    with pytest.raises(WeightsError, match="FIFO"):
        hub_file("hf://o/r/vectors.txt")
    fifo = tmp_path / "vectors.txt"
    os.mkfifo(fifo)
    with pytest.raises(Exception, match="FIFO"):
        KeyedVectors.load(fifo)
    assert time.perf_counter() - start < 2


def test_an_oversized_index_or_ref_is_not_read_whole(home, tmp_path, monkeypatch):
    home.mkdir()
    with open(home / "index.json", "wb") as handle:
        handle.truncate(3 << 30)  # 3 GB, sparse
    with pytest.raises(WeightsError, match="larger than"):
        Store(home).entries()
    hub = tmp_path / "hub"
    (hub / "models--o--r" / "refs").mkdir(parents=True)
    with open(hub / "models--o--r" / "refs" / "main", "wb") as handle:
        handle.truncate(3 << 30)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    with pytest.raises(WeightsError, match="larger than"):
        hub_file("hf://o/r/vectors.txt")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads everything")
def test_an_unreadable_store_is_an_error(home, tmp_path):
    store = Store(home)
    import_file(_glove(tmp_path / "g.txt"), "glove.v1", store=store)
    os.chmod(home / "index.json", 0)
    try:
        with pytest.raises(WeightsError, match="cannot read"):
            store.entries()
    finally:
        os.chmod(home / "index.json", 0o644)


def test_a_link_for_the_models_directory_is_refused(home, tmp_path):
    home.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "models").symlink_to(elsewhere)
    with pytest.raises(WeightsError, match="symbolic link or not a directory"):
        import_file(_glove(tmp_path / "g.txt"), "glove.v1", store=Store(home))
    assert list(elsewhere.iterdir()) == []
