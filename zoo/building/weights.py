"""Weights as one safetensors file that rebuilds its model.

Tensor keys are dotted paths of the module's array leaves
(``decoder.attention.weight``). String metadata: ``zoo.format``, ``zoo.name``
(canonical), ``zoo.spec`` (resolved spec as JSON), ``zoo.versions`` (plugin
versions as JSON), ``zoo.vocabs`` (special tokens per vocabulary role),
``zoo.aliases`` (tensors stored once for several leaves), ``zoo.checksum`` (a
SHA-256 over every tensor and every other metadata entry, so a modified or
corrupted file is detected). Vocabularies travel as tensors under
``__zoo__.vocab.<role>.``. Writes are atomic.

A file is data, never code: `load` checks the whole file (header, metadata,
checksum) first, then rebuilds the spec from the installed registry by the
names it records (`zoo.building.recorded`), derives the expected tensors from an
abstract skeleton (no parameter is allocated) and demands an exact fit before
anything is materialised. JAX is imported only then, so a damaged file is refused before it.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open

from zoo.building.files import is_safetensors, write_atomic
from zoo.data.vocab import Vocab, Vocabularies
from zoo.errors import PluginError, WeightsError, ZooError
from zoo.naming.registry import Registry, default_registry
from zoo.naming.spec import ModelSpec

__all__ = [
    "FORMAT_VERSION",
    "RESERVED_PREFIX",
    "WeightsWarning",
    "array_paths",
    "file_checksum",
    "file_contents",
    "load",
    "read_file",
    "rebuild",
    "save",
    "seal",
    "write_atomic",
]

FORMAT_VERSION = 2  # 2: the checksum covers the metadata too; 1: tensors only (still read)
_CHECKSUM = "zoo.checksum"
_LEGACY_CHECKSUM = "zoo.sha256"


class WeightsWarning(UserWarning):
    """A weights file was loaded without the full protection of its checksum."""


RESERVED_PREFIX = "__zoo__."
_VOCAB_PREFIX = RESERVED_PREFIX + "vocab."


def _key_name(entry: Any) -> str:
    for attr in ("name", "key", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    raise WeightsError(f"cannot name tree path entry {entry!r}")


def array_paths(tree: Any, is_leaf=None) -> list[tuple[str, Any]]:
    """``(dotted path, leaf)`` for every array (or `ShapeDtypeStruct`) leaf of `tree`."""
    import equinox as eqx
    import jax

    def is_array(x: Any) -> bool:
        return isinstance(x, jax.Array | np.ndarray | jax.ShapeDtypeStruct)

    arrays = eqx.filter(tree, is_array, is_leaf=is_leaf)
    flat = jax.tree_util.tree_flatten_with_path(arrays, is_leaf=is_leaf)[0]
    return [(".".join(_key_name(p) for p in path), leaf) for path, leaf in flat if leaf is not None]


def checksum(tensors: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in key order (format 1's checksum)."""
    digest = hashlib.sha256()
    _digest_tensors(digest, tensors)
    return digest.hexdigest()


def _digest_tensors(digest: Any, tensors: Mapping[str, np.ndarray]) -> None:
    for key in sorted(tensors):
        array = np.ascontiguousarray(tensors[key])
        digest.update(f"{key}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())


def file_checksum(metadata: Mapping[str, str], tensors: Mapping[str, np.ndarray]) -> str:
    """``sha256:<hex>`` over every metadata entry but the checksum itself (length-prefixed,
    in key order) and every tensor: what ``zoo.checksum`` must hold."""
    digest = hashlib.sha256(b"zoo-file-v2\0")
    for key in sorted(k for k in metadata if k != _CHECKSUM):
        for text in (key, metadata[key]):
            data = text.encode("utf-8", "surrogatepass")
            digest.update(f"{len(data)}:".encode() + data)
    _digest_tensors(digest, tensors)
    return "sha256:" + digest.hexdigest()


def seal(metadata: Mapping[str, str], tensors: Mapping[str, np.ndarray]) -> dict[str, str]:
    """`metadata` with its ``zoo.checksum`` over itself and `tensors` (what `save` writes)."""
    meta = {k: v for k, v in metadata.items() if k not in (_CHECKSUM, _LEGACY_CHECKSUM)}
    return {**meta, _CHECKSUM: file_checksum(meta, tensors)}


def _plugin_versions(spec: ModelSpec, registry: Registry | None) -> dict[str, str | None]:
    plugins = {spec.plugin} | {s.plugin for s in spec.slots if s.plugin}
    versions: dict[str, str | None] = {}
    for plugin in sorted(p for p in plugins if p):
        record = registry.plugins.get(plugin) if registry is not None else None
        versions[plugin] = record.version if record is not None else None
    return versions


def model_tensors(model: Any) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The model's arrays by dotted path, plus aliases for leaves shared by identity."""
    import jax

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
    In a run of several processes (`zoo.training.distributed`) process 0 alone
    writes; the others, which hold the same model, only return the path.
    """
    from zoo.training.distributed import is_writer

    if not isinstance(getattr(model, "spec", None), ModelSpec):
        raise WeightsError(f"zoo.save needs a model built by zoo (with a .spec), got {type(model).__name__}")
    path = Path(path)
    if not is_writer():
        return path
    write_atomic(path, *file_contents(model, metadata=metadata, tensors=tensors, registry=registry))
    return path


def file_contents(
    model: Any,
    *,
    metadata: Mapping[str, str] | None = None,
    tensors: Mapping[str, np.ndarray] | None = None,
    registry: Registry | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors and sealed metadata of the file `save` writes for `model` (see `save`)."""
    spec = getattr(model, "spec", None)
    if not isinstance(spec, ModelSpec):
        raise WeightsError(f"zoo.save needs a model built by zoo (with a .spec), got {type(model).__name__}")
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
        **dict(metadata or {}),
    }
    return arrays, seal(meta, arrays)


