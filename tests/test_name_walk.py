"""A build parses its name once and resolves it in one walk (see tests/name_walk.py for the figures)."""

import pytest
from name_walk import Move, figures, name_walk, trace_build

import zoo
from zoo.errors import RegistryError, UnknownParameterError
from zoo.naming import names, resolve
from zoo.naming.tables import read_tables

NAME = "seq2seq-reversal+luong-general"  # a preset, a component part, and a factory that builds five slots


@pytest.fixture(scope="module")
def walk():
    return trace_build(NAME)


def test_a_build_parses_its_name_once(walk):
    _, parses = walk
    assert parses == 1, f"zoo.build({NAME!r}) parsed a name {parses} times; a preset's base is parsed with its table"


def test_a_name_walks_once_through_naming_and_building(walk):
    """Before one walk (resolution asking the registry per use, a second entry to expand the presets,
    the base of a preset parsed at every build) the name's walk took 35 moves and 26 returns, the
    whole build 51 and 35. The memory screen before the factory runs (zoo.budget) reads the spec's
    sizes once more: one move and one return more than the walk took before it."""
    moves, _ = walk
    walked = name_walk(moves)
    trail = "\n".join(f"{m.caller} -> {m.callee}:{m.function}" for m in moves if not m.in_factory)
    assert walked.moves <= 14 and walked.returns <= 5, f"{walked.line()}\n{trail}"
    for module in ("zoo/naming/names.py", "zoo/naming/resolve.py", "zoo/building/construct.py"):
        assert walked.entries.get(module) == 1, f"{module} entered {walked.entries.get(module)} times\n{trail}"
    whole = figures(moves)
    assert whole.moves <= 30 and whole.returns <= 14, whole.line()


def test_the_walk_counts_what_it_claims():
    def move(caller, callee, in_factory=False):
        return Move(caller, callee, "f", in_factory)

    moves = [move(None, "a"), move("a", "b"), move("a", "b"), move("a", "c"), move("c", "b", True), move("a", "b")]
    whole = figures(moves)
    assert (whole.moves, whole.returns, whole.modules) == (4, 2, 3)
    assert whole.entries == {"a": 1, "b": 3, "c": 1}
    walked = name_walk(moves)
    assert (walked.moves, walked.returns) == (3, 1)


def test_a_parsed_name_resolves_like_its_text():
    registry = zoo.Registry()
    registry.load_plugins()
    for name in ["seq2seq+luong-general", "seq2seq-reversal+attention=luong-dot"]:
        parsed = names.parse_name(name)
        expanded = resolve.expand(registry, parsed)
        assert resolve.resolve(registry, parsed, {}, expanded=expanded) == resolve.resolve(registry, name, {})


TABLES = """
[components.c]
kind = "cell"
factory = "m:C"
plugin = "p"
[architectures.a]
factory = "m:A"
plugin = "p"
slots = { cell = { kind = "cell", default = "c" } }
params = { vocab_size = 10, hidden_size = 4 }
vocabularies = { words = "vocab_size" }
"""


def test_a_preset_whose_base_does_not_parse_is_refused_with_its_table():
    with pytest.raises(RegistryError, match=r"presets.b: base 'a\+\+c'.*invalid component ''"):
        read_tables(TABLES + '[presets.b]\nbase = "a++c"\n')


def test_vocabulary_sizes_fix_their_hyperparameter_in_the_same_walk():
    registry = zoo.Registry(read_tables(TABLES))
    spec = resolve.resolve(registry, "a", {}, vocab_sizes=7)
    assert spec.params["vocab_size"] == 7
    assert resolve.resolve(registry, "a", {"vocab_size": 7}, vocab_sizes={"words": 7}) == spec
    with pytest.raises(UnknownParameterError, match="vocab_size=8 contradicts the 'words' vocabulary of 7 tokens"):
        resolve.resolve(registry, "a", {"vocab_size": 8}, vocab_sizes=7)
    with pytest.raises(UnknownParameterError, match=r"'a' has no vocabulary roles \['tags'\]; it has \['words'\]"):
        resolve.resolve(registry, "a", {}, vocab_sizes={"tags": 3})
    with pytest.raises(UnknownParameterError, match="hiden_size"):
        resolve.resolve(registry, "a", {"hiden_size": 3}, vocab_sizes=7)
