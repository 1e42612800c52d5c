"""Shared fixtures: explicit registries and keys, never leaked global state."""

from __future__ import annotations

import warnings

import jax
import pytest

from zoo.plugins import PluginWarning
from zoo.registry import Registry, reset_default_registry


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
