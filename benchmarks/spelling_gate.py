"""The spelling backoff's typo gate, chosen on a development split that neither the typo probe
nor Rare Word is part of.

The gate (``spacy_mimick.vectors.spelling.CharLM``) scores a word against the table word one
edit from it: how many nats per character less likely the word is under a character n-gram
model of the table's words. It has to tell two kinds of word apart, both absent from the table
and both one edit from table words:

- misspellings (should be corrected): ``--typos`` seeded one-edit typos (the trainer's
  ``make_typo``, the typo probe's generator) of table words of ranks ``--typo-ranks``
  (5,000-10,000 by default: the probe's bands are 1,000-5,000 and 10,000-30,000);
- real words (should keep Mimick's vector): the word forms of real text (``--real-words``,
  UD English-EWT train and dev) that the table lacks and that are one edit from a table word,
  tokens that the treebank marks ``Typo=Yes`` left out: the words a lookup meets that the table
  lacks but that are not typos (``binging``, ``detestable``, ``reassessments`` in Rare Word).
  The table's own rarest words are no such set: GloVe's tail is mostly names, accented forms
  of table words and acronyms.

The index and the character model are over the whole table, as the lookup builds them.

For each n-gram order it prints the ROC AUC of the score, the margin with the largest TPR - FPR
(Youden's J: typos corrected minus real words corrected, each as a share) and the margin that
still corrects ``--recall`` (90%) of the typos, and writes the table and the chosen margin to
``--out`` (.json and .md). The real words of web text are not clean: EWT leaves many
misspellings unmarked (``anwser``, ``conditons``, ``dialague``) and holds acronyms one letter
from others, so "real words corrected" overstates the harm and Youden's J, which trades
recovery for it, sets the margin too high. The recall rule is the one used: it bounds what the
gate costs the typo recovery, and the share of real words it still corrects is measured beside
it. The chosen order and margin are
``LM_ORDER`` and ``DEFAULT_TYPO_MARGIN`` in spelling.py; ``benchmarks/typo_probe.py --lookups
spelling,spell-freq-w05`` then measures the gate on the probe and on Rare Word.

    OMP_NUM_THREADS=1 python benchmarks/spelling_gate.py
"""
import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy
import spacy
from scipy.stats import rankdata

from spacy_mimick.ud.corpus import read_conllu
from spacy_mimick.vectors.similarity import typo_pairs
from spacy_mimick.vectors.spelling import CharLM, SpellingIndex, indexable
from spacy_mimick.vectors.vectors_io import read_vectors

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
GLOVE = DATA / "embeddings" / "glove.6B.50d.top100k.txt.gz"
EWT = DATA / "ud" / "UD_English-EWT"


def real_words(paths: List[str]) -> List[str]:
    """The lowercased word forms of the CoNLL-U files, but for tokens marked Typo=Yes."""
    vocab = spacy.blank("en").vocab
    words = set()
    for path in paths:
        for doc in read_conllu(path, vocab):
            words.update(t.text.lower() for t in doc if t.morph.get("Typo") != ["Yes"])
    return sorted(words)


def band(text: str) -> tuple:
    lo, hi = (int(x) for x in text.split("-"))
    if not 0 <= lo < hi:
        raise argparse.ArgumentTypeError(f"expected LO-HI with 0 <= LO < HI, got {text!r}")
    return lo, hi


def roc_auc(pos: numpy.ndarray, neg: numpy.ndarray) -> float:
    """P(score of a typo > score of a real word), ties counted half (Mann-Whitney U / n1 n2)."""
    ranks = rankdata(numpy.concatenate([pos, neg]))
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def best_margin(pos: numpy.ndarray, neg: numpy.ndarray) -> Dict:
    """The margin m (a candidate taken when score >= m) with the largest TPR - FPR."""
    best = None
    for m in numpy.unique(numpy.concatenate([pos, neg])):
        tpr, fpr = float((pos >= m).mean()), float((neg >= m).mean())
        if best is None or tpr - fpr > best["j"]:
            best = {"margin": float(m), "tpr": tpr, "fpr": fpr, "j": tpr - fpr}
    # the midpoint to the next score below, so that the margin is not one word's score
    below = numpy.concatenate([pos, neg])
    below = below[below < best["margin"]]
    if len(below):
        best["margin"] = round((best["margin"] + float(below.max())) / 2, 2)
    best["tpr"] = float((pos >= best["margin"]).mean())
    best["fpr"] = float((neg >= best["margin"]).mean())
    best["j"] = best["tpr"] - best["fpr"]
    return best


