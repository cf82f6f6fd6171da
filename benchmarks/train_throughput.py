"""Training throughput: our minibatched Mimick trainer vs a one-word-at-a-time loop.

The original release updated the model after every word. Both loops below train the same
architecture (forward + backward + optimizer step) on the same GloVe words, in the same run;
the table reports words/s and the ratio. Optionally (--full) also times a complete training run
on the 100k GloVe rows with early stopping.

    python benchmarks/train_throughput.py [--words 3000] [--threads 2] [--full]
"""
import argparse
import time
from pathlib import Path

import numpy
import torch

from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.mimick_trainer import TrainConfig, _Batcher, make_optimizer, train_mimick
from spacy_mimick.vectors_io import read_vectors

GLOVE = Path(__file__).resolve().parents[2] / "shared/data/embeddings/glove.6B.50d.top100k.txt.gz"


def words_per_second(model, words, targets, batches) -> float:
    optimizer = make_optimizer(model.module, 0.003)
    target_t = torch.from_numpy(targets)
    start = time.perf_counter()
    for idx in batches:
        pred = model.module(model.featurize([words[i] for i in idx]))
        loss = ((pred - target_t[idx]) ** 2).sum(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return sum(len(b) for b in batches) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", default=str(GLOVE))
    parser.add_argument("--words", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="also time a full training run")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    table = read_vectors(args.vectors)
    rng = numpy.random.default_rng(0)
    rows = numpy.sort(rng.choice(len(table), size=args.words, replace=False))
    sample = table.subset(rows)
    print(f"{args.words} GloVe words, torch threads {args.threads}")
    print("| architecture | trainer | batch | words/s | speed-up |")
    print("|---|---|---|---:|---:|")
    for arch in ("spacy_mimick.Mimick.v1", "spacy_mimick.MimickNgram.v1", "spacy_mimick.MimickHybrid.v1"):
        model = MimickModel.create({"@architectures": arch}, table.words, table.dim)
        batcher = _Batcher(model, sample.words)
        idx = numpy.arange(len(sample))
        single = [idx[i : i + 1] for i in rng.permutation(len(sample))]
        base = words_per_second(model, sample.words, sample.matrix, single)
        print(f"| {arch} | one word per update (original) | 1 | {base:,.0f} | 1.0x |")
        for size in (32, 64, 256):
            batches = batcher.batches(idx, size, rng, shuffle=True)
            wps = words_per_second(model, sample.words, sample.matrix, batches)
            print(f"| {arch} | length-bucketed minibatches | {size} | {wps:,.0f} | {wps / base:.1f}x |")
    if args.full:
        print("\nFull training run on all rows (early stopping, default settings):")
        start = time.perf_counter()
        result = train_mimick(table, {"@architectures": "spacy_mimick.Mimick.v1"}, TrainConfig(), progress=False)
        print(f"{len(table):,} words, {len(result.history)} epochs (best {result.best_epoch}): "
              f"{time.perf_counter() - start:,.0f} s wall")


if __name__ == "__main__":
    main()
