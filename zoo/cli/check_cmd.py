"""``zoo check PLUGIN ...``: run the conformance kit over a plugin's components."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="run the conformance kit over plugins (needs pytest)")
    p.add_argument("plugins", nargs="*", help="plugin names (default: every loaded plugin)")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: extra pytest arguments")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import pytest
    except ImportError:
        print("zoo check needs pytest: pip install 'zoo[test]'")
        return 2
    # zoo is imported before pytest starts here, so assertion rewriting cannot apply to it
    argv = [
        "--pyargs",
        "zoo.testing.suite",
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
    ]
    for name in args.plugins:
        argv += ["--zoo-plugin", name]
    extra = [a for a in args.pytest_args if a != "--"]
    return int(pytest.main(argv + extra))
