"""``zoo list``, ``zoo info`` and ``zoo plugins``: what is there, without building anything."""

from __future__ import annotations

import argparse
import json

from zoo.cli.common import table
from zoo.errors import UnknownNameError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list model names (instant: loads no JAX, no plugin code)")
    p.add_argument("pattern", nargs="?", default="*", help="wildcard, e.g. 'seq2seq*'")
    p.add_argument("--components", action="store_true", help="list components instead of models")
    p.add_argument("--kind", help="only components of this kind (attention, cell, ...)")
    p.set_defaults(run=run_list)

    p = sub.add_parser("info", help="slots, defaults, plugin and version of a name")
    p.add_argument("name", help="a model (composite names too) or a component")
    p.set_defaults(run=run_info)

    p = sub.add_parser("plugins", help="every plugin with its distribution, version, status and load time")
    p.set_defaults(run=run_plugins)


def run_list(args: argparse.Namespace) -> int:
    from zoo.naming.registry import Registry

    registry = Registry.for_listing()
    if args.components or args.kind:
        names = registry.list_components(args.pattern, kind=args.kind)
        rows = [(n, registry.components[n].kind, registry.components[n].summary) for n in names]
        print(table(rows, ("COMPONENT", "KIND", "SUMMARY")) if rows else f"no components match {args.pattern!r}")
        return 0
    names = registry.list_models(args.pattern)
    rows = []
    for name in names:
        entry = registry.architectures.get(name) or registry.presets[name]
        rows.append((name, entry.summary))
    print(table(rows, ("MODEL", "SUMMARY")) if rows else f"no models match {args.pattern!r}")
    return 0


def _versions() -> dict[str, tuple[str | None, str | None]]:
    from zoo.naming.loader import discover_entry_points, record_for

    return {ep.name: (r.distribution, r.version) for ep in discover_entry_points() if (r := record_for(ep))}


def run_info(args: argparse.Namespace) -> int:
    from zoo.naming.registry import Registry

    registry = Registry.for_listing()
    versions = _versions()

    def who(plugin: str | None) -> str:
        dist, version = versions.get(plugin or "", (None, None))
        return f"{plugin} ({dist} {version})" if dist else str(plugin)

    if args.name in registry.components:
        entry = registry.components[args.name]
        print(f"{entry.name}: {entry.kind} component\n  {entry.summary}")
        if entry.paper:
            print(f"  paper: {entry.paper}")
        print(f"  plugin: {who(entry.plugin)}\n  factory: {entry.factory}")
        print(f"  hyperparameters: {json.dumps(dict(entry.params)) if entry.params else '(none)'}")
        return 0
    try:
        spec = registry.describe(args.name)
    except UnknownNameError:
        raise
    arch = registry.architectures[spec.arch]
    print(f"{spec.name}: {arch.summary}")
    if spec.preset:
        print(f"  preset of: {registry.presets[spec.preset].base}")
    if arch.paper:
        print(f"  paper: {arch.paper}")
    print(f"  plugin: {who(spec.plugin)}")
    print(f"  hyperparameters: {json.dumps(spec.params)}")
    print("  slots:")
    for slot in spec.slots:
        default = arch.slot(slot.slot).default
        mark = "" if slot.component == default else f" (default {default})"
        params = f" {json.dumps(slot.params)}" if slot.params else ""
        origin = f" from {who(slot.plugin)}" if slot.plugin else ""
        print(f"    {slot.slot} [{slot.kind}] = {slot.component}{mark}{params}{origin}")
    return 0


def _seconds(seconds: float | None) -> str:
    """A plugin's load time for the table (``-`` when it was not loaded)."""
    return "-" if seconds is None else f"{seconds:.2f}s"


def run_plugins(args: argparse.Namespace) -> int:
    import warnings

    from zoo.naming.loader import PluginWarning
    from zoo.naming.registry import Registry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # the table shows broken plugins
        registry = Registry.with_plugins()
    rows = [
        (r.name, r.distribution or "-", r.version or "-", r.status, _seconds(r.seconds), r.error or "")
        for r in sorted(registry.plugins.values(), key=lambda r: r.name)
    ]
    print(table(rows, ("PLUGIN", "DISTRIBUTION", "VERSION", "STATUS", "LOAD", "ERROR")))
    return 0
