"""Two ways to get more out of the plain lookup (table vectors for table words, Mimick's for the
rest) on the similarity sets without touching a table word's vector, measured on trained models:

- ``mean of N``: the OOV word's vector is the mean of N Mimick models' predictions (the same
  training, other seeds), against each model alone;
- ``de-shrunk x a``: ``mean + a * (prediction - mean)`` (``mean``: the table's mean row). A model
  trained with squared L2 predicts vectors nearer the table's mean than true rows are (the ratio
  of the distances is printed, on the table's rarest 5,000 rows), and cosine is not invariant to a
  shift, so a prediction that leans to the mean may look alike to every partner.

Spearman x 100 over all pairs of each set, a missing vector counting 0, words lowercased, as in
``python -m spacy_mimick similarity``. Usage (models from ``python -m spacy_mimick train VECTORS
DIR --seed S``):

    OMP_NUM_THREADS=1 python benchmarks/rare_word_plain.py ../shared/data/embeddings/glove.6B.50d.top100k.txt.gz \
        models/glove-s0 models/glove-s1 models/glove-s2 --sets ../shared/data/similarity/en/rw.txt ...
"""
import argparse
from pathlib import Path

import numpy

from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.similarity import evaluate_similarity, read_similarity_pairs
from spacy_mimick.vectors.vectors_io import read_vectors

ALPHAS = (1.25, 1.5, 2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vectors", help="the table the models were trained on")
    parser.add_argument("models", nargs="+", type=Path, help="trained Mimick models (seeds of one training)")
    parser.add_argument("--sets", nargs="+", type=Path, required=True, help="similarity files")
    parser.add_argument("--digits", type=int, default=1,
                        help="decimals of the scores (2 to read a score against a threshold such as 35)")
    args = parser.parse_args()
    table = read_vectors(args.vectors)
    models = [MimickModel.from_disk(path) for path in args.models]
    mean = table.matrix.mean(axis=0)
    rare = table.words[-5000:]
    true_dist = numpy.linalg.norm(numpy.stack([table.get(w) for w in rare]) - mean, axis=1).mean()
    pred_dist = numpy.linalg.norm(models[0].predict(rare) - mean, axis=1).mean()
    print(f"table's rarest 5,000 rows: distance to the table's mean {true_dist:.3f}, "
          f"{args.models[0].name}'s prediction's {pred_dist:.3f} (ratio {true_dist / pred_dist:.2f})\n")
    names = [path.name for path in args.models]
    columns = names + ([f"mean of {len(models)}"] if len(models) > 1 else []) + [f"{names[0]} de-shrunk x {a}" for a in ALPHAS]
    print("| set | pairs | " + " | ".join(columns) + " |")
    print("|---|---:|" + "---:|" * len(columns))
    for path in args.sets:
        pairs = read_similarity_pairs(path)
        words = sorted({w.lower() for p in pairs for w in (p.word1, p.word2)})
        preds = [dict(zip(words, model.predict(words))) for model in models]

        def lookup(oov):
            def look(word: str) -> numpy.ndarray:
                known = table.get(word.lower())
                return known if known is not None else oov(word.lower())
            return look

        lookups = [lookup(p.__getitem__) for p in preds]
        if len(models) > 1:
            lookups.append(lookup(lambda w: numpy.mean([p[w] for p in preds], axis=0)))
        lookups += [lookup(lambda w, a=a: mean + a * (preds[0][w] - mean)) for a in ALPHAS]
        scores = [evaluate_similarity(pairs, look).spearman for look in lookups]
        cells = " | ".join(f"{s:.{args.digits}f}" for s in scores)
        print(f"| {path.name} | {len(pairs):,} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
