"""Scoring translations of held-out pairs: sacreBLEU's BLEU and chrF, exact match, the loss.

`HeldOut` holds source tokens, target tokens and reference text. Its outputs
are decoded by `zoo_seq2seq.translate.translate_tokens` (the path ``zoo
translate`` takes), detokenised, and scored against the reference text with
sacreBLEU's default 13a tokenisation, so the figures and their signatures are
comparable with any other system scored by sacreBLEU. `Validation` is the
``evaluate`` callback of a training run: it scores the model every so many
steps, keeps the best by one metric (`zoo.plugin_api.KeepBest`) and stops after
`patience` evaluations without a better one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import zoo
from zoo.plugin_api import DataError, KeepBest, SequenceBatches, StopTraining, detokenize, get_tokenizer, read_small
from zoo_seq2seq.data import encode_pairs
from zoo_seq2seq.settings import METRICS
from zoo_seq2seq.translate import Translation, translate_tokens

__all__ = ["METRICS", "HeldOut", "Validation", "folds_case", "sacrebleu_scores"]


def folds_case(model: Any) -> bool:
    """Whether the model's tokeniser lowercases (then its outputs cannot carry case)."""
    tokenizer = get_tokenizer(model.spec.params.get("tokenizer", "punct"))
    return tokenizer("Zq") == tokenizer("zq")


def sacrebleu_scores(hypotheses: Sequence[str], references: Sequence[str], *, lowercase: bool) -> dict[str, Any]:
    """Corpus BLEU and chrF of `hypotheses` against one reference each, with sacreBLEU's signatures.

    **Returns:** ``bleu``, ``chrf`` (0-100) and ``bleu_signature``, ``chrf_signature``
    (``nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:...``).
    """
    from sacrebleu.metrics import BLEU, CHRF

    bleu, chrf = BLEU(lowercase=lowercase), CHRF(lowercase=lowercase)
    refs = [list(references)]
    return {
        "bleu": float(bleu.corpus_score(list(hypotheses), refs).score),
        "chrf": float(chrf.corpus_score(list(hypotheses), refs).score),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }


@eqx.filter_jit
def _summed_loss(model: Any, batch: Mapping[str, Any]) -> tuple[Any, Any]:
    """The batch's loss summed over its real target tokens, and their count."""
    count = jnp.sum(batch["tgt_mask"])
    return model.loss(batch) * count, count


class HeldOut:
    """Held-out pairs: sources and targets as tokens, the references as text.

    **Arguments:** `sources`, `targets` (token lists), `references` (the target
    text BLEU compares with; default: the detokenised targets), `batch_size` (rows
    decoded or scored at once), `lowercase` (case-insensitive BLEU and chrF;
    default: when the model's tokeniser lowercases).
    """

    def __init__(
        self,
        sources: Sequence[Sequence[str]],
        targets: Sequence[Sequence[str]],
        references: Sequence[str] | None = None,
        *,
        batch_size: int = 64,
        lowercase: bool | None = None,
    ) -> None:
        self.sources, self.targets = [list(s) for s in sources], [list(t) for t in targets]
        self.references = list(references) if references is not None else [detokenize(t) for t in self.targets]
        if not len(self.sources) == len(self.targets) == len(self.references):
            raise ValueError("sources, targets and references must be equally many")
        self.batch_size, self.lowercase = batch_size, lowercase
        self._batches: SequenceBatches | None = None

    def __len__(self) -> int:
        return len(self.sources)

    def translate(self, model: Any, **decode: Any) -> list[Translation]:
        """The best output for each source (`decode` goes to `model.decode`)."""
        results = translate_tokens(model, self.sources, chunk_size=self.batch_size, **decode)
        return [options[0] if options else Translation("", [], float("-inf")) for options in results]

    def scores(self, model: Any, **decode: Any) -> dict[str, Any]:
        """``bleu``, ``chrf``, ``exact_match`` (the fraction whose output tokens equal the
        target's) and the sacreBLEU signatures."""
        outputs = self.translate(model, **decode)
        lowercase = folds_case(model) if self.lowercase is None else self.lowercase
        scores = sacrebleu_scores([o.text for o in outputs], self.references, lowercase=lowercase)
        exact = float(np.mean([o.tokens == t for o, t in zip(outputs, self.targets, strict=True)]))
        bleu, chrf = scores.pop("bleu"), scores.pop("chrf")
        return {"bleu": bleu, "chrf": chrf, "exact_match": exact, **scores}

    def loss(self, model: Any) -> float:
        """The model's training loss (teacher forcing) per target token, over every pair."""
        if self._batches is None:  # the model's vocabularies do not change during a run
            fields = encode_pairs(model.vocabs["src"], model.vocabs["tgt"], self.sources, self.targets)
            pad = model.vocabs["src"].pad_id
            rows = min(self.batch_size, 1 << (max(len(self), 1) - 1).bit_length())  # a few pairs: not 64 rows
            self._batches = SequenceBatches(fields, batch_size=rows, pad_id=pad, shuffle=False)
        total, count = 0.0, 0.0
        for batch in self._batches:
            summed, n = _summed_loss(model, batch)
            total, count = total + float(summed), count + float(n)
        return total / max(count, 1.0)


