"""A build parses its name once and follows its presets once."""

import jax
import pytest

import zoo
from zoo.naming import names, resolve


def test_a_build_parses_the_name_once_and_expands_presets_once(monkeypatch):
    parses, expansions = [], []
    real_parse, real_expand = names.parse_name, resolve._expand

    def counting_parse(text):
        parses.append(text)
        return real_parse(text)

    def counting_expand(registry, name, seen=()):
        if not seen:
            expansions.append(name)
        return real_expand(registry, name, seen)

    from zoo.building import builder

    monkeypatch.setattr(builder, "parse_name", counting_parse)
    monkeypatch.setattr(resolve, "parse_name", counting_parse)
    monkeypatch.setattr(resolve, "_expand", counting_expand)
    model = zoo.build("seq2seq-reversal+luong-general", key=jax.random.key(0), **{"encoder.hidden_size": 8})
    assert model.spec.slot("encoder").params["hidden_size"] == 8
    user_parses = [p for p in parses if p == "seq2seq-reversal+luong-general"]
    assert user_parses == ["seq2seq-reversal+luong-general"]
    assert expansions == ["seq2seq-reversal"]


@pytest.mark.parametrize("name", ["seq2seq+luong-general", "seq2seq-reversal+attention=luong-dot"])
def test_a_parsed_name_resolves_like_its_text(name):
    registry = zoo.Registry()
    registry.load_plugins()
    parsed = names.parse_name(name)
    expanded = resolve.expand(registry, parsed)
    assert resolve.resolve(registry, parsed, {}, expanded=expanded) == resolve.resolve(registry, name, {})
