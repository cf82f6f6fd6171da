"""Priors on the feature set that ``seen_feature_sets`` decodes, on saved pipelines. No training.

``mimick_tagger`` decodes a token's attributes as the feature set, among those the training data
shows with the token's POS, whose heads' log-probabilities sum highest
(``spacy_mimick/tagger/feature_sets.py``). Two priors are added to each candidate set's sum here,
each with a weight chosen on the dev set (0, 0.5, 1, 2, 4; 0 wins ties), then scored on test:

- ``lexicon``: on a word of the training data (n annotated tokens, c_s of them with set s),
  weight x log((c_s + q_s) / (n + 1)), q_s the set's add-one share of all the training tokens:
  ``seen_word_prior``'s rule applied to the feature sets. This is ``mimick_tagger``'s
  ``seen_feature_set_prior`` (``feature_sets.SeenSetPrior``), run through the component's own
  decoding;
- ``frequency``: on every token, weight x log P(s | POS), add-one smoothed over the sets of the
  POS. Measured as noise and not built; it lives here only.

The POS is the pipeline's own decoding (its saved weights). A pipeline saved before the feature
sets or the counts were kept gets them from TRAIN, as ``initialize`` would. Printed per run: UFeats
exact match (spaCy's ``morph_acc``) and the paper's attribute micro-F1 on test, the decoding
without the prior against each prior at its dev-chosen weight, McNemar's test on the per-token
exact matches.

    python benchmarks/feature_set_prior.py --run NAME PIPELINE DEV.spacy TEST.spacy TRAIN.spacy [--run ...]
"""
import argparse
from collections import Counter
from typing import Dict, List, Sequence

import numpy
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_mimick.tagger.feature_sets import (
    decode_feature_sets, feature_set_counts_by_form, feature_sets_by_pos, gold_set_rows,
)
from spacy_mimick.tagger.pytorch_tagger_model import head_offsets
from spacy_mimick.tagger.tagger_model import through_components_before
from spacy_mimick.ud.scorer import score_attributes
from spacy_mimick.ud.significance import mcnemar

WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)


class FrequencyPrior:
    """log P(set | POS) over the candidate sets, add-one smoothed, on every token (the
    interface of ``feature_sets.SeenSetPrior``)."""

    def __init__(self, tagger, train_docs: List[Doc]):
        labels = {pos: i for i, pos in enumerate(tagger.cfg["labels_pos"])}
        tokens = [t for doc in train_docs for t in doc if t.pos_ in labels]
        rows = gold_set_rows([str(t.morph) for t in tokens], tagger._heads[1:])
        self.counts: Dict[int, Counter] = {}
        for t, row in zip(tokens, map(tuple, rows.tolist())):
            if min(row) >= 0:  # a set the heads can hold
                self.counts.setdefault(labels[t.pos_], Counter())[row] += 1

    def __len__(self) -> int:
        return len(self.counts)

    def shift(self, forms: Sequence[str], tokens: numpy.ndarray, sets: numpy.ndarray, key: int,
              weight: float) -> numpy.ndarray:
        counts = self.counts.get(key, Counter())
        n = sum(counts.values())
        log_p = numpy.log([(counts.get(tuple(row), 0) + 1.0) / (n + len(sets)) for row in sets.tolist()])
        return numpy.repeat(weight * log_p[None, :], len(tokens), axis=0)


def tag(nlp, tagger, gold: List[Doc]):
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold]
    docs = through_components_before(nlp, tagger.name, docs)
    flat = numpy.concatenate(tagger.scores(docs))
    return docs, flat, tagger.read_forms(docs)


