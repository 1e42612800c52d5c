"""The harness the kit's own tests use: a real third-party plugin, run through the kit in-process."""

from __future__ import annotations

import jax
import pytest
from kit_harness import run_kit

import zoo.testing.session as kit_plugin

LUONG = "zoo_attention.multiplicative:LuongGeneralAttention"


@pytest.mark.slow  # the whole kit over copies of a built-in
def test_an_unchanged_copy_passes_and_a_broken_table_fails_the_named_check(tmp_path):
    before = dict(kit_plugin._REGISTRY)
    control = run_kit(tmp_path / "control", name="kit-luong-copy", kind="attention", factory=LUONG)
    control.assert_passes()
    checked = {o.id.split("::", 1)[0] for o in control if o.outcome == "passed"}
    assert {"TestComponents", "TestAttention", "TestModels"} <= checked, control.table()
    assert any("seq2seq+kit-luong-copy" in o.id for o in control), "the copy was not checked in a host model"
    assert control.exit_code == 0
    assert "zoo conformance kit:" in control.summary

    # a hyperparameter the factory does not accept: a broken registration, caught first by its own check
    broken = run_kit(
        tmp_path / "broken",
        name="kit-luong-bad-params",
        factory=LUONG,
        params={"temperature": 1.0},
        domains={"temperature": "(0, inf)"},
        select="TestComponents",
    )
    caught = broken.assert_caught("test_params_match_factory_signature", "temperature", "not arguments")
    assert caught.outcome == "failed"
    assert broken.exit_code == 1
    # the kit's session registry and JAX's configuration are as they were
    assert kit_plugin._REGISTRY.keys() == before.keys()
    assert not jax.config.values["jax_enable_x64"]
