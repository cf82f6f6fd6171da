"""Memory of ``mimick_vectors`` on a long stream of distinct OOV words: is it bounded by cache_size?

Streams ``--words`` distinct made-up words (200,000 by default; each doc has 2 new words and 20
drawn, Zipf-like, from a pool of 20,000 recurring OOV words, so that the cache holds words
predicted in many different batches: with views, each such word kept its batch's whole
prediction matrix alive) through a blank English pipeline with
``mimick_vectors`` (``cache_size`` 5,000) and prints the process's RSS as it goes. Docs are not
kept. The cache holds at most ``cache_size`` rows of ``width`` floats. spaCy's vocab itself grows
with every new string (a lexeme per word): ``--no-mimick`` streams the same words without the
component, and the difference between the two runs is what ``mimick_vectors`` holds.

    python benchmarks/oov_memory.py --model MODEL_DIR [--words 200000] [--cache-size 5000] [--no-mimick]
"""
import argparse
import random
import string
import time

import numpy
import spacy
from spacy.vectors import Vectors

from spacy_mimick.vectors.mimick_model import MimickModel


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cache_mb(pipe) -> float:
    """Memory the cached vectors keep alive: the arrays owning their data (a view keeps its
    whole base array), each counted once."""
    owners = {}
    for vector in pipe.vocab.vectors._cache.values():
        while isinstance(vector.base, numpy.ndarray):
            vector = vector.base
        owners[id(vector)] = vector.nbytes
    return sum(owners.values()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="trained Mimick model directory")
    parser.add_argument("--words", type=int, default=200_000, help="distinct OOV words to stream")
    parser.add_argument("--cache-size", type=int, default=5000)
    parser.add_argument("--report-every", type=int, default=20_000)
    parser.add_argument("--no-mimick", action="store_true", help="the same stream without the component")
    args = parser.parse_args()
    model = MimickModel.from_disk(args.model)
    nlp = spacy.blank("en")
    # One in-vocabulary row of the model's width: every streamed word is OOV.
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=numpy.ones((1, model.width), "float32"), keys=["the"])
    pipe = None
    if not args.no_mimick:
        pipe = nlp.add_pipe("mimick_vectors", config={"cache_size": args.cache_size, "lowercase_backoff": False})
        pipe.set_model(model)
    rng = random.Random(0)

    def word(i: int) -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(5)) + str(i)

    pool = [word(-i - 1) for i in range(20_000)]
    zipf = 1 / numpy.arange(1, len(pool) + 1)
    draws = numpy.random.default_rng(0).choice(len(pool), size=(args.words // 2 + 1, 20), p=zipf / zipf.sum())

    def texts():
        for n, start in enumerate(range(0, args.words, 2)):
            fresh = [word(i) for i in range(start, min(start + 2, args.words))]
            yield " ".join(fresh + [pool[i] for i in draws[n]])

    what = "without mimick_vectors" if pipe is None else f"cache_size {args.cache_size:,}, {model.width}-d model"
    print(f"{args.words:,} distinct OOV words, {what}")
    print("| words streamed | RSS (MB) | cached vectors | memory the cache keeps alive (MB) |")
    print("|---:|---:|---:|---:|")
    print(f"| 0 | {rss_mb():.0f} | 0 | 0 |")
    start, seen, next_report = time.perf_counter(), 0, args.report_every
    for doc in nlp.pipe(texts(), batch_size=1000):  # the component's default batch
        seen += 2
        if seen >= next_report:
            print(f"| {min(seen, args.words):,} | {rss_mb():.0f} | {len(pipe.vocab.vectors._cache) if pipe else 0:,} | "
                  f"{cache_mb(pipe) if pipe else 0:.1f} |", flush=True)
            next_report += args.report_every
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
