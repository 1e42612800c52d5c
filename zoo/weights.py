"""Weights as one safetensors file that rebuilds its model.

Tensor keys are dotted paths of the module's array leaves
(``decoder.attention.weight``). String metadata: ``zoo.format``, ``zoo.name``
(canonical), ``zoo.spec`` (resolved spec as JSON), ``zoo.versions`` (plugin
versions as JSON), ``zoo.vocabs`` (special tokens per vocabulary role),
``zoo.aliases`` (tensors stored once for several leaves), ``zoo.sha256`` (a
checksum of every tensor, so a modified or corrupted file is detected).
Vocabularies travel as tensors under ``__zoo__.vocab.<role>.``. Writes are atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from safetensors import SafetensorError, safe_open

from zoo.data.vocab import Vocab, Vocabularies
from zoo.errors import WeightsError, ZooError
from zoo.files import write_atomic
from zoo.registry import Registry, default_registry
from zoo.spec import ModelSpec

__all__ = ["FORMAT_VERSION", "RESERVED_PREFIX", "array_paths", "load", "read_file", "save", "write_atomic"]

FORMAT_VERSION = 1
RESERVED_PREFIX = "__zoo__."
_VOCAB_PREFIX = RESERVED_PREFIX + "vocab."


def _key_name(entry: Any) -> str:
    for attr in ("name", "key", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    raise WeightsError(f"cannot name tree path entry {entry!r}")


def array_paths(tree: Any, is_leaf=None) -> list[tuple[str, Any]]:
    """``(dotted path, leaf)`` for every array (or `ShapeDtypeStruct`) leaf of `tree`."""

    def is_array(x: Any) -> bool:
        return isinstance(x, jax.Array | np.ndarray | jax.ShapeDtypeStruct)

    arrays = eqx.filter(tree, is_array, is_leaf=is_leaf)
    flat = jax.tree_util.tree_flatten_with_path(arrays, is_leaf=is_leaf)[0]
    return [(".".join(_key_name(p) for p in path), leaf) for path, leaf in flat if leaf is not None]


def checksum(tensors: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in key order."""
    digest = hashlib.sha256()
    for key in sorted(tensors):
        array = np.ascontiguousarray(tensors[key])
        digest.update(f"{key}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _plugin_versions(spec: ModelSpec, registry: Registry | None) -> dict[str, str | None]:
    plugins = {spec.plugin} | {s.plugin for s in spec.slots if s.plugin}
    versions: dict[str, str | None] = {}
    for plugin in sorted(p for p in plugins if p):
        record = registry.plugins.get(plugin) if registry is not None else None
        versions[plugin] = record.version if record is not None else None
    return versions


def model_tensors(model: Any) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The model's arrays by dotted path, plus aliases for leaves shared by identity."""
    tensors: dict[str, np.ndarray] = {}
    aliases: dict[str, str] = {}
    seen: dict[int, str] = {}
    for key, leaf in array_paths(model):
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            raise WeightsError(f"{key}: PRNG key arrays cannot be saved; store jax.random.key_data")
        if id(leaf) in seen:
            aliases[key] = seen[id(leaf)]
            continue
        seen[id(leaf)] = key
        tensors[key] = np.asarray(leaf)
    return tensors, aliases


def save(
    model: Any,
    path: str | os.PathLike,
    *,
    metadata: Mapping[str, str] | None = None,
    tensors: Mapping[str, np.ndarray] | None = None,
    registry: Registry | None = None,
) -> Path:
    """Write `model` to `path` as one safetensors file that rebuilds it.

    `metadata` and `tensors` add entries (tensor keys must start with
    ``__zoo__.``); checkpoints use them for optimiser state. Returns the path.
    """
    spec = getattr(model, "spec", None)
    if not isinstance(spec, ModelSpec):
        raise WeightsError(f"zoo.save needs a model built by zoo (with a .spec), got {type(model).__name__}")
    path = Path(path)
    arrays, aliases = model_tensors(model)
    vocabs: Mapping[str, Vocab] = getattr(model, "vocabs", None) or {}
    for role, vocab in vocabs.items():
        for part, array in vocab.to_arrays().items():
            arrays[f"{_VOCAB_PREFIX}{role}.{part}"] = array
    for key, array in (tensors or {}).items():
        if not key.startswith(RESERVED_PREFIX):
            raise WeightsError(f"extra tensor {key!r} must start with {RESERVED_PREFIX!r}")
        arrays[key] = np.asarray(array)
    from zoo import __version__

    meta = {
        "zoo.format": str(FORMAT_VERSION),
        "zoo.version": __version__,
        "zoo.name": spec.name,
        "zoo.spec": spec.to_json(),
        "zoo.versions": json.dumps(_plugin_versions(spec, registry or _registry_if_loaded())),
        "zoo.vocabs": json.dumps({role: v.specials for role, v in vocabs.items()}),
        "zoo.aliases": json.dumps(aliases),
        "zoo.sha256": checksum(arrays),
        **dict(metadata or {}),
    }
    write_atomic(path, arrays, meta)
    return path


def _registry_if_loaded() -> Registry | None:
    from zoo import registry as _registry

    return _registry._DEFAULT


def read_file(path: str | os.PathLike) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Read all metadata and tensors; `WeightsError` if it is not a readable zoo file."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"no weights file at {path}")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = dict(handle.metadata() or {})
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise WeightsError(f"{path} is not a readable safetensors file (truncated or corrupted?): {error}") from error
    if "zoo.format" not in metadata:
        raise WeightsError(
            f"{path} is a safetensors file but not a zoo weights file (no 'zoo.format' metadata); "
            "save models with zoo.save"
        )
    try:
        version = int(metadata["zoo.format"])
    except ValueError as error:
        raise WeightsError(f"{path}: bad zoo.format {metadata['zoo.format']!r}") from error
    if version > FORMAT_VERSION:
        raise WeightsError(f"{path} uses zoo format {version}; this zoo reads up to {FORMAT_VERSION}: upgrade zoo")
    if "zoo.sha256" in metadata and checksum(tensors) != metadata["zoo.sha256"]:
        raise WeightsError(
            f"{path}: the tensors do not match the file's checksum: it was modified or corrupted after saving"
        )
    return metadata, tensors


def _json(metadata: Mapping[str, str], key: str, path: Path, default: str = "{}") -> Any:
    try:
        return json.loads(metadata.get(key, default))
    except json.JSONDecodeError as error:
        raise WeightsError(f"{path}: metadata {key!r} is not valid JSON (tampered?): {error}") from error


def _vocabularies(metadata: Mapping[str, str], tensors: dict[str, np.ndarray], path: Path) -> Vocabularies:
    specials = _json(metadata, "zoo.vocabs", path)
    vocabs = {}
    for role, role_specials in specials.items():
        prefix = f"{_VOCAB_PREFIX}{role}."
        parts = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
        try:
            vocabs[role] = Vocab.from_arrays(parts, role_specials)
        except (KeyError, ZooError, UnicodeDecodeError) as error:
            raise WeightsError(f"{path}: vocabulary {role!r} is damaged: {error}") from error
    return Vocabularies(vocabs)


def _check_fit(expected: dict[str, Any], found: dict[str, np.ndarray], path: Path) -> None:
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    if missing or unexpected:
        raise WeightsError(
            f"{path} does not fit its model: missing tensors {missing[:10]}, unexpected {unexpected[:10]}"
        )
    for key, want in expected.items():
        got = found[key]
        if tuple(got.shape) != tuple(want.shape) or np.dtype(got.dtype) != np.dtype(want.dtype):
            raise WeightsError(
                f"{path}: tensor {key!r} has shape {tuple(got.shape)} and dtype {got.dtype}, "
                f"expected shape {tuple(want.shape)} and dtype {np.dtype(want.dtype)}"
            )


def load(path: str | os.PathLike, *, registry: Registry | None = None) -> Any:
    """Rebuild the model saved at `path` from the file alone.

    Raises `WeightsError` naming the problem for a non-zoo, truncated or
    tampered file, and naming the tensor for a missing, unexpected,
    wrong-shape or wrong-dtype one. Nothing is loaded partially.
    """
    from zoo.builder import build_from_spec, check_available

    path = Path(path)
    metadata, tensors = read_file(path)
    registry = registry or default_registry()
    registry.manager.hook.zoo_migrate_weights(metadata=metadata, tensors=tensors)
    try:
        spec = ModelSpec.from_json(metadata["zoo.spec"])
    except (KeyError, TypeError, ValueError) as error:
        raise WeightsError(f"{path}: metadata 'zoo.spec' is missing or damaged: {error}") from error
    check_available(registry, spec)
    vocabs = _vocabularies(metadata, tensors, path)
    aliases: dict[str, str] = _json(metadata, "zoo.aliases", path)
    skeleton = eqx.filter_eval_shape(build_from_spec, spec, key=jax.random.key(0), vocabs=vocabs)
    expected = dict(array_paths(skeleton))
    stored = {k: v for k, v in tensors.items() if not k.startswith(RESERVED_PREFIX)}
    for key, target in aliases.items():
        if target not in stored:
            raise WeightsError(f"{path}: alias {key!r} points to missing tensor {target!r}")
        stored[key] = stored[target]
    _check_fit(expected, stored, path)
    return fill(skeleton, stored)


def fill(skeleton: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """Replace the shape-only leaves of `skeleton` by `arrays` (by dotted path)."""

    def is_shape(x: Any) -> bool:
        return isinstance(x, jax.ShapeDtypeStruct)

    shapes, static = eqx.partition(skeleton, is_shape, is_leaf=is_shape)
    paths, treedef = jax.tree_util.tree_flatten_with_path(shapes, is_leaf=is_shape)
    leaves = [jnp.asarray(arrays[".".join(_key_name(p) for p in path)]) for path, _ in paths]
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, leaves), static)
