"""Shared fixtures: explicit registries and keys, never leaked global state."""

from __future__ import annotations

import os

# Tests run tiny models for a few steps: XLA's optimisation passes cost more than
# they save there. Set before JAX starts, so subprocesses inherit it too.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")

import warnings

import jax
import pytest
from hypothesis import settings

from zoo.naming.loader import PluginWarning
from zoo.naming.registry import Registry, reset_default_registry

# Property-based tests: a few dozen examples in the default run; `--hypothesis-profile=slow` for thousands.
settings.register_profile("zoo", max_examples=25, deadline=None)
settings.register_profile("slow", max_examples=2000, deadline=None)
settings.load_profile("zoo")


def _optimised_while(node):
    """Full XLA optimisation for tests marked `xla_optimised` (long training runs)."""
    if node.get_closest_marker("xla_optimised") is None:
        yield
        return
    before = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", False)
    try:
        yield
    finally:
        jax.config.update("jax_disable_most_optimizations", before)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    """The kit's model checks of a composite name (a component in its host, ``lm+gru``) run in
    the slow tier; every architecture's own model checks and every component's checks stay in
    the default run, so the default run checks each built-in once."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        model = callspec.params.get("zoo_model") if callspec else None
        if item.path.name == "test_conformance.py" and isinstance(model, str) and "+" in model:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module", autouse=True)
def _xla_optimised_module(request):
    yield from _optimised_while(request.node)


@pytest.fixture(autouse=True)
def _xla_optimised_test(request):
    yield from _optimised_while(request.node)


@pytest.fixture
def getkey():
    """A fresh PRNG key per call, deterministic per test."""
    keys = iter(jax.random.split(jax.random.key(0), 1000))
    return lambda: next(keys)


@pytest.fixture(scope="session")
def registry() -> Registry:
    """Every installed plugin loaded into a registry of the test session's own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        return Registry.with_plugins()


@pytest.fixture
def fresh_default_registry():
    """Reset the process-wide registry before and after a test that changes the environment."""
    reset_default_registry()
    yield
    reset_default_registry()


@pytest.fixture(scope="session")
def small_seq2seq(registry):
    """A tiny seq2seq+luong-general over the digit vocabulary, for tests of files and loading."""
    import zoo
    from zoo_seq2seq.tasks import digit_vocab

    vocab = digit_vocab()
    return zoo.build(
        "seq2seq+luong-general",
        key=jax.random.key(0),
        registry=registry,
        vocab={"src": vocab, "tgt": vocab},
        hidden_size=6,
        embedding_size=5,
    )


@pytest.fixture
def with_tables(registry, monkeypatch):
    """``with_tables(TOML, plugin)``: the installed plugins plus a test's own tables (their hooks too),
    made the process-wide registry for the test."""
    from zoo.naming import registry as registry_module
    from zoo.naming.tables import read_tables

    def plug(text: str, plugin: str) -> Registry:
        ours = Registry()
        ours.plugins.update(registry.plugins)
        for section in ("components", "architectures", "presets", "formats", "subwords", "exports"):
            getattr(ours, section).update(getattr(registry, section))
        ours.providers.update(registry.providers)
        ours.extension_providers.update(registry.extension_providers)
        ours.manager = registry.manager
        ours.add_tables(read_tables(text, plugin=plugin), plugin=plugin)
        monkeypatch.setattr(registry_module, "_DEFAULT", ours)
        return ours

    return plug
