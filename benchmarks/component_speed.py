"""Inference speed of ``mimick_vectors`` inside ``nlp.pipe`` on real text (UD English-EWT test).

Same pipeline (blank English + the 100k GloVe vectors) with and without the component, in the same
run; reports tokens/s, the ratio, and the OOV rate. Each doc's vectors are read (``token.vector``)
so the cost of serving them (``MimickVectors``) counts too.

    python benchmarks/component_speed.py --model MODEL_DIR [--repeat 3]
"""
import argparse
import time
from pathlib import Path

import numpy
import spacy
from spacy.vectors import Vectors

from spacy_mimick.vectors.vectors_io import read_vectors

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
GLOVE = SHARED / "embeddings/glove.6B.50d.top100k.txt.gz"
EWT_TEST = SHARED / "ud/UD_English-EWT/en_ewt-ud-test.conllu"


def texts_of(conllu: Path):
    return [line[len("# text = "):].rstrip("\n") for line in open(conllu, encoding="utf8")
            if line.startswith("# text = ")]


def run(nlp, texts, repeat: int):
    best = float("inf")
    n_tokens = 0
    for _ in range(repeat):
        start = time.perf_counter()
        n_tokens = 0
        for doc in nlp.pipe(texts, batch_size=256):
            numpy.vstack([t.vector for t in doc]) if len(doc) else None
            n_tokens += len(doc)
        best = min(best, time.perf_counter() - start)
    return n_tokens, best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="trained Mimick model directory")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = read_vectors(GLOVE)
    texts = texts_of(EWT_TEST)
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=table.matrix, keys=table.words)
    base_tokens, base_time = run(nlp, texts, args.repeat)
    nlp.add_pipe("mimick_vectors").initialize(model_path=args.model)
    vectors = nlp.vocab.vectors
    oov = sum(int((vectors.sources(doc.to_array("ORTH")) >= 1).sum()) for doc in nlp.pipe(texts[:500]))
    vectors._cache.clear()
    cold_tokens, cold_time = run(nlp, texts, 1)
    warm_tokens, warm_time = run(nlp, texts, args.repeat)
    print(f"UD English-EWT test: {len(texts):,} sentences, {base_tokens:,} tokens")
    print("| pipeline | tokens/s | relative |")
    print("|---|---:|---:|")
    print(f"| blank en + GloVe vectors | {base_tokens / base_time:,.0f} | 1.00 |")
    print(f"| + mimick_vectors (cold cache) | {cold_tokens / cold_time:,.0f} | {base_time / cold_time:.2f} |")
    print(f"| + mimick_vectors (warm cache) | {warm_tokens / warm_time:,.0f} | {base_time / warm_time:.2f} |")
    print(f"(tokens given a vector by mimick_vectors in the first 500 sentences: {oov})")


if __name__ == "__main__":
    main()
