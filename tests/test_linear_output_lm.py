"""The language-model family's linear output layer: `__call__`'s logits are ``features W^T + b``."""

import jax
import pytest

import zoo
from zoo.testing.base import assert_trees_close


@pytest.mark.parametrize("name", ["lstm-lm", "tcn-lm"])
def test_logits_are_the_features_through_the_output_layer(name):
    model = zoo.build(name, key=jax.random.key(0), vocab_size=11, **_small(name))
    batch = model.example_batch(key=jax.random.key(1), batch_size=2, length=8)
    ids, mask = batch["ids"][0], batch["mask"][0]
    features, _ = model.features(ids, mask, model.init_state())
    weight, bias = model.output_layer()
    logits, _ = model(ids, mask, model.init_state())
    assert features.shape == (8, weight.shape[1])
    assert_trees_close(
        features @ weight.T + bias, logits, atol=1e-5, what=f"{name}: features W^T + b against the logits"
    )


def _small(name):
    if name == "tcn-lm":
        return {"hidden_size": 8, "embedding_size": 8, "num_levels": 2, "kernel_size": 2}
    return {"hidden_size": 8, "embedding_size": 8}
