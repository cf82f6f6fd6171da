"""Word similarity (Stanford Rare Word, the paper's Table 3) of the vectors, Mimick, and both.

    python scripts/project/rare_word.py PAIRS VECTORS MIMICK_MODEL --output rare_word.json [--treebank T] [--cased]

Spearman's rho x 100 over all pairs (a pair with a missing vector counts with similarity 0)
and over the pairs whose words are all in the vectors' vocabulary, for three lookups: the
vectors alone, the vectors with Mimick for missing words, and Mimick alone (the same as
``python -m spacy_mimick similarity``), written as JSON for ``report.py``.
"""
import argparse
import sys
from pathlib import Path
from typing import List, Optional

from spacy_mimick.cli.mimick import similarity_lookups
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.similarity import evaluate_similarity, read_similarity_pairs
from spacy_mimick.vectors.vectors_io import read_vectors

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_threads  # noqa: E402,F401  (one torch thread, see torch_threads.py)
from json_files import vectors_name, write_json  # noqa: E402


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", type=Path, help="Similarity pairs (e.g. rw.txt)")
    parser.add_argument("vectors", help="The vectors Mimick was trained on")
    parser.add_argument("model", type=Path, help="A trained Mimick model")
    parser.add_argument("--output", "-o", type=Path, required=True)
    parser.add_argument("--treebank", default=None, help="Label of the run (the report's row key)")
    parser.add_argument("--sources", type=Path, default=None, help="data.py's sources.json (for the vectors' name)")
    parser.add_argument("--cased", action="store_true", help="Do not lowercase words (default: lowercase, as GloVe)")
    args = parser.parse_args(argv)

    pairs = read_similarity_pairs(args.pairs)
    table = read_vectors(args.vectors)
    model = MimickModel.from_disk(args.model)
    lowercase = not args.cased
    norm = (lambda w: w.lower()) if lowercase else (lambda w: w)
    words = [w for p in pairs for w in (p.word1, p.word2)]
    in_vocab = [p for p in pairs if all(table.get(norm(w)) is not None for w in (p.word1, p.word2))]
    systems = []
    for name, lookup in similarity_lookups(table, model, words, lowercase).items():
        result_all = evaluate_similarity(pairs, lookup)
        result_in = evaluate_similarity(in_vocab, lookup) if in_vocab else None
        systems.append({"name": name, "all": result_all.spearman,
                        "in_vocab": result_in.spearman if result_in else None,
                        "covered": result_all.n_covered})
        print(f"{name}: all pairs {result_all.spearman:.1f}, in-vocabulary pairs "
              f"{result_in.spearman if result_in else float('nan'):.1f}, {result_all.n_covered} pairs covered")
    name = vectors_name(args.sources) or Path(str(args.vectors)).name.split(".vec")[0]
    record = {
        "rare_word": True,
        "treebank": args.treebank,
        "pairs_file": str(args.pairs),
        "n_pairs": len(pairs),
        "n_in_vocab_pairs": len(in_vocab),
        "lowercase": lowercase,
        "vectors": {"source": str(args.vectors), "name": name,
                    "rows": len(table), "dim": table.dim},
        "model": str(args.model),
        "systems": systems,
    }
    write_json(args.output, record)
    print(f"-> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