def recall_margin(pos: numpy.ndarray, neg: numpy.ndarray, recall: float) -> Dict:
    """The highest margin (two decimals) that still corrects ``recall`` of the typos."""
    margin = float(numpy.floor(numpy.quantile(pos, 1 - recall, method="lower") * 100) / 100)
    return {"margin": margin, "tpr": float((pos >= margin).mean()), "fpr": float((neg >= margin).mean())}


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", default=str(GLOVE))
    parser.add_argument("--limit", type=int, default=100000, help="rows read (0: all)")
    parser.add_argument("--real-words", default=f"{EWT / 'en_ewt-ud-train.conllu'},{EWT / 'en_ewt-ud-dev.conllu'}",
                        help="comma-separated CoNLL-U files whose words are the real words")
    parser.add_argument("--typo-ranks", type=band, default=(5000, 10000))
    parser.add_argument("--typos", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7, help="seed of the typos (the probe's is 45)")
    parser.add_argument("--orders", default="3,4,5,6")
    parser.add_argument("--recall", type=float, default=0.9, help="share of the typos the chosen margin corrects")
    parser.add_argument("--out", default=str(ROOT / "metrics" / "spelling_gate"))
    args = parser.parse_args(argv)
    command = "OMP_NUM_THREADS=1 python " + " ".join(
        shlex.quote(a) for a in ["benchmarks/spelling_gate.py", *(sys.argv[1:] if argv is None else argv)])
    table = read_vectors(args.vectors, limit=args.limit or None)
    kept = list(zip(table.words, range(len(table))))
    index = SpellingIndex(kept)
    in_table = set(table.words)
    held = [w for w in real_words(args.real_words.split(",")) if w not in in_table and indexable(w, 4)]
    def with_candidate(words: List[str]) -> List[tuple]:
        """(word, its most frequent candidate) for the words one edit from an indexed word."""
        found = ((w, index.candidates(w)) for w in words)
        return [(w, c[0][0]) for w, c in found if c]

    negatives = with_candidate(held)
    positives = with_candidate([t for _, t in typo_pairs(table, args.typos, args.seed, *args.typo_ranks)])
    print(f"{len(positives)} typos of ranks {args.typo_ranks[0]:,}-{args.typo_ranks[1]:,} with a candidate; "
          f"{len(negatives)} of {len(held)} real words without a table row one edit from a table word",
          flush=True)
    rows = []
    for order in [int(x) for x in args.orders.split(",") if x]:
        start = time.perf_counter()
        lm = CharLM([w.lower() for w, _ in kept if indexable(w, 1)], order=order)
        seconds = time.perf_counter() - start
        pos = numpy.asarray([lm.typo_score(t, c) for t, c in positives])
        neg = numpy.asarray([lm.typo_score(w, c) for w, c in negatives])
        row = {"order": order, "auc": roc_auc(pos, neg), **best_margin(pos, neg), "build_seconds": seconds,
               "nbytes": lm.nbytes}
        row["recall_rule"] = recall_margin(pos, neg, args.recall)
        row["real_words_corrected"] = [f"{w}->{c}" for (w, c), x in zip(negatives, neg)
                                       if x >= row["recall_rule"]["margin"]]
        rows.append(row)
        rec = row["recall_rule"]
        print(f"order {order}: AUC {row['auc']:.3f}; max J: margin {row['margin']:.2f}, typos corrected "
              f"{row['tpr']:.1%}, real words {row['fpr']:.1%}; recall {args.recall:.0%}: margin {rec['margin']:.2f}, "
              f"real words {rec['fpr']:.1%} (built in {seconds:.1f}s, {lm.nbytes / 2**20:.1f} MiB)", flush=True)
    chosen = max(rows, key=lambda r: (round(r["auc"], 2), -r["order"]))
    report = {"command": command, "vectors": args.vectors, "real_words": args.real_words, "typo_ranks": args.typo_ranks,
              "n_typos": len(positives), "n_real": len(negatives), "rows": rows,
              "chosen": {"order": chosen["order"], "margin": chosen["recall_rule"]["margin"]}}
    lines = [f"`{command}`", "",
             f"{len(positives)} one-edit typos (seed {args.seed}) of table words of ranks "
             f"{args.typo_ranks[0]:,}-{args.typo_ranks[1]:,}; {len(negatives)} real words (of EWT train + dev, no "
             f"Typo=Yes) that the table lacks, one edit from a table word.", "",
             f"| order | ROC AUC | max TPR - FPR: margin | typos / real words corrected | "
             f"{args.recall:.0%} of typos: margin | real words corrected | build s | MiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rec = r["recall_rule"]
        lines.append(f"| {r['order']} | {r['auc']:.3f} | {r['margin']:.2f} | {r['tpr']:.1%} / {r['fpr']:.1%} | "
                     f"{rec['margin']:.2f} | {rec['fpr']:.1%} | {r['build_seconds']:.1f} | {r['nbytes'] / 2**20:.1f} |")
    lines += ["", f"Chosen (highest AUC to two decimals, the lower order on a tie; the margin that corrects "
                  f"{args.recall:.0%} of the typos): order {chosen['order']}, margin {chosen['recall_rule']['margin']:.2f}."]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
