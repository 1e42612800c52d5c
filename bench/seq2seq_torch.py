"""The PyTorch side of ``bench/seq2seq.py``: the same LSTM + Luong-general seq2seq.

Written the way a careful PyTorch user would: ``nn.LSTM`` over whole
sequences (teacher forcing runs the decoder LSTM once over all positions,
then attention and the output layer as batched matrix products), batched
greedy decoding that stops when every sentence has ended, and batched beam
search over ``batch * k`` rows with the same finishing rule as zoo's.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

PAD, BOS, EOS = 0, 2, 3


class Seq2Seq(nn.Module):
    def __init__(self, vocab: int, embedding: int, hidden: int) -> None:
        super().__init__()
        self.src_embedding = nn.Embedding(vocab, embedding)
        self.tgt_embedding = nn.Embedding(vocab, embedding)
        self.encoder = nn.LSTM(embedding, hidden, batch_first=True)
        self.decoder = nn.LSTM(embedding, hidden, batch_first=True)
        self.bridge_h = nn.Linear(hidden, hidden)
        self.bridge_c = nn.Linear(hidden, hidden)
        self.attention = nn.Linear(hidden, hidden, bias=False)  # e = s^T W h
        self.combine = nn.Linear(2 * hidden, hidden)
        self.output = nn.Linear(hidden, vocab)

    def encode(self, src):
        states, (h, _) = self.encoder(self.src_embedding(src))  # [B, S, H]
        final = h[-1]
        init = (torch.tanh(self.bridge_h(final))[None], torch.tanh(self.bridge_c(final))[None])
        return states, self.attention(states), init  # keys: W h_i, once per source

    def readout(self, hidden, states, keys):
        """hidden [B, T, H] -> logits [B, T, V]."""
        weights = torch.softmax(torch.bmm(hidden, keys.transpose(1, 2)), dim=-1)  # [B, T, S]
        context = torch.bmm(weights, states)
        return self.output(torch.tanh(self.combine(torch.cat([context, hidden], dim=-1))))

    def loss(self, src, tgt):
        states, keys, init = self.encode(src)
        tgt_in = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], dim=1)
        hidden, _ = self.decoder(self.tgt_embedding(tgt_in), init)
        logits = self.readout(hidden, states, keys)
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))

    def step(self, token, state, states, keys):
        hidden, state = self.decoder(self.tgt_embedding(token)[:, None], state)
        return torch.log_softmax(self.readout(hidden, states, keys)[:, 0], dim=-1), state

    @torch.no_grad()
    def greedy(self, src, max_length):
        states, keys, state = self.encode(src)
        token = torch.full((src.shape[0],), BOS, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        out = []
        for _ in range(max_length):
            logp, state = self.step(token, state, states, keys)
            token = torch.where(done, PAD, logp.argmax(-1))
            out.append(token)
            done = done | (token == EOS)
            if bool(done.all()):
                break
        return torch.stack(out, 1)

    @torch.no_grad()
    def beam(self, src, k, max_length, alpha):
        batch = src.shape[0]
        states, keys, (h, c) = self.encode(src)
        states, keys = states.repeat_interleave(k, 0), keys.repeat_interleave(k, 0)
        state = (h.repeat_interleave(k, 1), c.repeat_interleave(k, 1))
        live = torch.full((batch, k), -float("inf"))
        live[:, 0] = 0.0
        token = torch.full((batch * k,), BOS, dtype=torch.long)
        history = torch.zeros(batch, k, 0, dtype=torch.long)
        done_scores = torch.full((batch, k), -float("inf"))
        done_tokens = torch.zeros(batch, k, max_length, dtype=torch.long)
        rows = torch.arange(batch)[:, None]
        for t in range(max_length):
            logp, state = self.step(token, state, states, keys)
            vocab = logp.shape[-1]
            total = (live[:, :, None] + logp.view(batch, k, vocab)).view(batch, -1)
            cand, index = total.topk(2 * k, dim=1)
            parent, word = index // vocab, index % vocab
            seqs = torch.cat([history[rows, parent], word[:, :, None]], dim=2)
            finishing = (word == EOS) | (t + 1 == max_length)
            finishing[:, k:] = False
            scores = torch.where(finishing, cand / (t + 1) ** alpha, -float("inf"))
            merged = torch.cat([done_scores, scores], 1)
            padded = nn.functional.pad(seqs, (0, max_length - t - 1))
            best, pick = merged.topk(k, dim=1)
            done_tokens = torch.cat([done_tokens, padded], 1)[rows, pick]
            done_scores = best
            growing = torch.where(word == EOS, -float("inf"), cand)
            live, chosen = growing.topk(k, dim=1)
            parents = parent[rows, chosen]
            history, token = seqs[rows, chosen], word[rows, chosen].reshape(-1)
            flat = (rows * k + parents).reshape(-1)
            state = (state[0][:, flat], state[1][:, flat])
            if not bool((live / max_length**alpha > done_scores[:, :1]).any()):
                break
        return done_tokens[:, 0]


def run(args, batches, test) -> dict:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    model = Seq2Seq(args.vocab, args.embedding, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    timings = []
    for i, (src, tgt) in enumerate(batches):
        started = time.perf_counter()
        optimizer.zero_grad()
        loss = model.loss(torch.from_numpy(src).long(), torch.from_numpy(tgt).long())
        loss.backward()
        optimizer.step()
        timings.append(time.perf_counter() - started)
        if i == args.warmup_steps:
            first_loss = float(loss.detach())
    result = {"loss_first": first_loss, "loss_last": float(loss.detach())}
    result["train_tokens_per_s"] = batches[0][1].size / float(np.median(timings[args.warmup_steps :]))
    model.eval()
    if args.weights is not None:  # decode zoo's trained model: the same outputs, the same work
        with np.load(args.weights) as saved:
            model.load_state_dict({name: torch.from_numpy(saved[name]) for name in saved.files})
        result["decoded_zoo"] = True
    src = torch.from_numpy(test).long()
    result.update(_decode_speed(lambda s: model.greedy(s, args.length + 1), src, args, "greedy"))
    beam = lambda s: model.beam(s, args.beam_size, args.length + 1, args.alpha)
    result.update(_decode_speed(beam, src, args, "beam"))
    return result


def _decode_speed(fn, src, args, label) -> dict:
    fn(src[: args.batch_size])  # warm-up
    seconds = float("inf")
    for _ in range(args.decode_passes):
        started = time.perf_counter()
        outputs = [fn(src[i : i + args.batch_size]) for i in range(0, src.shape[0], args.batch_size)]
        seconds = min(seconds, time.perf_counter() - started)
    from seq2seq import exact_match

    lengths = [int((row != PAD).sum()) for out in outputs for row in out]
    width = max(out.shape[1] for out in outputs)
    tokens = np.concatenate([nn.functional.pad(out, (0, width - out.shape[1])).numpy() for out in outputs])
    return {
        f"{label}_sentences_per_s": src.shape[0] / seconds,
        f"{label}_mean_length": float(np.mean(lengths)),
        f"{label}_exact": exact_match(tokens, src.numpy()),
        f"{label}_tokens": tokens.tolist(),
    }
