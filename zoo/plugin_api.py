"""What a plugin may import from zoo: the declared plugin API.

A plugin (zoo's own under ``plugins/`` and every third party's) imports zoo's
names from here, from the top-level `zoo` package (``zoo.build``, ``zoo.save``,
the errors) and, in its tests, from `zoo.testing`; nothing else of the core.
Every other module of zoo is internal and may change between releases;
the names below keep their meaning. A house-rule test holds zoo's own plugins
to this (``tests/test_house_rules.py``).

    from zoo.plugin_api import Attention, CataloguePlugin, hookimpl, masked_softmax

The names, by job:

- contracts: the interfaces and their outputs (`zoo.interfaces`), the kinds and
  the capabilities the command line checks;
- declaring a plugin: `CataloguePlugin`, `hookimpl`, `ModelSpec`, `argument_type`;
- building blocks: `argmax`, `dropout`, `masked_softmax`, `run_cell`, `scalar_mix`, `top_k`,
  `uniform_rows` (`zoo.nn`);
- data: vocabularies, batches, reading text files, tokenizers, characters,
  co-occurrence counts;
- building, saving and training: `build`, `build_component`, `build_from_spec`,
  `save`, `load`, `train`, checkpoints, `KeepBest`/`StopTraining` and the lines a run
  reports itself with (`held_out_line`, `last_kept_line`), frozen parameters,
  a loop's progress and metrics log (`Progress`, `open_log`);
- recipes (``zoo train NAME``'s options): `Recipe`, `resolve_spec`, the
  ``add_*_argument(s)`` helpers;
- word vectors: `KeyedVectors`; what a plugin's vector format or subword model implements
  (`VectorFormat`, `SubwordModel`, see `zoo.vectors.extensions`; `ModelFormat` for a format's
  files that hold whole models, `zoo.building.foreign`) and the bounded binary reading
  formats share (`open_binary`, `decode_word`, ...);
- errors: every `zoo.ZooError` subclass.

Names load on first use, so a plugin's light entry module (its hooks) can
import `CataloguePlugin` and `hookimpl` from here without loading JAX.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # contracts
    **{
        name: f"zoo.interfaces:{name}"
        for name in (
            "Attention",
            "ContextualEmbedder",
            "Decoder",
            "DecoderOutput",
            "DecoderStrategy",
            "Embedder",
            "Encoder",
            "EncoderOutput",
            "Hypotheses",
            "KINDS",
            "Kind",
            "AttentionReporter",
            "Classifier",
            "LabelRanker",
            "SubwordVectors",
            "Tagger",
            "Translator",
            "WordVectors",
            "LanguageModel",
            "LinearInValues",
            "Memory",
            "Model",
            "RecurrentCell",
            "StepFn",
        )
    },
    # declaring a plugin
    "CataloguePlugin": "zoo.naming.catalogue:CataloguePlugin",
    "hookimpl": "zoo.naming.hookspecs:hookimpl",
    "ModelSpec": "zoo.naming.spec:ModelSpec",
    "argument_type": "zoo.naming.domains:argument_type",
    "check_hyperparameter": "zoo.naming.hyperparameters:check_hyperparameter",
    # building blocks
    **{
        name: f"zoo.nn:{name}"
        for name in ("argmax", "dropout", "masked_softmax", "run_cell", "scalar_mix", "top_k", "uniform_rows")
    },
    # data
    "Vocab": "zoo.data.vocab:Vocab",
    "Vocabularies": "zoo.data.vocab:Vocabularies",
    "SequenceBatches": "zoo.data.batching:SequenceBatches",
    "bucket_boundaries": "zoo.data.batching:bucket_boundaries",
    "pad_sequences": "zoo.data.batching:pad_sequences",
    "MAX_LINE_CHARS": "zoo.data.textfile:MAX_LINE_CHARS",
    "LongLinesWarning": "zoo.data.textfile:LongLinesWarning",
    "open_text": "zoo.data.textfile:open_text",
    "read_lines": "zoo.data.textfile:read_lines",
    "get_tokenizer": "zoo.data.tokenize:get_tokenizer",
    "tokenize": "zoo.data.text:tokenize",
    "detokenize": "zoo.data.text:detokenize",
    "split_text": "zoo.data.text:split_text",
    "build_word_vocab": "zoo.data.corpus:build_word_vocab",
    "count_tokens": "zoo.data.corpus:count_tokens",
    "iter_ids": "zoo.data.corpus:iter_ids",
    "iter_lines": "zoo.data.corpus:iter_lines",
    "iter_sentences": "zoo.data.corpus:iter_sentences",
    "CorpusPart": "zoo.data.corpus_files:CorpusPart",
    "corpus_files": "zoo.data.corpus_files:corpus_files",
    "split_corpus": "zoo.data.corpus_files:split_corpus",
    "parts_and_workers": "zoo.data.corpus:parts_and_workers",
    "ordered_map": "zoo.data.worker_pool:ordered_map",
    "WEIGHTINGS": "zoo.data.cooccurrence:WEIGHTINGS",
    "cooccurrence_matrix": "zoo.data.cooccurrence:cooccurrence_matrix",
    "pmi_matrix": "zoo.data.cooccurrence:pmi_matrix",
    **{
        name: f"zoo.data.chars:{name}"
        for name in ("BOS_CHAR", "BOW", "EOS_CHAR", "EOW", "NUM_CHARS", "SpelledBatches", "encode_sentences", "spell")
    },
    # building, saving, training
    "build": "zoo.building.builder:build",
    "build_component": "zoo.building.builder:build_component",
    "build_from_spec": "zoo.building.construct:build_from_spec",
    "save": "zoo.building.weights:save",
    "load": "zoo.building.weights:load",
    "output_path": "zoo.building.files:output_path",
    "train": "zoo.training.trainer:train",
    "TrainResult": "zoo.training.trainer:TrainResult",
    "Checkpoint": "zoo.training.checkpoint:Checkpoint",
    "save_checkpoint": "zoo.training.checkpoint:save_checkpoint",
    "load_checkpoint": "zoo.training.checkpoint:load_checkpoint",
    "KeepBest": "zoo.training.selection:KeepBest",
    "Progress": "zoo.training.progress:Progress",
    "open_log": "zoo.training.progress:open_log",
    "StopTraining": "zoo.training.selection:StopTraining",
    "held_out_line": "zoo.training.selection:held_out_line",
    "last_kept_line": "zoo.training.selection:last_kept_line",
    "frozen": "zoo.training.freezing:frozen",
    "skip_frozen": "zoo.training.freezing:skip_frozen",
    # recipes
    **{
        name: f"zoo.training.recipes:{name}"
        for name in (
            "EvaluatingRecipe",
            "Recipe",
            "add_alias",
            "add_checkpoint_arguments",
            "add_common_arguments",
            "add_corpus_arguments",
            "add_encoding_argument",
            "add_epochs_argument",
            "add_hyperparameter_argument",
            "add_log_argument",
            "add_lowercase_arguments",
            "add_valid_size_argument",
            "corpus_vocabulary",
            "epochs_to_run",
            "given",
            "held_out_size",
            "hold_out",
            "resolve_spec",
            "seed_type",
        )
    },
    # generating and evaluating
    "generate_text": "zoo.generation:generate_text",
    "pearson": "zoo.eval.similarity:pearson",
    "spearman": "zoo.eval.similarity:spearman",
    # word vectors, their files and the formats and subword models a plugin provides
    "KeyedVectors": "zoo.vectors:KeyedVectors",
    "VectorFormat": "zoo.vectors.extensions:VectorFormat",
    "SubwordModel": "zoo.vectors.extensions:SubwordModel",
    "ModelFormat": "zoo.building.foreign:ModelFormat",
    "read_if_vectors": "zoo.vectors.zoo_file:read_if_vectors",
    "check_finite_vectors": "zoo.vectors.formats:check_finite_vectors",
    "is_safetensors": "zoo.building.files:is_safetensors",
    "locate": "zoo.building.locate:locate",
    **{
        name: f"zoo.vectors.reading:{name}"
        for name in ("CORRUPT_GZIP", "MAX_WORD_BYTES", "corrupt_gzip", "decode_word", "open_binary")
    },
    # errors
    **{
        name: f"zoo.errors:{name}"
        for name in (
            "DataError",
            "InvalidParameterError",
            "MemoryBudgetError",
            "NameSyntaxError",
            "PluginError",
            "RecordError",
            "RegistryError",
            "TrainingDiverged",
            "TruncatedFileError",
            "UnknownKeyError",
            "UnknownNameError",
            "UnknownParameterError",
            "WeightsError",
            "ZooError",
        )
    },
    "close_matches": "zoo.errors:close_matches",
    "check_memory": "zoo.budget:check_memory",
    "check_search": "zoo.budget:check_search",
    # files from outside: regular files only, metadata read with a size limit
    **{name: f"zoo.data.inputs:{name}" for name in ("check_regular", "open_input", "read_small")},
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"zoo.plugin_api has no {name!r}; the names a plugin may import: {', '.join(__all__)}")
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    if attr:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
