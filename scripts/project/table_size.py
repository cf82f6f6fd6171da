"""How many vector rows a package needs: a trained pipeline's table cut to N rows, either with
Mimick predicting the words cut (``mimick``: the first N rows kept, the rest served by the
pipeline's Mimick model through ``MimickVectors``) or with spaCy's own pruning (``prune``:
``Vocab.prune_vectors(N)``, every cut word mapped to its nearest kept row), scored on the test set
(gold words) by the project's scorer, with the size of the saved vocab (table + Mimick model).
No retraining: the tagger is the package's, only its vectors change.

    python scripts/project/table_size.py PIPELINE TEST.spacy --sizes 100000,50000,20000,5000 \
        [--train TRAIN.spacy] [--methods mimick,prune] [--json OUT.json]

The table's row order is its frequency order (GloVe and navec are written most frequent first;
``prune_vectors`` keeps the rows of the most probable lexemes, which for a table without
probabilities is its row order too).
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy
import spacy
from spacy.vectors import Vectors
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docbins import read_docs, training_forms  # noqa: E402
from evaluate import evaluate_pipeline  # noqa: E402

from spacy_mimick.vectors.mimick_vectors import MimickVectors, install, table_of  # noqa: E402


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def cut(nlp, n_rows: int, method: str) -> None:
    """Replace ``nlp``'s table by its first ``n_rows`` rows (``mimick``) or spaCy's pruning."""
    vectors = nlp.vocab.vectors
    settings = {name: getattr(vectors, name) for name in
                ("model_path", "lowercase_backoff", "cache_size", "mimick_only", "n_threads")}
    model = vectors.model if isinstance(vectors, MimickVectors) else None
    table = table_of(vectors)
    if method == "mimick":
        rows = sorted(table.key2row.items(), key=lambda item: item[1])[:n_rows]
        keys = [key for key, _ in rows]
        data = numpy.ascontiguousarray(table.data[[row for _, row in rows]])
        nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=data, keys=keys, name=table.name)
    elif method == "prune":
        nlp.vocab.vectors = table
        nlp.vocab.prune_vectors(n_rows)
    else:
        raise ValueError(f"unknown method {method!r}: expected mimick or prune")
    installed = install(nlp.vocab, **settings)
    if model is not None:
        installed.set_model(model)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pipeline")
    parser.add_argument("test", type=Path)
    parser.add_argument("--sizes", default="100000,50000,20000,5000")
    parser.add_argument("--methods", default="mimick,prune")
    parser.add_argument("--train", type=Path, help="the training set (OOV scores against its words)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    methods = args.methods.split(",")
    base = spacy.load(args.pipeline)
    full_rows = table_of(base.vocab.vectors).shape[0]
    train_words = None
    if args.train:
        train_words = training_forms(args.train, base.vocab)
    runs = [("full", full_rows)] + [(m, n) for n in sizes for m in methods if n < full_rows]
    rows = []
    for method, n_rows in tqdm(runs, desc="table sizes", unit="run"):
        nlp = spacy.load(args.pipeline)
        start = time.perf_counter()
        if method != "full":
            cut(nlp, n_rows, method)
        cut_s = time.perf_counter() - start
        gold = read_docs(args.test, nlp.vocab)
        result = evaluate_pipeline(nlp, gold, train_words)
        with tempfile.TemporaryDirectory() as tmp:
            nlp.vocab.to_disk(Path(tmp) / "vocab")
            vocab_mb = folder_mb(Path(tmp) / "vocab")
        s = result["scores"]
        rows.append({"method": method, "rows": n_rows, "pos_acc": s["pos_acc"], "attr_micro_f": s["attr_micro_f"],
                     "oov_vec_pos_acc": s.get("oov_vec_pos_acc"), "vocab_mb": vocab_mb, "cut_s": cut_s})
    print(f"{args.pipeline}: test {args.test} ({sum(len(d) for d in gold):,} words); table {full_rows:,} rows\n")
    print("| table | rows kept | words cut get | POS | attr. micro-F1 | vocab on disk |")
    print("|---|---:|---|---:|---:|---:|")
    for r in rows:
        what = {"full": "the full table", "mimick": "Mimick's vector", "prune": "nearest kept row (spaCy's prune_vectors)"}
        print(f"| {r['method']} | {r['rows']:,} | {what[r['method']]} | {100 * r['pos_acc']:.2f} | "
              f"{100 * r['attr_micro_f']:.2f} | {r['vocab_mb']:.0f} MB |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
