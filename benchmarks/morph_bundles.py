"""Attributes decoded as one feature set seen in training, on saved pipelines. No training.

``mimick_tagger`` predicts each attribute with its own head, so a token can get a feature set that
no training word had (``Gender`` without ``Number``, a verb's ``Tense`` on a noun), where spaCy's
morphologizer predicts whole feature sets seen in training. This benchmark decodes, for each
token, the feature set of the training sample (gold POS + FEATS) seen with the token's predicted
POS whose summed per-head log-probabilities are highest (all of the sample's sets when the POS
had none), and compares it with the independent heads on the test set (gold words, the saved POS
decoding): UFeats exact match (``morph``, spaCy's ``morph_acc``) with McNemar's test on the
per-token outcomes, and the paper's attribute micro-F1.

    python benchmarks/morph_bundles.py --run NAME PIPELINE TEST.spacy TRAIN.spacy [--run ...]
"""
import argparse
from typing import Dict, List, Sequence, Tuple

import numpy
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_mimick.tagger.pytorch_tagger_model import head_offsets
from spacy_mimick.ud.scorer import score_attributes
from spacy_mimick.ud.significance import mcnemar


def bundle_table(train: Sequence[Doc], heads: List[Tuple[str, List[str]]]) -> Dict[str, numpy.ndarray]:
    """{POS: (n_sets, n_attribute_heads) value indices} of the feature sets seen with each POS
    (a feature value the heads lack leaves that token out)."""
    index = [{value: i for i, value in enumerate(values)} for _, values in heads]
    seen: Dict[str, set] = {}
    for doc in train:
        for token in doc:
            feats = token.morph.to_dict()
            row = [index[h].get(feats.get(name, "NONE")) for h, (name, _) in enumerate(heads[1:], 1)]
            if token.pos_ and None not in row:
                seen.setdefault(token.pos_, set()).add(tuple(row))
    return {pos: numpy.array(sorted(rows), dtype="int64") for pos, rows in seen.items()}


def log_softmax(x: numpy.ndarray) -> numpy.ndarray:
    x = x - x.max(axis=1, keepdims=True)
    return x - numpy.log(numpy.exp(x).sum(axis=1, keepdims=True))


def decode_bundles(scores: numpy.ndarray, ids: numpy.ndarray, heads, table: Dict[str, numpy.ndarray]) -> numpy.ndarray:
    """``ids`` (tokens x heads, POS first) with the attribute columns replaced by the best feature
    set seen with each token's POS."""
    offsets = head_offsets([len(values) for _, values in heads])
    logp = [log_softmax(scores[:, offsets[h]:offsets[h + 1]]) for h in range(1, len(heads))]
    every = numpy.unique(numpy.concatenate(list(table.values())), axis=0)
    out = ids.copy()
    for i in range(len(ids)):
        sets = table.get(heads[0][1][ids[i, 0]], every)
        total = sum(logp[h][i][sets[:, h]] for h in range(len(heads) - 1))
        out[i, 1:] = sets[int(numpy.argmax(total))]
    return out


def run(name: str, pipeline: str, test: str, train: str) -> List[str]:
    nlp = spacy.load(pipeline)
    tagger = nlp.get_pipe("mimick_tagger")
    heads = tagger._heads
    gold = list(DocBin().from_disk(test).get_docs(nlp.vocab))
    table = bundle_table(list(DocBin().from_disk(train).get_docs(nlp.vocab)), heads)
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold]
    for proc_name, proc in nlp.pipeline:
        if proc_name == tagger.name:
            break
        docs = list(proc.pipe(docs))
    ids = tagger.predict(docs)
    scores = tagger.scores(docs)
    bundled = [decode_bundles(s, i, heads, table) for s, i in zip(scores, ids)]
    results = {}
    for label, batch in (("independent heads", ids), ("seen feature sets", bundled)):
        pred = [d.copy() for d in docs]
        tagger.set_annotations(pred, batch)
        sc = score_attributes([Example(p, g) for p, g in zip(pred, gold)])
        right = numpy.array([str(p.morph) == str(g.morph) for pd, gd in zip(pred, gold) for p, g in zip(pd, gd)])
        results[label] = (sc, right)
    (base, base_right), (new, new_right) = results["independent heads"], results["seen feature sets"]
    p = mcnemar(new_right, base_right)[1]
    n_sets = sum(len(v) for v in table.values())
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