class Validation:
    """The ``evaluate`` callback of `zoo.train`: held-out loss, BLEU, chrF and exact match.

    Keeps the model that scores best by `select` (one of `METRICS`; the loss
    lowest, the others highest; ties keep the earlier) and, with `patience`,
    raises `StopTraining` after that many evaluations without a better score.

    **Attributes:** `best` (the best model), `best_at` (its 1-based evaluation),
    `history` (each evaluation's metrics), `stopped` (the early-stop message or None).
    """

    def __init__(self, held_out: HeldOut, *, select: str = "bleu", patience: int | None = None) -> None:
        if select not in METRICS:
            raise ValueError(f"select must be one of {METRICS}, got {select!r}")
        self.held_out, self.select = held_out, select
        self._sign = sign = -1.0 if select == "valid_loss" else 1.0
        self._keeper = KeepBest(lambda _: sign * self.history[-1][select], select, patience=patience)
        self.history: list[dict[str, float]] = []
        self.steps: list[int] = []  # the step of each evaluation, as far as a checkpoint told (`restore`)
        self._restored, self.restored_step = 0, 0
        self.stopped: str | None = None

    @property
    def best(self) -> Any:
        return self._keeper.model

    @property
    def best_at(self) -> int:
        return self._keeper.best_at

    # -- surviving a resume: the keeper's state beside the checkpoint --------------------------

    def checkpointing(self, path: Path, step: int, evaluated_at: Sequence[int]) -> None:
        """Save the keep-best state as of `step` beside the checkpoint `path` (`zoo.train` calls it
        just before writing the checkpoint): the best model (``PATH.best-K.safetensors``) and
        ``PATH.valid.json``, which keeps this state and the one before it, so a resumed run finds
        the one its checkpoint matches even if the process died between the two writes."""
        steps = [*self.steps, *evaluated_at]  # restored ones first
        best_file = None
        if self.best is not None:
            best_file = f"{path.name}.best-{self.best_at}.safetensors"
            if not (path.parent / best_file).exists():
                zoo.save(self.best, path.parent / best_file)
        keeper = self._keeper
        state = {
            "step": step, "history": self.history, "steps": steps, "best_at": keeper.best_at,
            "improved_at": keeper.improved_at, "score": keeper.score, "best_file": best_file,
        }  # fmt: skip
        record = path.parent / f"{path.name}.valid.json"
        previous = self._read_states(record)[:1]
        states = [state, *previous]
        temporary = record.with_name(f".{record.name}.tmp")
        temporary.write_text(json.dumps(states, allow_nan=True))
        os.replace(temporary, record)
        kept = {s.get("best_file") for s in states}
        for old in path.parent.glob(f"{path.name}.best-*.safetensors"):
            if old.name not in kept:
                old.unlink(missing_ok=True)

    def restore(self, path: Path) -> bool:
        """Take up the keep-best state saved at the checkpoint `path`'s step; False (nothing
        restored) without one, which a checkpoint written before this state was kept has."""
        from safetensors import SafetensorError, safe_open

        if not path.is_file():
            return False
        try:
            with safe_open(str(path), framework="numpy") as handle:
                step = json.loads((handle.metadata() or {}).get("zoo.checkpoint", "{}")).get("step")
        except (SafetensorError, OSError, ValueError, AttributeError):
            return False  # a damaged checkpoint: resuming from it names what is wrong
        record = path.parent / f"{path.name}.valid.json"
        state = next((s for s in self._read_states(record) if s.get("step") == step), None)
        if state is None:
            return False
        try:  # a record damaged by hand: nothing restored, as without one
            history = [dict(h) for h in state["history"]]
            steps, restored_step = list(state["steps"]), int(step)
            scores = [self._sign * float(h[self.select]) for h in history]
            best_at, improved_at, score = state["best_at"], state["improved_at"], state["score"]
            best_file = state["best_file"]
            if best_file is not None and (not isinstance(best_file, str) or Path(best_file).name != best_file):
                return False  # a name beside the checkpoint, never a path elsewhere
        except (KeyError, TypeError, ValueError):
            return False
        best = zoo.load(path.parent / best_file) if best_file else None
        self.history, self.steps, self._restored, self.restored_step = history, steps, len(steps), restored_step
        keeper = self._keeper
        keeper.history = scores
        keeper.best_at, keeper.improved_at, keeper.score, keeper.model = best_at, improved_at, score, best
        return True

    @staticmethod
    def _read_states(record: Path) -> list[dict[str, Any]]:
        try:  # a FIFO or a device: not read (a record zoo writes is a regular file)
            states = json.loads(read_small(record, "keep-best record"))
        except (DataError, ValueError, RecursionError):
            return []
        return [s for s in states if isinstance(s, dict)] if isinstance(states, list) else []

    def __call__(self, model: Any) -> dict[str, float]:
        scores = self.held_out.scores(model)
        metrics = {"valid_loss": self.held_out.loss(model), **{k: scores[k] for k in ("bleu", "chrf", "exact_match")}}
        self.history.append(metrics)
        try:
            self._keeper(model)
        except StopTraining as stop:
            self.stopped = str(stop)
            raise StopTraining(self.stopped, metrics) from None  # the run shows every metric, not the keeper's view
        return metrics
