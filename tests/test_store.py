"""The local model store: `zoo import FILE --as NAME.TAG`, `zoo models`, stored names wherever a file is taken."""

import json
import threading

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import zoo
from zoo.building.intake import import_file
from zoo.building.store import RESOLVER, Store, check_name, default_store, store_home
from zoo.cli.main import main
from zoo.errors import DataError, NameSyntaxError, UnknownNameError, WeightsError
from zoo.testing.base import assert_trees_close
from zoo.vectors import FastTextArgs, FastTextModel, KeyedVectors, write_fasttext_bin

GLOVE = {
    "king": [0.9, 0.8, 0.1, 0.0],
    "queen": [0.85, 0.9, 0.15, 0.05],
    "man": [0.6, 0.1, 0.05, 0.1],
    "woman": [0.55, 0.2, 0.1, 0.12],
    "apple": [0.0, 0.05, 0.95, 0.8],
    "pear": [0.05, 0.0, 0.9, 0.85],
}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh store in ZOO_HOME, and a working directory with no file of a stored name."""
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path / "home"


@pytest.fixture
def glove(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in GLOVE.items()))
    return path


@pytest.fixture
def model_file(small_seq2seq, tmp_path, registry):
    return zoo.save(small_seq2seq, tmp_path / "model.safetensors", registry=registry)


def flip_last_byte(path, out):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # inside the last tensor: the checksum no longer matches
    out.write_bytes(bytes(data))
    return out


# -- the acceptance path ------------------------------------------------------------------------


def test_import_glove_then_query_it_by_name(home, glove, capsys):
    assert main(["import", str(glove), "--as", "glove.mine"]) == 0
    assert "stored glove.mine: vectors, 6 words, dim 4" in capsys.readouterr().out
    assert main(["vectors", "similar", "glove.mine", "king", "--n-best", "2"]) == 0
    stored = KeyedVectors.load("glove.mine")
    original = KeyedVectors.load(glove)
    expected = [f"{score:8.4f}  {word}" for word, score in original.most_similar("king", topn=2)]
    assert capsys.readouterr().out.splitlines() == expected
    assert expected[0].endswith("queen")
    assert stored.index_to_key == original.index_to_key
    np.testing.assert_array_equal(stored.vectors, original.vectors)
    assert (home / "models" / "glove.mine.safetensors").is_file()


def test_a_path_that_exists_wins_over_a_stored_name(home, glove, tmp_path):
    import_file(glove, "glove.mine")
    (tmp_path / "work" / "glove.mine").write_text("king 1 0\nqueen 0 1\n")
    assert KeyedVectors.load("glove.mine").vector_size == 2  # the file here, not the stored one


def test_models_lists_what_the_store_holds(home, glove, model_file, registry, capsys):
    assert main(["models"]) == 0
    assert "holds nothing" in capsys.readouterr().out
    import_file(glove, "glove.mine")
    import_file(model_file, "rev.small", registry=registry)
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "ARCHITECTURE", "SIZE", "DATE", "SOURCE"]
    assert lines[1].startswith("glove.mine  vectors  6 words, dim 4")
    assert str(glove) + " (GloVe text)" in lines[1]
    assert lines[2].split()[:3] == ["rev.small", "model", "seq2seq+luong-general"]
    assert "KiB" in lines[2] and str(model_file) + " (zoo file)" in lines[2]
    assert main(["models", "glove.*", "--path"]) == 0
    out = capsys.readouterr().out
    assert f"store: {home}" in out and str(home / "models" / "glove.mine.safetensors") in out and "rev" not in out
    assert main(["models", "--remove", "glove.mine"]) == 0
    assert "removed glove.mine" in capsys.readouterr().out
    assert list(default_store().entries()) == ["rev.small"]
    assert main(["models", "--remove", "glove.mien"]) == 2
    assert "nothing to remove" in capsys.readouterr().err


# -- zoo files ------------------------------------------------------------------------------------


def test_an_imported_model_loads_and_builds_by_name(home, small_seq2seq, model_file, registry):
    entry = import_file(model_file, "rev.small", registry=registry)
    assert (entry.kind, entry.architecture) == ("model", "seq2seq+luong-general")
    assert entry.path.read_bytes() != b""
    assert_trees_close(zoo.load("rev.small", registry=registry), small_seq2seq, exact=True)
    built = zoo.build("rev.small", key=None, registry=registry)
    assert built.spec == small_seq2seq.spec
    with safe_open(str(entry.path), "numpy") as stored, safe_open(str(model_file), "numpy") as original:
        assert stored.metadata() == original.metadata()


def test_a_damaged_or_altered_zoo_file_is_refused_on_import(home, model_file, tmp_path, registry):
    damaged = flip_last_byte(model_file, tmp_path / "damaged.safetensors")
    with pytest.raises(WeightsError, match="does not match its checksum"):
        import_file(damaged, "rev.damaged", registry=registry)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(model_file.read_bytes()[:-100])
    with pytest.raises(WeightsError, match="not a readable safetensors file"):
        import_file(truncated, "rev.truncated", registry=registry)
    plain = tmp_path / "plain.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, str(plain))
    with pytest.raises(WeightsError, match="not a zoo weights file"):
        import_file(plain, "rev.plain", registry=registry)
    with safe_open(str(model_file), "numpy") as handle:  # resealed, but a tensor of the wrong shape
        metadata = dict(handle.metadata())
    from zoo.building.weights import seal

    tensors = load_file(str(model_file))
    tensors["decoder.attention.weight"] = np.zeros((2, 2), np.float32)
    misfit = tmp_path / "misfit.safetensors"
    save_file(tensors, str(misfit), metadata=seal(metadata, tensors))
    with pytest.raises(WeightsError, match="decoder.attention.weight"):
        import_file(misfit, "rev.misfit", registry=registry)
    assert default_store().entries() == {} and not (home / "index.json").exists()


def test_the_cli_refuses_a_damaged_file_and_stores_nothing(home, model_file, tmp_path, capsys):
    damaged = flip_last_byte(model_file, tmp_path / "damaged.safetensors")
    assert main(["import", str(damaged), "--as", "rev.damaged"]) == 2
    assert "does not match its checksum" in capsys.readouterr().err
    assert default_store().names() == []


def test_a_damaged_vectors_file_is_refused_on_import_and_on_load(home, glove, tmp_path):
    entry = import_file(glove, "glove.mine")
    damaged = flip_last_byte(entry.path, tmp_path / "damaged.safetensors")
    with pytest.raises(WeightsError, match="does not match its checksum"):
        import_file(damaged, "glove.damaged")
    with pytest.raises(WeightsError, match="does not match its checksum"):
        KeyedVectors.load(damaged)
    with safe_open(str(entry.path), "numpy") as handle:  # resealed, but the words do not fit the vectors
        metadata = dict(handle.metadata())
    from zoo.building.weights import seal

    tensors = load_file(str(entry.path))
    tensors["__zoo__.vectors"] = tensors["__zoo__.vectors"][:3]
    misfit = tmp_path / "misfit.safetensors"
    save_file(tensors, str(misfit), metadata=seal(metadata, tensors))
    with pytest.raises(WeightsError, match="word vectors are damaged"):
        import_file(misfit, "glove.misfit")
    assert default_store().names() == ["glove.mine"]


def test_zoo_load_of_stored_vectors_says_how_to_read_them(home, glove, registry):
    import_file(glove, "glove.mine")
    with pytest.raises(WeightsError, match="not a model: read word vectors with zoo.vectors.KeyedVectors.load"):
        zoo.load("glove.mine", registry=registry)


# -- vectors formats ------------------------------------------------------------------------------


def test_word2vec_text_and_binary_import(home, glove, tmp_path):
    original = KeyedVectors.load(glove)
    text, binary = tmp_path / "v.txt", tmp_path / "v.bin"
    original.save_word2vec_format(text)
    original.save_word2vec_format(binary, binary=True)
    assert import_file(text, "w2v.text").source.endswith("(word2vec text)")
    assert import_file(binary, "w2v.binary").source.endswith("(word2vec binary)")
    assert import_file(binary, "w2v.short", format="word2vec-binary", limit=2).architecture == "2 words, dim 4"
    for name in ("w2v.text", "w2v.binary"):
        np.testing.assert_array_equal(KeyedVectors.load(name).vectors, original.vectors)
    with pytest.raises(DataError):
        import_file(glove, "w2v.wrong", format="word2vec")  # GloVe text has no header


def test_vectors_saved_as_a_zoo_file_read_back_and_import(home, glove, tmp_path):
    from zoo.vectors.zoo_file import write_vectors

    original = KeyedVectors.load(glove)
    path = write_vectors(original, tmp_path / "glove.safetensors", source="by hand")
    again = KeyedVectors.load(path)
    assert again.index_to_key == original.index_to_key
    np.testing.assert_array_equal(again.vectors, original.vectors)
    assert import_file(path, "glove.copy").kind == "vectors"
    assert import_file(path, "glove.head", limit=3).architecture == "3 words, dim 4"
    assert len(KeyedVectors.load("glove.head")) == 3


def test_a_fasttext_bin_keeps_its_subwords(home, tmp_path):
    args = FastTextArgs(dim=3, min_count=1, bucket=13, minn=2, maxn=3)
    words = ["</s>", "hello", "world", "café"]
    rng = np.random.default_rng(0)
    model = FastTextModel(args, words, np.array([9, 5, 3, 2]), rng.standard_normal((4 + 13, 3)).astype(np.float32))
    path = write_fasttext_bin(tmp_path / "ft.bin", model)
    entry = import_file(path, "ft.mine")
    assert entry.architecture == "4 words, dim 3, fastText subwords"
    stored, original = KeyedVectors.load("ft.mine"), KeyedVectors.load(path)
    assert stored.index_to_key == original.index_to_key
    np.testing.assert_array_equal(stored.counts, original.counts)
    for word in ("hello", "hellos", "wor", "cafés"):  # in the vocabulary, and outside it
        np.testing.assert_array_equal(stored.get_vector(word), original.get_vector(word))
    out = tmp_path / "again.bin"
    assert main(["vectors", "export", "ft.mine", str(out), "--format", "fasttext"]) == 0
    np.testing.assert_array_equal(KeyedVectors.load(out).get_vector("hellos"), original.get_vector("hellos"))


# -- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../x", "it is a path"),
        ("/etc/passwd.x", "it is a path"),
        ("models/x.y", "it is a path"),
        ("~/x.y", "it is a path"),
        ("glove", "NAME.TAG"),
        ("a.b.c", "NAME.TAG"),
        ("..", "NAME.TAG"),
        ("Glove.mine", "lowercase"),
        (".hidden", "its NAME ''"),
        ("glove.", "its TAG ''"),
        ("glove.mi ne", "lowercase"),
        ("glöve.mine", "lowercase"),
        ("seq2seq+luong.mine", "lowercase"),
        ("-x.y", "starting with a letter or digit"),
        ("a" * 65 + ".b", "at most 64"),
    ],
)
def test_bad_names_are_refused_with_the_reason(name, why, home, glove, capsys):
    with pytest.raises(NameSyntaxError, match="not a valid stored name") as raised:
        check_name(name)
    assert why in str(raised.value)
    assert main(["import", str(glove), f"--as={name}"]) == 2
    assert why in capsys.readouterr().err
    assert not home.exists()  # refused before the store was touched


def test_a_missing_name_lists_close_stored_names(home, glove, registry, capsys):
    import_file(glove, "glove.mine")
    import_file(glove, "glove.other")
    for load in (lambda: zoo.load("glove.mien", registry=registry), lambda: KeyedVectors.load("glove.mien")):
        with pytest.raises(UnknownNameError, match=r"no file 'glove.mien'.*Did you mean 'glove.mine'") as raised:
            load()
        assert "zoo import FILE --as glove.mien" in str(raised.value)
    with pytest.raises(UnknownNameError, match=r"no plugin provides weights for glove.mien.*Did you mean"):
        zoo.build("glove.mien", key=None, registry=registry)
    assert main(["vectors", "similar", "glove.mien", "king"]) == 2
    assert "Did you mean 'glove.mine'" in capsys.readouterr().err
    with pytest.raises(WeightsError, match="no weights file at"):  # a path is not a name
        zoo.load("sub/glove.mien", registry=registry)


def test_a_name_already_stored_is_replaced_only_when_asked(home, glove, tmp_path, capsys):
    import_file(glove, "glove.mine")
    small = tmp_path / "small.txt"
    small.write_text("king 1 0\nqueen 0 1\n")
    assert main(["import", str(small), "--as", "glove.mine"]) == 2
    assert "already holds 'glove.mine'" in capsys.readouterr().err
    assert main(["import", str(small), "--as", "glove.mine", "--replace"]) == 0
    assert KeyedVectors.load("glove.mine").vector_size == 2


# -- the store itself -----------------------------------------------------------------------------


def test_where_the_store_is(tmp_path):
    assert store_home({"ZOO_HOME": str(tmp_path / "z")}) == tmp_path / "z"
    assert store_home({"XDG_CACHE_HOME": str(tmp_path / "c")}) == tmp_path / "c" / "zoo"
    from pathlib import Path

    assert store_home({"XDG_CACHE_HOME": "relative"}) == Path.home() / ".cache" / "zoo"  # XDG: ignored


def test_concurrent_imports_of_different_names_keep_every_entry(home, glove):
    names = [f"glove.t{i}" for i in range(8)]
    errors = []

    def run(name):
        try:
            import_file(glove, name)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    index = json.loads((home / "index.json").read_text())["models"]
    assert sorted(index) == names  # every import recorded (a lost update would drop one)
    assert all(record["source"].endswith("(GloVe text)") for record in index.values())
    assert not list(home.glob(".index.json.*"))


def test_a_damaged_index_still_lists_the_files(home, glove):
    import_file(glove, "glove.mine")
    (home / "index.json").write_text("{not json")
    entries = Store(home).entries()
    assert list(entries) == ["glove.mine"]
    assert (entries["glove.mine"].kind, entries["glove.mine"].source) == ("vectors", "")
    import_file(glove, "glove.other")  # rewrites the index whole
    assert sorted(json.loads((home / "index.json").read_text())["models"]) == ["glove.other"]
    assert KeyedVectors.load("glove.mine").vector_size == 4


def test_the_store_is_asked_before_other_resolvers(home, small_seq2seq, model_file, tmp_path, registry, getkey):
    from plugin_samples import ProvidesWeights

    other = zoo.build("seq2seq", key=getkey(), registry=registry, hidden_size=4, src_vocab_size=9, tgt_vocab_size=9)
    plugin_file = zoo.save(other, tmp_path / "plugin.safetensors", registry=registry)
    local = zoo.Registry.with_plugins(environ={})
    local.manager.register(ProvidesWeights(plugin_file), name="weights")
    assert zoo.build("seq2seq.tiny", key=None, registry=local).spec == other.spec  # the plugin's answer
    import_file(model_file, "seq2seq.tiny", registry=registry)
    assert zoo.build("seq2seq.tiny", key=None, registry=local).spec == small_seq2seq.spec  # the store's, first
    assert local.manager.get_plugin("zoo.store") is RESOLVER


# -- hf:// addresses: the Hugging Face hub's cache, laid out by hand (never the network) ------------


@pytest.fixture
def hub(tmp_path, monkeypatch, glove):
    """``owner/vectors`` cached at one commit, ``main`` pointing to it, the file a link into blobs/."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = tmp_path / "hf" / "models--owner--vectors"
    (folder / "blobs").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    blob = folder / "blobs" / "5f3a9c"
    blob.write_bytes(glove.read_bytes())
    snapshot = folder / "snapshots" / commit / "glove"
    snapshot.mkdir(parents=True)
    (snapshot / "small.txt").symlink_to(blob)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    return folder, commit


