"""Training throughput in words per CPU-second: the trainer vs a one-word-at-a-time loop.

The original release updated the model after every word. In one run, on the same GloVe words
and the same architecture, this times (forward + backward + optimizer step, CPU time of this
process, so that other jobs on a shared machine matter less):

- "one word per update": batch size 1, model.featurize + torch.optim.Adam (the original's loop);
- "plain minibatches": length-bucketed batches through model.featurize + torch.optim (the
  trainer before the fast path);
- "trainer": what ``train_mimick`` runs now: words encoded once, batches gathered from the
  encoded arrays, foreach Adam/SparseAdam (``spacy_mimick.optimizers``).

``--startup`` also times, in fresh processes, what ``train`` does before its first step
(imports, reading the vectors with and without the cache, building the model). ``--full`` times
complete trainings (paper model, default model) on all rows.

    python benchmarks/train_throughput.py [--words 20000] [--threads 1] [--startup] [--full [--rounds 2]]
"""
import argparse
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy
import torch

from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.mimick_trainer import (
    DEFAULT_ARCH, PAPER_ARCH, PAPER_CONFIG, TrainConfig, _Batcher, make_optimizer, train_mimick,
)
from spacy_mimick.vectors_io import read_vectors

GLOVE = Path(__file__).resolve().parents[2] / "shared/data/embeddings/glove.6B.50d.top100k.txt.gz"


def torch_optim(module, lr=0.003, sparse_lr=0.01):
    """torch.optim.Adam / SparseAdam, as the trainer used them before the fast path."""
    sparse = [m.weight for m in module.modules() if isinstance(m, torch.nn.EmbeddingBag)]
    dense = [p for p in module.parameters() if all(p is not q for q in sparse)]
    opts = ([torch.optim.Adam(dense, lr=lr)] if dense else []) + \
        ([torch.optim.SparseAdam(sparse, lr=sparse_lr)] if sparse else [])
    return opts, dense


def plain_rate(model, words, targets, batches, max_seconds) -> float:
    """Words per CPU-second of the plain loop (featurize per batch, torch.optim, clipping)."""
    opts, dense = torch_optim(model.module)
    start, seen = time.process_time(), 0
    for idx in batches:
        pred = model.module(model.featurize([words[i] for i in idx]))
        loss = ((pred - targets[idx]) ** 2).sum(dim=1).mean()
        for o in opts:
            o.zero_grad()
        loss.backward()
        if dense:
            torch.nn.utils.clip_grad_norm_([p for p in dense if p.grad is not None], 5.0)
        for o in opts:
            o.step()
        seen += len(idx)
        if time.process_time() - start > max_seconds:
            break
    return seen / (time.process_time() - start)


def trainer_rate(model, batcher, targets, batches, max_seconds) -> float:
    """Words per CPU-second of train_mimick's step (the same code path, l2 loss, no typos)."""
    optimizer = make_optimizer(model.module, 0.003, 0.01)
    rng = random.Random(0)
    start, seen = time.process_time(), 0
    for idx in batches:
        batch = batcher.featurize(idx, 0.0, rng)
        idx_t = torch.from_numpy(idx)
        loss = ((model.module(batch) - targets[idx_t]) ** 2).sum(dim=1).mean()
        loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step(5.0)
        seen += len(idx)
        if time.process_time() - start > max_seconds:
            break
    return seen / (time.process_time() - start)


STARTUP = r"""
import sys, time
c0 = time.process_time()
import spacy_mimick.cli, torch
from spacy_mimick.vectors_io import read_vectors
from spacy_mimick import mimick_trainer as mt
torch.set_num_threads(1)
c1 = time.process_time()
v = read_vectors(sys.argv[1], cache=sys.argv[2] if sys.argv[2] != "-" else False)
c2 = time.process_time()
class Ready(Exception):
    pass
def first_step(*args, **kwargs):
    raise Ready
mt._Batcher.batches = first_step
try:
    mt.train_mimick(v, mt.PAPER_ARCH if sys.argv[3] == "paper" else mt.DEFAULT_ARCH, progress=False)
except Ready:
    pass
c3 = time.process_time()
print(c1 - c0, c2 - c1, c3 - c2)
"""


