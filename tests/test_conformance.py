"""Every installed plugin against the conformance kit (parametrized by zoo's pytest plugin)."""

from zoo.testing.suite import *  # noqa: F403  (pytest collects the kit's classes from here)
