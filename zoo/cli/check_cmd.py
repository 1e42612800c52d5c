"""``zoo check [PLUGIN ...] [-- PYTEST-ARGS ...]``: run the conformance kit over plugins' components."""

from __future__ import annotations

import argparse

from zoo.errors import InvalidParameterError

__all__ = ["host_options", "register", "split_arguments"]

USAGE = "zoo check [-h] [PLUGIN ...] [--host ARCH ...] [--every-host] [-- PYTEST-ARGS ...]"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="run the conformance kit over plugins (needs pytest)",
        usage=USAGE,
        description=(
            "Run the conformance kit over the components and models of each PLUGIN (default: every loaded "
            "plugin). A third-party component is checked in every built-in architecture that takes its kind; "
            "'--host ARCH' (repeatable) checks it in ARCH only, '--every-host' checks built-in components in "
            "every architecture too. Arguments after '--' (or from the first other option on) go to pytest, "
            "e.g. 'zoo check my-plugin -- -x -k Attention'; 'zoo check my-plugin -- -v' lists every check."
        ),
    )
    p.set_defaults(run=run, passthrough=True)  # the arguments are split by `split_arguments`, not argparse


def split_arguments(arguments: list[str]) -> tuple[list[str], list[str]]:
    """``(plugin names, pytest arguments)``: names up to the first ``--`` or option, then the rest
    (without that first ``--``)."""
    for i, argument in enumerate(arguments):
        if argument == "--":
            return arguments[:i], arguments[i + 1 :]
        if argument.startswith("-"):
            return arguments[:i], arguments[i:]
    return list(arguments), []


def host_options(arguments: list[str]) -> tuple[list[str], bool, list[str]]:
    """``(hosts, every_host, the other arguments)``: zoo check's own ``--host ARCH`` (or
    ``--host=ARCH``) and ``--every-host``, taken from before the first ``--``."""
    hosts, every_host, rest = [], False, []
    i = 0
    while i < len(arguments):
        argument = arguments[i]
        if argument == "--":
            rest += arguments[i:]
            break
        if argument == "--every-host":
            every_host = True
        elif argument == "--host":
            if i + 1 == len(arguments) or arguments[i + 1].startswith("-"):
                raise InvalidParameterError("zoo check: --host needs the name of an architecture (zoo list lists them)")
            hosts.append(arguments[i + 1])
            i += 1
        elif argument.startswith("--host="):
            hosts.append(argument.split("=", 1)[1])
        else:
            rest.append(argument)
        i += 1
    return hosts, every_host, rest


def run(args: argparse.Namespace) -> int:
    try:
        import pytest
    except ImportError:
        print("zoo check needs pytest: pip install 'zoo[test]'")
        return 2
    hosts, every_host, rest = host_options(args.rest)
    plugins, pytest_args = split_arguments(rest)
    _check_installed(plugins)
    # zoo is imported before pytest starts here, so assertion rewriting cannot apply to it
    verbose = any(a == "--verbose" or (a.startswith("-v") and set(a[1:]) == {"v"}) for a in pytest_args)
    argv = [
        "--pyargs",
        "zoo.testing.suite",
        *([] if verbose else ["-q"]),  # -q would cancel the user's -v: '-- -v' lists every check
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
    ]
    for name in plugins:
        argv += ["--zoo-plugin", name]
    for name in hosts:
        argv += ["--zoo-host", name]
    argv += ["--zoo-every-host"] if every_host else []
    return int(pytest.main(argv + pytest_args))


def _check_installed(plugins: list[str]) -> None:
    """Raise `UnknownNameError` for a name no installed entry point has (before pytest starts,
    so one message says so, not one collection error per kit class)."""
    from zoo.errors import UnknownNameError, close_matches
    from zoo.naming.loader import discover_entry_points

    installed = sorted({ep.name for ep in discover_entry_points()})
    for name in plugins:
        if name not in installed:
            raise UnknownNameError(
                f"no plugin named {name!r} is installed.{close_matches(name, installed)} "
                f"Installed plugins (zoo plugins lists them): {', '.join(installed)}"
            )
