"""Name resolution against a small registry of our own (no plugin code runs)."""

import pytest

from zoo.errors import (
    NameSyntaxError,
    PluginConflictError,
    RegistryError,
    UnknownNameError,
    UnknownParameterError,
)
from zoo.naming.registry import Registry
from zoo.naming.spec import ModelSpec
from zoo.naming.tables import read_tables

TABLES = """
[components.tok]
kind = "embedder"
factory = "m:Tok"
params = { embedding_size = 16, dropout = 0.0 }

[components.lstm]
kind = "cell"
factory = "m:LSTM"
params = { forget_bias = 1.0 }

[components.gru]
kind = "cell"
factory = "m:GRU"

[components.rec]
kind = "encoder"
factory = "m:Rec"
params = { hidden_size = 32, num_layers = 1, bidirectional = false }

[components.dec]
kind = "decoder"
factory = "m:Dec"
params = { hidden_size = 32, num_layers = 1 }

[components.add]
kind = "attention"
factory = "m:Add"
params = { attention_size = 10 }

[components.dot]
kind = "attention"
factory = "m:Dot"

[architectures.s2s]
factory = "m:S2S"
vocabularies = { src = "src_vocab_size" }
[architectures.s2s.params]
src_vocab_size = 100
hidden_size = 64
rate = 0.5
encoder = { num_layers = 2 }
attention = { attention_size = 20 }
[architectures.s2s.slots]
embedder = { kind = "embedder", default = "tok" }
cell = { kind = "cell", default = "lstm" }
encoder = { kind = "encoder", default = "rec" }
decoder = { kind = "decoder", default = "dec" }
attention = { kind = "attention", default = "none", optional = true }

[architectures.twin]
factory = "m:Twin"
[architectures.twin.slots]
left = { kind = "cell", default = "lstm" }
right = { kind = "cell", default = "lstm" }

[presets.s2s-small]
base = "s2s+dot"
params = { hidden_size = 8, "encoder.bidirectional" = true }

[presets.s2s-tiny]
base = "s2s-small+gru"
params = { "encoder.hidden_size" = 4 }
"""


@pytest.fixture
def reg() -> Registry:
    return Registry(read_tables(TABLES, plugin="samples"))


def test_a_component_fills_the_slot_of_its_kind(reg):
    spec = reg.describe("s2s+gru+add")
    assert spec.slot("cell").component == "gru"
    assert spec.slot("attention").component == "add"
    assert spec.slot("encoder").component == "rec"
    assert spec.name == "s2s+gru+add"


def test_defaults_give_the_bare_name_and_empty_optional_slot(reg):
    spec = reg.describe("s2s")
    assert spec.name == "s2s"
    assert spec.slot("attention").is_empty
    assert spec.slot("attention").partial() is None


def test_slot_equals_component_resolves_ambiguity(reg):
    with pytest.raises(RegistryError, match=r"fits several slots.*'\+left=gru', '\+right=gru'"):
        reg.describe("twin+gru")
    spec = reg.describe("twin+right=gru")
    assert (spec.slot("left").component, spec.slot("right").component) == ("lstm", "gru")
    assert spec.name == "twin+right=gru"
    assert reg.describe(spec.name) == spec


def test_empty_slot_rules(reg):
    assert reg.describe("s2s+dot+attention=none").name == "s2s"
    with pytest.raises(NameSyntaxError, match="slot=none"):
        reg.describe("s2s+none")
    with pytest.raises(RegistryError, match="cannot be empty"):
        reg.describe("s2s+cell=none")


def test_wrong_kind_for_an_explicit_slot(reg):
    with pytest.raises(RegistryError, match="slot 'cell' takes a cell, but 'dot' is a attention"):
        reg.describe("s2s+cell=dot")


def test_unknown_names_suggest_close_ones(reg):
    with pytest.raises(UnknownNameError, match="unknown component 'gruu'. Did you mean 'gru'"):
        reg.describe("s2s+gruu")
    with pytest.raises(UnknownNameError, match="unknown model 's2z'. Did you mean 's2s'"):
        reg.describe("s2z")
    with pytest.raises(UnknownNameError, match="no slot 'atention'.*Did you mean 'attention'"):
        reg.describe("s2s+atention=dot")
    with pytest.raises(UnknownNameError, match="component of kind 'attention', not a model"):
        reg.describe("dot")
    with pytest.raises(UnknownNameError, match="is a model, not a component"):
        reg.describe("s2s+s2s-small")


def test_merge_order_component_arch_preset_override(reg):
    spec = reg.describe("s2s+add")
    assert spec.slot("encoder").params["num_layers"] == 2  # architecture beats component default
    assert spec.slot("attention").params["attention_size"] == 20
    spec = reg.describe("s2s+add", **{"attention.attention_size": 5})
    assert spec.slot("attention").params["attention_size"] == 5  # override beats architecture


def test_unscoped_override_broadcasts_and_scoped_wins(reg):
    spec = reg.describe("s2s", **{"encoder.hidden_size": 7, "hidden_size": 9})
    assert spec["hidden_size"] == 9
    assert spec.slot("decoder").params["hidden_size"] == 9
    assert spec.slot("encoder").params["hidden_size"] == 7


