"""``zoo import FILE --as NAME.TAG`` and ``zoo models``: the local model store.

``zoo import`` checks a zoo file as `zoo.load` does (or converts a word2vec or
GloVe file, or one in a format a plugin reads, to a zoo vectors file) and stores it under a name, which
every command that takes a model file then accepts (``zoo vectors similar
glove.mine king``). ``zoo models`` lists what is stored; ``--remove NAME.TAG``
takes an entry out. The store is ``$ZOO_HOME`` (default: ``~/.cache/zoo``).
"""

from __future__ import annotations

import argparse
import fnmatch
from pathlib import Path

from zoo.cli.common import printable, table
from zoo.naming.domains import argument_type

__all__ = ["register"]

_count = argument_type("[1, inf)")


def register(sub: argparse._SubParsersAction) -> None:
    from zoo.building.intake import formats
    from zoo.naming.registry import Registry

    known = formats(Registry.from_catalogue())  # the built-in plugins' formats; others are accepted too
    p = sub.add_parser(
        "import",
        help="store a zoo file, or word vectors (word2vec, GloVe, a plugin's format), under a name (NAME.TAG)",
        description="Check FILE as zoo.load checks a zoo file (or convert word vectors to a zoo vectors file) "
        "and store it as NAME.TAG in the model store ($ZOO_HOME, default ~/.cache/zoo). Formats: "
        + "; ".join(f"{k}: {v}" for k, v in known.items())
        + "; and those of other installed plugins",
    )
    p.add_argument("file", type=Path, help="a zoo .safetensors file, or a word-vectors file")
    p.add_argument("--as", dest="name", required=True, metavar="NAME.TAG", help="the name to store it under")
    p.add_argument("--format", default="auto", metavar="FORMAT", help="the file's format (default: detected)")
    p.add_argument("--limit", type=_count, help="vectors: keep only the first (most frequent) words")
    p.add_argument("--replace", action="store_true", help="replace an entry of the same name")
    p.add_argument("--allow-nonfinite", action="store_true", help="store vectors holding NaN or infinity")
    p.set_defaults(run=run_import)

    p = sub.add_parser("models", help="what the model store holds: name, kind, architecture, size, source, date")
    p.add_argument("pattern", nargs="?", default="*", help="wildcard over names, e.g. 'glove.*'")
    p.add_argument("--remove", nargs="+", metavar="NAME.TAG", help="remove these entries")
    p.add_argument("--path", action="store_true", help="print the store's directory and the file of each entry")
    p.set_defaults(run=run_models)


def run_import(args: argparse.Namespace) -> int:
    from zoo.building.intake import import_file
    from zoo.building.store import check_name, default_store

    store = default_store()
    name = check_name(args.name)  # before reading a possibly large file
    entry = import_file(
        args.file, name, format=args.format, replace=args.replace, limit=args.limit, store=store,
        allow_nonfinite=args.allow_nonfinite,
    )  # fmt: skip
    shown = printable(f"{entry.name}: {entry.kind}, {entry.architecture}, {_size(entry.size)} ({entry.path})")
    print(f"stored {shown}")
    return 0


def run_models(args: argparse.Namespace) -> int:
    from zoo.building.store import check_name, default_store

    store = default_store()
    if args.remove:
        for name in args.remove:
            check_name(name)
        for name in args.remove:
            entry = store.remove(name)
            print(f"removed {entry.name} ({entry.kind}, {_size(entry.size)})")
        return 0
    entries = [e for n, e in store.entries().items() if fnmatch.fnmatchcase(n, args.pattern)]
    if args.path:
        print(f"store: {printable(store.root)}")
    if not entries:
        what = "nothing" if args.pattern == "*" else f"nothing matching {args.pattern!r}"
        print(f"the model store ({store.root}) holds {what}; add a file with `zoo import FILE --as NAME.TAG`")
        return 0
    rows = [
        (e.name, e.kind, e.architecture, _size(e.size), e.date[:10], str(e.path) if args.path else e.source or "?")
        for e in entries
    ]
    print(table(rows, ("NAME", "KIND", "ARCHITECTURE", "SIZE", "DATE", "FILE" if args.path else "SOURCE")))
    return 0


def _size(size: int) -> str:
    """Bytes as people read them: ``812 B``, ``3.4 KiB``, ``1.2 GiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
