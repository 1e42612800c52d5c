"""One process of the multi-process tests (tests/test_distributed.py), or their single-process reference.

``python distributed_worker.py OUT`` joins the run its environment describes (a
SLURM job's variables) and trains a tiny LSTM language model (its carry sharded by rows over
the processes) in two calls of `zoo.train`, the second resuming from the first's
checkpoint; then it tries a run whose processes read different data. `lm_run(OUT)` in one
process without a coordinator is the reference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TEXT = """the cat sat on the mat
a dog ran in the park and the cat ran too
the mat is red and the park is green
a cat and a dog sat in the sun
"""

STEPS, FIRST = 6, 3  # steps in all; the first call stops after FIRST, the second resumes


def lm_run(out: Path) -> tuple[dict, object]:
    """Train the language model, save it (process 0) and this process's final carry; describe the run
    and return the trained model."""
    import jax
    import numpy as np
    import optax

    import zoo
    from zoo_lm.recipe import build_vocab, train_language_model

    tokens = TEXT.replace("\n", " </s> ").split()
    vocab = build_vocab(tokens, "word")
    model = zoo.build(
        "lstm-lm",
        key=jax.random.key(0),
        vocab={"tokens": vocab},
        hidden_size=8,
        embedding_size=6,
        num_layers=1,
        dropout=0.1,
    )
    optimizer = optax.sgd(0.5)  # one object: the resumed call reuses the compiled step
    args = dict(key=jax.random.key(1), batch_size=4, unroll=3, optimizer=optimizer, progress=False)
    checkpoint = out / "lm.ckpt"
    ids = vocab.encode(tokens)
    first = train_language_model(model, ids, steps=FIRST, checkpoint=checkpoint, **args)
    result = train_language_model(model, ids, steps=STEPS, checkpoint=checkpoint, resume=True, **args)
    zoo.save(result.model, out / "lm.safetensors")
    index = jax.process_index()
    carry = {str(i): np.asarray(leaf) for i, leaf in enumerate(jax.tree.leaves(result.carry))}
    np.savez(out / f"carry-{index}.npz", **carry)
    # a time budget that ends on the last process only: every process stops after the same step
    budget = dict(time_limit=1e-9) if index == jax.process_count() - 1 else {}
    early = train_language_model(model, ids, steps=STEPS, **args, **budget)
    report = {"first_step": first.step, "step": result.step, "position": result.position}
    report.update(stopped=[early.step, early.stopped_on_time])
    return report, result.model


def disagreeing_data(model) -> str:
    """zoo.train where every process reads other data (another shuffle seed): the error every process raises."""
    import jax
    import numpy as np

    import zoo
    from zoo.data.batching import ArrayBatches
    from zoo.errors import DistributedError

    rows = np.arange(24, dtype=np.int32).reshape(8, 3) % 5
    data = ArrayBatches({"ids": rows, "targets": rows, "mask": rows >= 0}, batch_size=4, seed=jax.process_index())
    try:
        zoo.train(model, data, steps=1, key=jax.random.key(0), progress=False)
    except DistributedError as error:
        return str(error)
    return "no error"


def main(out: str) -> None:
    from zoo.training.distributed import start

    processes = start(timeout=60)  # the run as the launcher's environment describes it (SLURM in the tests)
    report, model = lm_run(Path(out))
    report.update(processes=processes.count, index=processes.index, disagreement=disagreeing_data(model))
    (Path(out) / f"report-{processes.index}.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:])
