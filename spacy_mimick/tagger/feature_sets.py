"""The attributes of a token decoded as one feature set seen in training with its POS:
``mimick_tagger``'s ``seen_feature_sets``.

The tagger predicts each attribute with its own head (the paper's design), so a token can get a
feature set that no training word had: ``Gender`` without ``Number``, a verb's ``Tense`` on a
noun. spaCy's morphologizer predicts whole feature sets seen in training. With this rule the POS
is decoded as before (its priors included), and the attributes become the feature set, among
those the training data shows with that POS, whose heads' log-probabilities sum highest (all of
the training data's sets when the POS had none).

Measured (``benchmarks/morph_bundles.py``, docs/low_resource.md) on nine saved pipelines in seven
languages: UFeats exact match (spaCy's ``morph_acc``) +0.22 to +1.61, each McNemar p < 2e-5; the
paper's attribute micro-F1 -0.27 to +0.13. The earlier joint choice of POS and features
(``decode = "bundles"``, removed) moved POS and the attribute micro-F1 by nothing measurable; this
rule leaves POS as it is.
"""
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy


def feature_sets_by_pos(tokens: Iterable[Tuple[str, Dict[str, str]]]) -> Dict[str, List[str]]:
    """{POS: sorted FEATS strings} of the training tokens ((pos, {attr: value}) pairs; tokens
    without a POS left out). FEATS strings are UD's: ``Attr=Value|...`` sorted, "" for none."""
    sets: Dict[str, set] = {}
    for pos, feats in tokens:
        if pos:
            sets.setdefault(pos, set()).add("|".join(f"{k}={v}" for k, v in sorted(feats.items())))
    return {pos: sorted(values) for pos, values in sorted(sets.items())}


def feature_set_table(sets_by_pos: Dict[str, List[str]], labels_pos: Sequence[str],
                      heads: Sequence[Tuple[str, Sequence[str]]]) -> Dict[int, numpy.ndarray]:
    """{POS index in ``labels_pos``: (n_sets, len(heads)) value indices} for the attribute
    ``heads`` ((name, values), values starting with NONE). A set naming an attribute or value
    that the heads lack cannot be predicted and is left out."""
    index = [{value: i for i, value in enumerate(values)} for _, values in heads]
    names = {name: h for h, (name, _) in enumerate(heads)}
    table = {}
    for p, pos in enumerate(labels_pos):
        rows = []
        for feats in sets_by_pos.get(pos, []):
            row = [0] * len(heads)  # NONE
            for pair in filter(None, feats.split("|")):
                attr, value = pair.split("=", 1)
                h = names.get(attr)
                if h is None or value not in index[h]:
                    break
                row[h] = index[h][value]
            else:
                rows.append(row)
        if rows:
            table[p] = numpy.array(rows, dtype="int64")
    return table


def decode_feature_sets(head_scores: Sequence[numpy.ndarray], pos_ids: numpy.ndarray,
                        table: Dict[int, numpy.ndarray]) -> numpy.ndarray:
    """(n_tokens, n_heads) attribute value indices: for each token the feature set of its POS
    (``pos_ids``) in ``table`` whose summed log-probabilities under ``head_scores`` (one
    (n_tokens, n_values) array of logits or log-probabilities per attribute head) are highest;
    the sets of every POS where the token's POS has none. Logits need no softmax first: a set
    takes one value of every head, so each head's normalizer adds the same to every set's sum."""
    logp = [numpy.asarray(s, dtype="float64") for s in head_scores]
    every = numpy.unique(numpy.concatenate(list(table.values())), axis=0)
    out = numpy.zeros((len(pos_ids), len(logp)), dtype="int64")
    for pos in numpy.unique(pos_ids):
        tokens = numpy.flatnonzero(pos_ids == pos)
        sets = table.get(int(pos), every)
        total = sum(logp[h][numpy.ix_(tokens, sets[:, h])] for h in range(len(logp)))
        out[tokens] = sets[total.argmax(axis=1)]
    return out