def test_override_types_are_checked(reg):
    assert reg.describe("s2s", rate=1)["rate"] == 1.0  # int widens to float
    with pytest.raises(UnknownParameterError, match="encoder.num_layers must be int"):
        reg.describe("s2s", **{"encoder.num_layers": 2.5})
    with pytest.raises(UnknownParameterError, match="encoder.bidirectional must be bool"):
        reg.describe("s2s", **{"encoder.bidirectional": "yes"})


def test_unknown_overrides_list_valid_keys(reg):
    with pytest.raises(UnknownParameterError, match=r"'hiden_size'.*valid keys.*Did you mean 'hidden_size'"):
        reg.describe("s2s", hiden_size=3)
    with pytest.raises(UnknownParameterError, match=r"encoder.num_layer .*Did you mean 'encoder.num_layers'"):
        reg.describe("s2s", **{"encoder.num_layer": 3})
    with pytest.raises(UnknownParameterError, match="no slot 'encodr'"):
        reg.describe("s2s", **{"encodr.num_layers": 3})
    with pytest.raises(UnknownParameterError, match="attention.attention_size"):
        reg.describe("s2s+dot", **{"attention.attention_size": 3})  # dot has no such parameter


def test_presets_chain_and_name_relative_to_preset(reg):
    spec = reg.describe("s2s-tiny")
    assert spec.preset == "s2s-tiny"
    assert spec.slot("attention").component == "dot"
    assert spec.slot("cell").component == "gru"
    assert spec["hidden_size"] == 8
    assert spec.slot("encoder").params == {"hidden_size": 4, "num_layers": 2, "bidirectional": True}
    assert reg.describe("s2s-small+add").name == "s2s-small+add"
    assert reg.describe("s2s-small+dot").name == "s2s-small"


def test_preset_cycles_are_reported():
    cyclic = TABLES + '\n[presets.a]\nbase = "b"\n[presets.b]\nbase = "a+dot"\n'
    with pytest.raises(RegistryError, match="cycle: a -> b -> a"):
        Registry(read_tables(cyclic, plugin="samples")).describe("a")


def test_spec_json_round_trip_and_hash(reg):
    spec = reg.describe("s2s-small+add", rate=0.25)
    again = ModelSpec.from_json(spec.to_json())
    assert again == spec
    assert hash(again) == hash(spec)
    assert again.to_json() == spec.to_json()


def test_listing_with_wildcards_and_exclusions(reg):
    assert reg.list_models() == ["s2s", "s2s-small", "s2s-tiny", "twin"]
    assert reg.list_models("s2s*", exclude="*tiny") == ["s2s", "s2s-small"]
    assert reg.list_components(kind="attention") == ["add", "dot"]
    assert reg.list_components("*u") == ["gru"]


def test_a_name_claimed_twice_is_contested():
    reg = Registry(read_tables(TABLES, plugin="first"))
    contested = reg.add_tables(read_tables('[components.dot]\nkind="attention"\nfactory="x:Y"\n', plugin="second"))
    assert contested == ["dot"]
    with pytest.raises(PluginConflictError, match="'first', 'second'.*ZOO_DISABLE_PLUGINS=second"):
        reg.describe("s2s+dot")
    assert reg.describe("s2s+add").name == "s2s+add"  # everything else still resolves


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[components.x]\nkind = "cell"\n', "'factory' must be a non-empty string"),
        ('[components.x]\nkind = "cell"\nfactory = "a:B"\ncolour = 1\n', r"unknown keys \['colour'\]"),
        ('[architectures.a]\nfactory = "a:B"\nparams = { enc = { x = 1 } }\n', "no slot named 'enc'"),
        ('[architectures.a]\nfactory = "a:B"\nvocabularies = { src = "n" }\n', "'n' is not in params"),
        ("[components.x\n", "invalid TOML"),
        ('[components.X]\nkind = "cell"\nfactory = "a:B"\n', "not a valid name"),
        ("[widgets.x]\n", r"unknown keys \['widgets'\]"),
    ],
)
def test_malformed_tables_are_rejected_with_the_key(toml, message):
    with pytest.raises(RegistryError, match=message):
        read_tables(toml, plugin="p")


def test_roles_name_a_known_role_of_the_kind_played_by_one_of_its_params():
    from zoo.naming.tables import read_tables

    base = '[components.x]\nkind = "strategy"\nfactory = "m:X"\nparams = { p = 1.0 }\n'
    assert read_tables(base + 'roles = { top_p = "p" }\n', plugin="x").components["x"].roles == {"top_p": "p"}
    with pytest.raises(RegistryError, match=r"components.x.roles: unknown role 'top_q' for a strategy.*top_p"):
        read_tables(base + 'roles = { top_q = "p" }\n', plugin="x")
    with pytest.raises(RegistryError, match=r"components.x.roles.top_p: 'q' is not in params"):
        read_tables(base + 'roles = { top_p = "q" }\n', plugin="x")
    cell = base.replace('"strategy"', '"cell"')
    with pytest.raises(RegistryError, match=r"unknown role 'top_p' for a cell; roles: dropout"):
        read_tables(cell + 'roles = { top_p = "p" }\n', plugin="x")