def decode(tagger, docs, flat, read, prior: str, weight: float, frequency: FrequencyPrior) -> numpy.ndarray:
    tagger.seen_feature_set_prior = weight if prior == "lexicon" else 0.0
    ids = tagger.decode(flat.copy(), docs, read)
    if prior == "frequency" and weight:
        heads = tagger._heads
        offsets = head_offsets([len(values) for _, values in heads])
        ids[:, 1:] = decode_feature_sets([flat[:, offsets[h]:offsets[h + 1]] for h in range(1, len(heads))],
                                         ids[:, 0], tagger.feature_set_table(), prior=frequency, forms=read,
                                         weight=weight)
    return ids


def outcome(tagger, docs: List[Doc], gold: List[Doc], ids: numpy.ndarray):
    pred = [d.copy() for d in docs]
    tagger.set_annotations(pred, numpy.split(ids, numpy.cumsum([len(d) for d in pred])[:-1]))
    sc = score_attributes([Example(p, g) for p, g in zip(pred, gold)])
    right = numpy.array([str(p.morph) == str(g.morph) for pd, gd in zip(pred, gold) for p, g in zip(pd, gd)])
    return sc, right


def run(name: str, pipeline: str, dev: str, test: str, train: str) -> List[str]:
    nlp = spacy.load(pipeline)
    tagger = nlp.get_pipe("mimick_tagger")
    if len(tagger._heads) < 2:
        return [f"| {name} | (no attributes: nothing to decode) |"]
    train_docs = list(DocBin().from_disk(train).get_docs(nlp.vocab))
    if not tagger.cfg.get("feature_sets_by_pos"):
        tagger.cfg["feature_sets_by_pos"] = feature_sets_by_pos(
            (t.pos_, t.morph.to_dict()) for d in train_docs for t in d)
    if not tagger.cfg.get("seen_feature_set_counts"):
        tagger.cfg["seen_feature_set_counts"] = feature_set_counts_by_form(
            (t.text, t.pos_, t.morph.to_dict()) for d in train_docs for t in d)
    tagger.seen_feature_sets = True
    frequency = FrequencyPrior(tagger, train_docs)
    lines, chosen = [], {}
    for split, path in (("dev", dev), ("test", test)):
        gold = list(DocBin().from_disk(path).get_docs(nlp.vocab))
        docs, flat, read = tag(nlp, tagger, gold)
        base_sc, base_right = outcome(tagger, docs, gold, decode(tagger, docs, flat, read, "lexicon", 0.0, frequency))
        for prior in ("lexicon", "frequency"):
            if split == "dev":
                best = (base_sc["morph_acc"], 0.0)
                for w in WEIGHTS[1:]:
                    sc, _ = outcome(tagger, docs, gold, decode(tagger, docs, flat, read, prior, w, frequency))
                    if sc["morph_acc"] > best[0]:
                        best = (sc["morph_acc"], w)
                chosen[prior] = best[1]
                continue
            w = chosen[prior]
            sc, right = outcome(tagger, docs, gold, decode(tagger, docs, flat, read, prior, w, frequency))
            p = mcnemar(right, base_right)[1] if w else 1.0
            lines.append(
                f"| {name} | {prior} | {w:g} | {100 * base_sc['morph_acc']:.2f} | {100 * sc['morph_acc']:.2f} | "
                f"{100 * (sc['morph_acc'] - base_sc['morph_acc']):+.2f} | {p:.2g} | {100 * base_sc['attr_micro_f']:.2f} | "
                f"{100 * sc['attr_micro_f']:.2f} | {100 * (sc['attr_micro_f'] - base_sc['attr_micro_f']):+.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs=5, action="append", required=True,
                        metavar=("NAME", "PIPELINE", "DEV", "TEST", "TRAIN"), help="A saved pipeline and its data")
    args = parser.parse_args()
    print("| run | prior | weight (dev) | morph, no prior | morph, prior | difference | McNemar p | "
          "attr micro-F1, no prior | attr micro-F1, prior | difference |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, pipeline, dev, test, train in args.run:
        for line in run(name, pipeline, dev, test, train):
            print(line, flush=True)


if __name__ == "__main__":
    main()
