import pytest

from zoo.errors import NameSyntaxError
from zoo.naming.names import ParsedName, parse_name


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("seq2seq", ParsedName("seq2seq", ())),
        ("seq2seq+luong-general", ParsedName("seq2seq", ((None, "luong-general"),))),
        ("seq2seq+gru+bahdanau+beam", ParsedName("seq2seq", ((None, "gru"), (None, "bahdanau"), (None, "beam")))),
        ("seq2seq+attention=none", ParsedName("seq2seq", (("attention", "none"),))),
        ("lstm-lm.ptb", ParsedName("lstm-lm", (), "ptb")),
        (" seq2seq+rnn ", ParsedName("seq2seq", ((None, "rnn"),))),
    ],
)
def test_parse_and_round_trip(name, parsed):
    assert parse_name(name) == parsed
    assert parse_name(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "non-empty"),
        ("Seq2Seq", "invalid architecture 'Seq2Seq'"),
        ("seq2seq+", "invalid component ''"),
        ("seq2seq+attention=", "invalid component ''"),
        ("seq2seq+=luong", "invalid slot ''"),
        ("seq2seq.t@g", "invalid tag"),
        ("seq2seq+luong general", "invalid component 'luong general'"),
    ],
)
def test_syntax_errors_name_the_part(name, fragment):
    with pytest.raises(NameSyntaxError, match=fragment):
        parse_name(name)
