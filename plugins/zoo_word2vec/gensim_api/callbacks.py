"""gensim's training callbacks: `CallbackAny2Vec`, and how a training call runs them."""

from __future__ import annotations

from typing import Any

__all__ = ["CallbackAny2Vec", "call_hook", "once"]


class CallbackAny2Vec:
    """A training callback, as gensim's ``gensim.models.callbacks.CallbackAny2Vec``:
    subclass it and override what you need. Each method gets the `Word2Vec` (or
    `FastText`) being trained; at an epoch's end its ``wv`` holds the vectors trained
    so far and ``get_latest_training_loss()`` the loss summed over the call so far (as gensim's;
    the epoch's own mean per pair is ``model.history[-1]["loss"]``).

    `on_batch_begin` and `on_batch_end` are called around each job (``batch_words`` words), as
    gensim 3 called them (gensim 4 no longer does); there ``model.wv`` holds the vectors as the
    training call began."""

    def on_train_begin(self, model: Any) -> None:
        """Before the first epoch of a ``train`` call."""

    def on_epoch_begin(self, model: Any) -> None:
        """Before each epoch."""

    def on_epoch_end(self, model: Any) -> None:
        """After each epoch."""

    def on_batch_begin(self, model: Any) -> None:
        """Before each job."""

    def on_batch_end(self, model: Any) -> None:
        """After each job."""

    def on_train_end(self, model: Any) -> None:
        """After the last epoch of a ``train`` call."""


def once(make: Any) -> Any:
    """``make`` called at most once: later calls return its first result."""
    made: list[Any] = []

    def get() -> Any:
        if not made:
            made.append(make())
        return made[0]

    return get


def call_hook(callback: Any, method: str, model: Any) -> None:
    """Call `callback`'s `method` (a callback need not have every method)."""
    hook = getattr(callback, method, None)
    if hook is not None:
        hook(model)