def startup(vectors: str) -> None:
    print("\nStart-up of `train` before its first step, CPU seconds (fresh processes, 1 thread):")
    print("| model | vectors read | imports | read vectors | build model + encode words | total |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as cache:
        for arch in ("paper", "default"):
            for label, cache_arg in (("parsed (--no-cache)", "-"), ("from the cache", cache)):
                if cache_arg != "-":  # fill the cache first
                    subprocess.run([sys.executable, "-c", STARTUP, vectors, cache_arg, arch], check=True,
                                   capture_output=True)
                out = subprocess.run([sys.executable, "-c", STARTUP, vectors, cache_arg, arch], check=True,
                                     capture_output=True, text=True, env={"OMP_NUM_THREADS": "1",
                                                                          **__import__("os").environ})
                imports, read, build = (float(x) for x in out.stdout.split())
                print(f"| {arch} | {label} | {imports:.2f} | {read:.2f} | {build:.2f} | "
                      f"{imports + read + build:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", default=str(GLOVE))
    parser.add_argument("--words", type=int, default=20000, help="GloVe rows sampled for the timing")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=6.0, help="CPU seconds per measurement (at most)")
    parser.add_argument("--startup", action="store_true", help="also time train's start-up")
    parser.add_argument("--full", action="store_true", help="also time full trainings on all rows")
    parser.add_argument("--rounds", type=int, default=2, help="--full: rounds of the 15-epoch comparison")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    table = read_vectors(args.vectors)
    rng = numpy.random.default_rng(0)
    rows = numpy.sort(rng.choice(len(table), size=args.words, replace=False))
    sample = table.subset(rows)
    targets = torch.from_numpy(sample.matrix)
    print(f"{args.words} GloVe words (random rows), torch threads {args.threads}, "
          f"at most {args.seconds:g} CPU-s per row")
    print("| architecture | loop | batch | words per CPU-second | vs one word per update |")
    print("|---|---|---:|---:|---:|")
    for arch in ("spacy_mimick.Mimick.v1", "spacy_mimick.MimickNgram.v1"):
        torch.manual_seed(0)
        model = MimickModel.create({"@architectures": arch}, table.words, table.dim)
        batcher = _Batcher(model, sample.words)
        idx = numpy.arange(len(sample))
        single = [idx[i : i + 1] for i in rng.permutation(len(sample))]
        base = plain_rate(model, sample.words, targets, single, args.seconds)
        print(f"| {arch} | one word per update (original) | 1 | {base:,.0f} | 1.0x |", flush=True)
        for size in (64, 128, 256):
            batches = batcher.batches(idx, size, rng, shuffle=True)
            for name, rate in (("plain minibatches (before)", plain_rate(model, sample.words, targets, batches, args.seconds)),
                               ("trainer (now)", trainer_rate(model, batcher, targets, batches, args.seconds))):
                print(f"| {arch} | {name} | {size} | {rate:,.0f} | {rate / base:.1f}x |", flush=True)
    if args.startup:
        startup(args.vectors)
    if args.full:
        full(table, args.rounds)


def full(table, rounds: int) -> None:
    """Complete trainings on all rows. The paper model for the same 15 epochs (no early stop):
    batches of 64 at lr 0.003 (``--paper`` before issue 16) and ``PAPER_CONFIG`` (now),
    alternating, ``rounds`` times each (a shared machine's speed drifts by 10% and more within
    minutes), with the dev loss of every epoch (the same in every round: training is
    deterministic) and its ratio to before; then ``--paper`` and the default model as ``train``
    runs them (early stopping)."""
    runs = (("batch 64, lr 0.003 (--paper before)", replace(PAPER_CONFIG, batch_size=64, learning_rate=0.003)),
            (f"batch {PAPER_CONFIG.batch_size}, lr {PAPER_CONFIG.learning_rate:g} (--paper now)", PAPER_CONFIG))
    curves, rates = {}, {name: [] for name, _ in runs}
    for _ in range(rounds):
        for name, config in runs:
            result = train_mimick(table, PAPER_ARCH, replace(config, max_epochs=15, patience=15),
                                  progress=False, log=lambda msg: None)
            words = sum(h.words_per_second * h.seconds for h in result.history)
            rates[name].append(words / sum(h.cpu_seconds for h in result.history))
            curves[name] = [h.dev_loss for h in result.history]
    print(f"\nPaper model, 15 epochs on all rows (no early stopping), {rounds} alternating rounds: "
          f"training-step words per CPU-second")
    print("| set-up | words per CPU-second, each round | mean | vs before | best dev loss (epoch) |")
    print("|---|---|---:|---:|---:|")
    first = None
    for name, losses in curves.items():
        mean = sum(rates[name]) / len(rates[name])
        first = first or mean
        best = min(range(len(losses)), key=losses.__getitem__)
        print(f"| {name} | {', '.join(f'{r:,.0f}' for r in rates[name])} | {mean:,.0f} | {mean / first:.2f}x | "
              f"{losses[best]:.4f} ({best + 1}) |", flush=True)
    (before, now) = curves.values()
    print("\n| epoch | " + " | ".join(str(e + 1) for e in range(len(before))) + " |")
    print("|---|" + "---:|" * len(before))
    for name, losses in curves.items():
        print(f"| {name} | " + " | ".join(f"{x:.4f}" for x in losses) + " |")
    print("| now / before - 1 | " + " | ".join(f"{(b / a - 1) * 100:+.2f}%" for a, b in zip(before, now)) + " |")
    print(f"(largest gap {max(abs(b / a - 1) for a, b in zip(before, now)) * 100:.2f}%; "
          f"best epochs {(min(now) / min(before) - 1) * 100:+.2f}%)")
    print("\nFull trainings on all rows (early stopping), CPU seconds:")
    for name, arch, config in (("--paper", PAPER_ARCH, PAPER_CONFIG), ("default", DEFAULT_ARCH, TrainConfig())):
        start = time.process_time()
        result = train_mimick(table, arch, config, progress=False, log=lambda msg: None)
        print(f"{name}: {len(table):,} words, {len(result.history)} epochs (best {result.best_epoch}, "
              f"dev loss {result.model.meta['dev_loss']:.4f}): {time.process_time() - start:,.1f} CPU-s; "
              f"dev loss by epoch {[round(h.dev_loss, 4) for h in result.history]}")


if __name__ == "__main__":
    main()
