"""Plugin objects for the loader tests (registered through synthetic entry points)."""

from __future__ import annotations

import sys
import time

from zoo.naming.hookspecs import hookimpl

DOT_COPY = """
[components.dot-copy]
kind = "attention"
factory = "zoo_attention.multiplicative:LuongDotAttention"
summary = "Luong's dot attention under another name"
"""


class Registers:
    def __init__(self, tables: str) -> None:
        self.tables = tables

    @hookimpl
    def zoo_register_tables(self, register):
        register(self.tables)


class RaisesOnRegister:
    @hookimpl
    def zoo_register_tables(self, register):
        raise RuntimeError("cannot reach the model server")


class Throws:
    """Raises `error` from its registration hook (a `BaseException`: ``SystemExit``, ``GeneratorExit``, ...)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @hookimpl
    def zoo_register_tables(self, register):
        raise self.error


class ExitsOnRegister:
    @hookimpl
    def zoo_register_tables(self, register):
        sys.exit("no GPU here")


class SlowToRegister(Registers):
    """Registers its tables after `seconds` (as a plugin reaching for a network resource would)."""

    def __init__(self, tables: str, seconds: float) -> None:
        super().__init__(tables)
        self.seconds = seconds

    @hookimpl
    def zoo_register_tables(self, register):
        time.sleep(self.seconds)
        register(self.tables)


class MisspeltHook:
    @hookimpl
    def zoo_register_tabels(self, register):  # the typo is the point
        register(DOT_COPY)


class ProvidesWeights:
    def __init__(self, path) -> None:
        self.path = path

    @hookimpl
    def zoo_resolve_weights(self, name, tag):
        return self.path if (name, tag) == ("seq2seq", "tiny") else None


class RenamesTensors:
    """Migrates files whose tensor ``decoder.out.weight`` was renamed ``decoder.output.weight``."""

    @hookimpl
    def zoo_migrate_weights(self, metadata, tensors):
        for old in [k for k in tensors if k.startswith("decoder.out.")]:
            tensors["decoder.output." + old[len("decoder.out.") :]] = tensors.pop(old)


good = Registers(DOT_COPY)
same_name = Registers(DOT_COPY)
bad_toml = Registers("[components.x\nkind=")
claims_other = Registers(DOT_COPY.replace("summary", 'plugin = "lstm"\nsummary'))
raises = RaisesOnRegister()
exits = ExitsOnRegister()
exits_zero = Throws(SystemExit(0))
generator_exit = Throws(GeneratorExit())
interrupted = Throws(KeyboardInterrupt())
slow = SlowToRegister(DOT_COPY, 0.3)
misspelt = MisspeltHook()