def _registry_if_loaded() -> Registry | None:
    from zoo.naming import registry as _registry

    return _registry._DEFAULT


def read_file(path: str | os.PathLike, *, verify: bool = True) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Read all metadata and tensors of a zoo file and check its checksum.

    Raises `WeightsError` if it is not a readable zoo file, or if its checksum
    is missing or does not match. ``verify=False`` reads such a file anyway,
    with a `WeightsWarning`: only for a file you trust that was damaged.
    """
    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"no weights file at {path}")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = dict(handle.metadata() or {})
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    except (SafetensorError, OSError, ValueError, TypeError, MemoryError) as error:
        raise WeightsError(f"{path} is not a readable safetensors file (truncated or corrupted?): {error}") from error
    if "zoo.format" not in metadata:
        raise WeightsError(
            f"{path} is a safetensors file but not a zoo weights file (no 'zoo.format' metadata); "
            "save models with zoo.save"
        )
    text = metadata["zoo.format"]
    if not (text.isascii() and text.isdigit() and len(text) < 6):
        raise WeightsError(f"{path}: bad zoo.format {text!r}")
    version = int(text)
    if version > FORMAT_VERSION:
        raise WeightsError(f"{path} uses zoo format {version}; this zoo reads up to {FORMAT_VERSION}: upgrade zoo")
    if version < 1:
        raise WeightsError(f"{path}: bad zoo.format {text!r}")
    _verify(path, version, metadata, tensors, verify)
    return metadata, tensors


def _verify(path: Path, version: int, metadata: dict[str, str], tensors: dict[str, np.ndarray], verify: bool) -> None:
    """Check the file's checksum; without `verify`, warn instead of refusing."""
    key, covers = (_CHECKSUM, "") if version >= 2 else (_LEGACY_CHECKSUM, "its tensors were ")
    problem = None
    if key not in metadata:
        problem = f"has no checksum ({key!r})"
    elif (file_checksum(metadata, tensors) if version >= 2 else checksum(tensors)) != metadata[key]:
        problem = f"does not match its checksum: {covers or 'it was '}modified or corrupted after saving"
    if problem is None:
        if version < 2:
            warnings.warn(
                f"{path} was written by an older zoo (format {version}): its checksum covers the tensors "
                "but not the metadata; re-save it with zoo.save to protect both",
                WeightsWarning,
                stacklevel=4,
            )
        return
    if verify:
        raise WeightsError(f"{path} {problem}. Load it only if you trust its source, with zoo.load(path, verify=False)")
    warnings.warn(f"{path} {problem}; loading it anyway (verify=False)", WeightsWarning, stacklevel=4)


def _json(metadata: Mapping[str, str], key: str, path: Path, default: str = "{}") -> dict[str, Any]:
    """The JSON object in metadata entry `key`."""
    try:
        value = json.loads(metadata.get(key, default))
    except (json.JSONDecodeError, RecursionError) as error:
        raise WeightsError(f"{path}: metadata {key!r} is not valid JSON (tampered?): {error}") from None
    if not isinstance(value, dict):
        raise WeightsError(f"{path}: metadata {key!r} must be a JSON object, got {type(value).__name__}")
    return value


def _vocabularies(
    metadata: Mapping[str, str], tensors: dict[str, np.ndarray], spec: ModelSpec, path: Path
) -> Vocabularies:
    specials = _json(metadata, "zoo.vocabs", path)
    roles = dict(spec.vocabularies)
    unknown = sorted(set(specials) - set(roles))
    if unknown:
        raise WeightsError(f"{path}: vocabularies {unknown} are not roles of {spec.arch!r} ({sorted(roles)})")
    vocabs = {}
    for role, role_specials in specials.items():
        prefix = f"{_VOCAB_PREFIX}{role}."
        parts = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
        try:
            vocabs[role] = Vocab.from_arrays(parts, role_specials)
        except ZooError as error:
            raise WeightsError(f"{path}: vocabulary {role!r} is damaged: {error}") from error
    stray = sorted(k for k in tensors if k.startswith(_VOCAB_PREFIX) and k.split(".")[2] not in specials)
    if stray:
        raise WeightsError(f"{path}: vocabulary tensors {stray[:5]} belong to no vocabulary in 'zoo.vocabs'")
    return Vocabularies(vocabs)