def test_a_file_in_the_hub_cache_is_read_and_imported(home, hub, glove, capsys):
    _, commit = hub
    address = "hf://owner/vectors/glove/small.txt"
    np.testing.assert_array_equal(KeyedVectors.load(address).vectors, KeyedVectors.load(glove).vectors)
    assert len(KeyedVectors.load(f"hf://owner/vectors@{commit}/glove/small.txt")) == 6
    assert main(["vectors", "similar", address, "king", "--n-best", "1"]) == 0  # through argparse's Path too
    assert capsys.readouterr().out.split()[-1] == "queen"
    assert main(["import", address, "--as", "glove.hub"]) == 0
    assert default_store().get("glove.hub").source == f"{address} (GloVe text)"


def test_hub_addresses_are_checked_and_never_downloaded(home, hub, tmp_path):
    folder, _ = hub
    with pytest.raises(WeightsError, match=r"not in the Hugging Face cache.*`hf download owner/other x.txt`"):
        KeyedVectors.load("hf://owner/other/x.txt")
    with pytest.raises(WeightsError, match="--revision v2"):
        KeyedVectors.load("hf://owner/vectors@v2/glove/small.txt")
    for address in ("hf://owner/../x/y", "hf://owner/vectors/../../etc/passwd", "hf://owner/vectors", "hf://o/r//x"):
        with pytest.raises(NameSyntaxError):
            KeyedVectors.load(address)
    outside = tmp_path / "outside.txt"
    outside.write_text("king 1 0\n")
    commit = (folder / "refs" / "main").read_text()
    (folder / "snapshots" / commit / "escape.txt").symlink_to(outside)
    with pytest.raises(WeightsError, match="leads outside"):
        KeyedVectors.load("hf://owner/vectors/escape.txt")
