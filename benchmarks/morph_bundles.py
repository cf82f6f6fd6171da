"""``mimick_tagger``'s ``seen_feature_sets`` on saved pipelines: the attributes decoded as one
feature set seen in training with the token's POS, against each head on its own. No training.

``mimick_tagger`` predicts each attribute with its own head, so a token can get a feature set that
no training word had (``Gender`` without ``Number``, a verb's ``Tense`` on a noun), where spaCy's
morphologizer predicts whole feature sets seen in training. With ``seen_feature_sets`` the POS is
decoded as before and the attributes become the feature set, among those the training sample
(gold POS + FEATS) shows with that POS, whose summed per-head log-probabilities are highest
(``spacy_mimick/tagger/feature_sets.py``). Each pipeline tags the test set (gold words) both
ways; printed: UFeats exact match (``morph``, spaCy's ``morph_acc``) with McNemar's test on the
per-token outcomes, and the paper's attribute micro-F1. A pipeline saved before the sets were
kept gets them from TRAIN (its training sample), as ``initialize`` would.

    python benchmarks/morph_bundles.py --run NAME PIPELINE TEST.spacy TRAIN.spacy [--run ...]
"""
import argparse
from typing import List

import numpy
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_mimick.tagger.feature_sets import feature_sets_by_pos
from spacy_mimick.ud.scorer import score_attributes
from spacy_mimick.ud.significance import mcnemar


def run(name: str, pipeline: str, test: str, train: str) -> List[str]:
    nlp = spacy.load(pipeline)
    tagger = nlp.get_pipe("mimick_tagger")
    gold = list(DocBin().from_disk(test).get_docs(nlp.vocab))
    if not tagger.cfg.get("feature_sets_by_pos"):
        train_docs = DocBin().from_disk(train).get_docs(nlp.vocab)
        tagger.cfg["feature_sets_by_pos"] = feature_sets_by_pos(
            (t.pos_, t.morph.to_dict()) for doc in train_docs for t in doc)
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold]
    for proc_name, proc in nlp.pipeline:
        if proc_name == tagger.name:
            break
        docs = list(proc.pipe(docs))
    results = {}
    for label, on in (("independent heads", False), ("seen feature sets", True)):
        tagger.seen_feature_sets = on
        pred = [d.copy() for d in docs]
        tagger.set_annotations(pred, tagger.predict(pred))
        sc = score_attributes([Example(p, g) for p, g in zip(pred, gold)])
        right = numpy.array([str(p.morph) == str(g.morph) for pd, gd in zip(pred, gold) for p, g in zip(pd, gd)])
        results[label] = (sc, right)
    (base, base_right), (new, new_right) = results["independent heads"], results["seen feature sets"]
    p = mcnemar(new_right, base_right)[1]
    n_sets = sum(len(v) for v in tagger.cfg["feature_sets_by_pos"].values())
    return [
        f"| {name} | {n_sets} | {100 * base['morph_acc']:.2f} | {100 * new['morph_acc']:.2f} | "
        f"{100 * (new['morph_acc'] - base['morph_acc']):+.2f} | {p:.2g} | {100 * base['attr_micro_f']:.2f} | "
        f"{100 * new['attr_micro_f']:.2f} | {100 * (new['attr_micro_f'] - base['attr_micro_f']):+.2f} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs=4, action="append", required=True,
                        metavar=("NAME", "PIPELINE", "TEST", "TRAIN"), help="A saved pipeline and its sets")
    args = parser.parse_args()
    print("| run | feature sets (POS, FEATS) in training | morph, heads | morph, seen sets | difference | "
          "McNemar p | attr micro-F1, heads | attr micro-F1, seen sets | difference |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, pipeline, test, train in args.run:
        for line in run(name, pipeline, test, train):
            print(line, flush=True)


if __name__ == "__main__":
    main()