def _aliases(metadata: Mapping[str, str], stored: dict[str, np.ndarray], path: Path) -> dict[str, np.ndarray]:
    """`stored` plus the leaves the file stores once for several paths."""
    aliases = _json(metadata, "zoo.aliases", path)
    result = dict(stored)
    for key, target in aliases.items():
        if not isinstance(target, str) or key in stored:
            raise WeightsError(f"{path}: alias {key!r} -> {target!r} is malformed or shadows a stored tensor")
        if target not in stored:
            raise WeightsError(f"{path}: alias {key!r} points to missing tensor {target!r}")
        result[key] = stored[target]
    return result


def _spec(metadata: Mapping[str, str], registry: Registry, path: Path) -> ModelSpec:
    """The file's spec, rebuilt from the installed registry by the names it records."""
    from zoo.building.recorded import resolve_recorded

    if "zoo.spec" not in metadata:
        raise WeightsError(f"{path}: metadata 'zoo.spec' is missing or damaged: the file has none")
    try:
        return resolve_recorded(registry, metadata["zoo.spec"])
    except PluginError:
        raise
    except ZooError as error:
        raise WeightsError(
            f"{path}: metadata 'zoo.spec' is missing or damaged: {error} (the file was altered, or written by a "
            "version of its plugins that the installed ones do not read)"
        ) from error


def _skeleton(spec: ModelSpec, vocabs: Vocabularies, registry: Registry, path: Path) -> Any:
    """The model's structure with `ShapeDtypeStruct` leaves: nothing is allocated."""
    import equinox as eqx
    import jax

    from zoo.building.construct import construct

    try:
        return eqx.filter_eval_shape(construct, spec, key=jax.random.key(0), vocabs=vocabs, registry=registry)
    except PluginError:
        raise
    except Exception as error:  # a plugin's own checks on a crafted spec: still the file's fault
        raise WeightsError(
            f"{path}: its model {spec.name!r} cannot be built with these hyperparameters: "
            f"{type(error).__name__}: {error}"
        ) from error


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


def load(path: str | os.PathLike, *, registry: Registry | None = None, verify: bool = True) -> Any:
    """Rebuild the model saved at `path` (or stored under the name ``NAME.TAG``) from the file alone.

    The file is data: its spec is rebuilt from the installed plugins by the
    names it records and its hyperparameters are checked as `zoo.build`
    checks them; nothing in it can choose what code runs. Raises
    `WeightsError` naming the problem for a non-zoo, truncated, tampered or
    unchecksummed file (``verify=False`` loads the last two, with a warning),
    and naming the tensor for a missing, unexpected, wrong-shape or
    wrong-dtype one; `PluginError` when a plugin it needs is not installed.
    Nothing is allocated before the whole file has been checked.

    A file in a format an installed plugin reads models from (`zoo.building.foreign`: a
    fastText classifier's ``.bin``, say) is read by that plugin's codec into the model it holds.
    """
    from zoo.building.foreign import read_foreign_model
    from zoo.building.locate import locate

    path = locate(path, registry=registry)  # a stored name (NAME.TAG) too, when no file is there
    if path.is_file() and not is_safetensors(path):
        model = read_foreign_model(path, registry=registry)
        if model is not None:
            return model
    metadata, tensors = read_file(path, verify=verify)
    return rebuild(metadata, tensors, path, registry=registry)


def rebuild(
    metadata: dict[str, str], tensors: dict[str, np.ndarray], path: Path, *, registry: Registry | None = None
) -> Any:
    """The model of a file's `metadata` and `tensors` (as `read_file` returns them), checked as
    `load` checks it; `path` names the file in errors. The migration hook may change both in place."""
    from zoo.building.construct import check_available

    if metadata.get("zoo.kind", "model") != "model":
        raise WeightsError(
            f"{path} holds {metadata['zoo.kind']!r}, not a model: read word vectors with "
            "zoo.vectors.KeyedVectors.load (or `zoo vectors`)"
        )
    registry = registry or default_registry()
    registry.call_hook("zoo_migrate_weights", metadata=metadata, tensors=tensors)
    spec = _spec(metadata, registry, path)
    check_available(registry, spec)
    vocabs = _vocabularies(metadata, tensors, spec, path)
    stored = _aliases(metadata, {k: v for k, v in tensors.items() if not k.startswith(RESERVED_PREFIX)}, path)
    skeleton = _skeleton(spec, vocabs, registry, path)
    _check_fit(dict(array_paths(skeleton)), stored, path)
    return fill(skeleton, stored)


def fill(skeleton: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """Replace the shape-only leaves of `skeleton` by `arrays` (by dotted path)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    def is_shape(x: Any) -> bool:
        return isinstance(x, jax.ShapeDtypeStruct)

    shapes, static = eqx.partition(skeleton, is_shape, is_leaf=is_shape)
    paths, treedef = jax.tree_util.tree_flatten_with_path(shapes, is_leaf=is_shape)
    leaves = [jnp.asarray(arrays[".".join(_key_name(p) for p in path)]) for path, _ in paths]
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, leaves), static)
