"""Follow a name through the code: the modules one `zoo.build(name)` enters, call by call.

    python tests/name_walk.py seq2seq seq2seq-reversal+luong-general

A *move* is a call from a function of one module (a file under ``zoo/`` or
``plugins/``) into a function of another. The caller is the nearest frame in
those files, so a call made through the standard library or a third-party
package (a context manager, pluggy) counts from the zoo frame that made it.
A loop that calls from one module into another again and again (a lookup per
slot) is one move: consecutive repeats of the same (caller, callee) pair count
once. A *return* is a move into a module the walk had already been in.

The *name's walk* is every move but those the architecture's factory makes
once called: building its components from ``spec.slots`` is the
architecture's own code, the same for a spec read from a file, and is counted
in the *whole build* only. `parse_name` calls are counted over the whole build.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Move:
    caller: str | None  # None: the call into zoo from outside
    callee: str
    function: str
    in_factory: bool  # made by the architecture's factory (or below it)


@dataclass(frozen=True)
class Figures:
    moves: int
    returns: int
    modules: int
    entries: dict[str, int]  # module -> times entered

    def line(self) -> str:
        again = ", ".join(f"{Path(m).name} {n}" for m, n in sorted(self.entries.items(), key=lambda x: -x[1]) if n > 1)
        return f"{self.moves} moves, {self.returns} returns, {self.modules} modules (entered more than once: {again})"


def _tracked(filename: str, cache: dict[str, str | None]) -> str | None:
    """The module `filename` is, relative to the repository, if it is part of zoo or its plugins."""
    if filename not in cache:
        try:
            rel = Path(filename).resolve().relative_to(ROOT)
        except ValueError:
            rel = None
        cache[filename] = rel.as_posix() if rel is not None and rel.parts[0] in ("zoo", "plugins") else None
    return cache[filename]


def trace_build(name: str, **build_kwargs: Any) -> tuple[list[Move], int]:
    """The moves of one `zoo.build(name, **build_kwargs)` and its `parse_name` calls.

    The build runs once untraced first, so imports and the first loading of
    plugins are not part of the walk.
    """
    import jax

    import zoo
    from zoo.naming import names

    zoo.build(name, key=jax.random.key(0), **build_kwargs)
    factory_module = zoo.describe(name.split(".")[0]).factory.partition(":")[0]
    factory_file = _tracked(sys.modules[factory_module].__file__, {})
    parse_code = names.parse_name.__code__
    cache: dict[str, str | None] = {}
    moves: list[Move] = []
    parses = 0
    factory_frame = None

    def profile(frame, event, arg):
        nonlocal parses, factory_frame
        if event == "return" and frame is factory_frame:
            factory_frame = None
        if event != "call":
            return
        callee = _tracked(frame.f_code.co_filename, cache)
        if callee is None:
            return
        parses += frame.f_code is parse_code
        caller_frame = frame.f_back
        while caller_frame is not None and _tracked(caller_frame.f_code.co_filename, cache) is None:
            caller_frame = caller_frame.f_back
        caller = None if caller_frame is None else _tracked(caller_frame.f_code.co_filename, cache)
        if caller == callee:
            return
        moves.append(Move(caller, callee, frame.f_code.co_name, factory_frame is not None))
        if factory_frame is None and callee == factory_file and (caller or "").startswith("zoo/"):
            factory_frame = frame

    sys.setprofile(profile)
    try:
        zoo.build(name, key=jax.random.key(0), **build_kwargs)
    finally:
        sys.setprofile(None)
    return moves, parses


def figures(moves: list[Move]) -> Figures:
    """Moves (consecutive repeats of one caller-callee pair counted once), returns and modules."""
    walk: list[Move] = []
    for move in moves:
        if not walk or (walk[-1].caller, walk[-1].callee) != (move.caller, move.callee):
            walk.append(move)
    been: set[str | None] = set()
    returns = 0
    for move in walk:
        been.add(move.caller)
        returns += move.callee in been
        been.add(move.callee)
    entries = Counter(m.callee for m in walk)
    return Figures(len(walk) - 1, returns, len(been - {None}), dict(entries))


def name_walk(moves: list[Move]) -> Figures:
    """The figures of the name's walk: the moves the architecture's factory makes left out."""
    return figures([m for m in moves if not m.in_factory])


def main(argv: list[str]) -> int:
    for name in argv or ["seq2seq"]:
        moves, parses = trace_build(name)
        print(f"zoo.build({name!r}): parse_name {parses}x")
        print(f"  name's walk:  {name_walk(moves).line()}")
        print(f"  whole build:  {figures(moves).line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
