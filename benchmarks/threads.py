"""torch threads for the components' predictions, as users meet them from Python: the
``n_threads`` setting of ``mimick_vectors`` and ``mimick_tagger`` (default -1: the cores other
processes leave free, ``spacy_mimick/threads.py``) against 1, 2 and torch's own setting
(``n_threads = 0``: one thread per core), idle and with the other core kept busy.

The pipeline: blank English + GloVe 100k x 50d, ``mimick_vectors`` (a trained Mimick model) and the
default ``mimick_tagger`` (MimickTagger.v3, Both) initialized on 300 EWT training sentences; speed
does not depend on trained weights, so it is not trained. Measured on UD English-EWT test text:
``nlp.pipe`` (batch 256) tokens/s, and ``nlp(text)`` one sentence at a time (median and p95
latency), each setting in the same run, best of ``--repeat`` for the throughput.

    python benchmarks/threads.py --model MIMICK_DIR [--repeat 2] [--sentences 600]
"""
import argparse
import multiprocessing
import time
from pathlib import Path

import numpy
import spacy
import torch
from spacy.training import Example
from spacy.vectors import Vectors

from spacy_mimick.ud.corpus import read_conllu
from spacy_mimick.vectors.vectors_io import read_vectors

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
GLOVE = SHARED / "embeddings/glove.6B.50d.top100k.txt.gz"
EWT = SHARED / "ud/UD_English-EWT"


def burn(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def build(model: str):
    table = read_vectors(GLOVE)
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=table.matrix, keys=table.words)
    nlp.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp.add_pipe("mimick_tagger")
    train = [Example(nlp.make_doc(doc.text), doc) for doc in read_conllu(EWT / "en_ewt-ud-train.conllu", nlp.vocab, limit=300)]
    nlp.get_pipe("mimick_vectors").initialize(model_path=model)
    nlp.initialize(lambda: train)
    return nlp


def measure(nlp, texts, repeat: int):
    best = 0.0
    n_tokens = 0
    for _ in range(repeat):
        nlp.vocab.vectors._cache.clear()
        start = time.perf_counter()
        n_tokens = sum(len(doc) for doc in nlp.pipe(texts, batch_size=256))
        best = max(best, n_tokens / (time.perf_counter() - start))
    nlp.vocab.vectors._cache.clear()
    latencies = []
    for text in texts:
        start = time.perf_counter()
        nlp(text)
        latencies.append(time.perf_counter() - start)
    return best, 1000 * numpy.median(latencies), 1000 * numpy.percentile(latencies, 95)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="Mimick model trained on GloVe 100k")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sentences", type=int, default=600)
    args = parser.parse_args()
    texts = [line[len("# text = "):].rstrip("\n") for line in open(EWT / "en_ewt-ud-test.conllu", encoding="utf8")
             if line.startswith("# text = ")][: args.sentences]
    nlp = build(args.model)
    cores = multiprocessing.cpu_count()
    settings = [("-1: free cores (default)", -1), ("1", 1), ("2", 2), (f"0: torch's own ({torch.get_num_threads()})", 0)]
    print(f"{len(texts)} EWT test sentences, {cores} cores; torch's own setting: {torch.get_num_threads()} threads")
    print("| machine | n_threads | nlp.pipe tokens/s | vs torch's own | nlp(text) median ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for machine in ("idle", "other core busy"):
        stop = multiprocessing.Event()
        burner = None
        if machine != "idle":
            burner = multiprocessing.Process(target=burn, args=(stop,), daemon=True)
            burner.start()
        rows = []
        for label, n in settings:
            nlp.get_pipe("mimick_vectors").cfg["n_threads"] = n
            nlp.get_pipe("mimick_tagger").n_threads = n
            rows.append((label, *measure(nlp, texts, args.repeat)))
        if burner is not None:
            stop.set()
            burner.join()
        reference = rows[-1][1]
        for label, rate, median, p95 in rows:
            print(f"| {machine} | {label} | {rate:,.0f} | {rate / reference:.2f} | {median:.1f} | {p95:.1f} |", flush=True)


if __name__ == "__main__":
    main()
