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

``mimick_tagger``'s ``seen_feature_set_prior`` adds, on a word of the training data, the sets
that word had there (:class:`SeenSetPrior`): ``seen_word_prior``'s lexicon rule applied to the
feature sets, its weight chosen on dev (``spacy_mimick.choose_word_priors.v2``). Measured with
``benchmarks/feature_set_prior.py`` (docs/tagging.md). A prior on each set's frequency with its
POS, the same way, measured as noise and was not built.
"""
from collections import Counter
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy
from spacy.morphology import Morphology


def feature_sets_by_pos(tokens: Iterable[Tuple[str, Dict[str, str]]]) -> Dict[str, List[str]]:
    """{POS: sorted FEATS strings} of the training tokens ((pos, {attr: value}) pairs; tokens
    without a POS left out). FEATS strings are UD's: ``Attr=Value|...`` sorted, "" for none."""
    sets: Dict[str, set] = {}
    for pos, feats in tokens:
        if pos:
            sets.setdefault(pos, set()).add(feats_string(feats))
    return {pos: sorted(values) for pos, values in sorted(sets.items())}


def feats_string(feats: Mapping[str, str]) -> str:
    """UD's FEATS string of ``{attr: value}`` (sorted, "" for none), as the sets are kept."""
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items()))


def feature_set_counts_by_form(tokens: Iterable[Tuple[str, str, Dict[str, str]]]) -> Dict[str, Dict[str, int]]:
    """{form: {FEATS string: tokens}} over the training tokens ((form, pos, {attr: value})
    triples; tokens without a POS left out, as in :func:`feature_sets_by_pos`)."""
    counts: Dict[str, Counter] = {}
    for form, pos, feats in tokens:
        if pos:
            counts.setdefault(form, Counter())[feats_string(feats)] += 1
    return {form: dict(sorted(c.items())) for form, c in sorted(counts.items())}


def _head_index(heads: Sequence[Tuple[str, Sequence[str]]]) -> Tuple[List[Dict[str, int]], Dict[str, int]]:
    """([{value: index} per head], {attribute: head}) of the attribute ``heads``."""
    return ([{value: i for i, value in enumerate(values)} for _, values in heads],
            {name: h for h, (name, _) in enumerate(heads)})


def _set_row(feats: str, index: Sequence[Dict[str, int]], names: Dict[str, int]) -> Optional[Tuple[int, ...]]:
    """The heads' value indices of a FEATS string (NONE = 0 where it names no value), or None
    when it names an attribute or value the heads lack."""
    row = [0] * len(index)
    for pair in filter(None, feats.split("|")):
        attr, value = pair.split("=", 1)
        h = names.get(attr)
        if h is None or value not in index[h]:
            return None
        row[h] = index[h][value]
    return tuple(row)


class SeenSetPrior:
    """The feature sets each training word had, as a log prior over candidate sets: on a word
    with n annotated training tokens, c_s of them with set s, a set's score is raised by
    weight x log((c_s + q_s) / (n + 1)), q_s the set's add-one smoothed share of all the
    training tokens (one pseudo-token, as ``seen_words.seen_log_prior`` does for POS)."""

    def __init__(self, counts: Mapping[str, Mapping[str, int]], heads: Sequence[Tuple[str, Sequence[str]]]):
        index, names = _head_index(heads)
        self.by_form: Dict[str, Dict[Tuple[int, ...], int]] = {}
        self.n_form: Dict[str, int] = {}
        totals: Counter = Counter()
        n_tokens = 0
        for form, sets in counts.items():
            rows: Dict[Tuple[int, ...], int] = {}
            for feats, n in sets.items():
                n_tokens += n
                row = _set_row(feats, index, names)
                if row is not None:
                    rows[row] = rows.get(row, 0) + n
                    totals[row] += n
            self.by_form[form] = rows
            self.n_form[form] = sum(sets.values())
        denominator = n_tokens + len(totals) + 1.0
        self.share = {row: (n + 1.0) / denominator for row, n in totals.items()}
        self.unknown_share = 1.0 / denominator
        self._rows: Dict[Tuple[str, int], numpy.ndarray] = {}

    def __len__(self) -> int:
        return len(self.by_form)

    def shift(self, forms: Sequence[str], tokens: numpy.ndarray, sets: numpy.ndarray, key: int,
              weight: float) -> numpy.ndarray:
        """(len(tokens), len(sets)): what the prior at ``weight`` adds to each candidate set
        (``sets``: (n_sets, n_heads) value indices, the candidates of ``key``, a POS index or -1)
        of each token (``forms[t]``, its form as the network reads it; 0 on forms not seen)."""
        shift = numpy.zeros((len(tokens), len(sets)), dtype="float64")
        if not weight:
            return shift
        for j, t in enumerate(tokens.tolist()):
            form = forms[t]
            rows = self.by_form.get(form)
            if rows is None:
                continue
            cached = self._rows.get((form, key))
            if cached is None or len(cached) != len(sets):
                n = self.n_form[form] + 1.0
                cached = numpy.log(numpy.array(
                    [(rows.get(row, 0) + self.share.get(row, self.unknown_share)) / n
                     for row in map(tuple, sets.tolist())]))
                self._rows[(form, key)] = cached
            shift[j] = weight * cached
        return shift


def gold_set_rows(feats: Sequence[Optional[str]], heads: Sequence[Tuple[str, Sequence[str]]]) -> numpy.ndarray:
    """(len(feats), len(heads)) value indices of gold FEATS strings (spaCy's: ``_`` or "" for
    none), a row of -1 where the token has no annotation (None) or its set names an attribute
    or value the heads lack (no decoding can get it right)."""
    index, names = _head_index(heads)
    out = numpy.full((len(feats), len(heads)), -1, dtype="int64")
    for t, string in enumerate(feats):
        if string is None:
            continue
        pairs = {} if string in ("", "_") else Morphology.feats_to_dict(string)
        row = _set_row(feats_string(pairs), index, names)
        if row is not None:
            out[t] = row
    return out


def feature_set_table(sets_by_pos: Dict[str, List[str]], labels_pos: Sequence[str],
                      heads: Sequence[Tuple[str, Sequence[str]]]) -> Dict[int, numpy.ndarray]:
    """{POS index in ``labels_pos``: (n_sets, len(heads)) value indices} for the attribute
    ``heads`` ((name, values), values starting with NONE). A set naming an attribute or value
    that the heads lack cannot be predicted and is left out."""
    index, names = _head_index(heads)
    table = {}
    for p, pos in enumerate(labels_pos):
        rows = [row for row in (_set_row(feats, index, names) for feats in sets_by_pos.get(pos, []))
                if row is not None]
        if rows:
            table[p] = numpy.array(rows, dtype="int64")
    return table


def decode_feature_sets(head_scores: Sequence[numpy.ndarray], pos_ids: numpy.ndarray,
                        table: Dict[int, numpy.ndarray], prior: Optional[SeenSetPrior] = None,
                        forms: Sequence[str] = (), weight: float = 0.0) -> numpy.ndarray:
    """(n_tokens, n_heads) attribute value indices: for each token the feature set of its POS
    (``pos_ids``) in ``table`` whose summed log-probabilities under ``head_scores`` (one
    (n_tokens, n_values) array of logits or log-probabilities per attribute head) are highest;
    the sets of every POS where the token's POS has none. Logits need no softmax first: a set
    takes one value of every head, so each head's normalizer adds the same to every set's sum.
    With a ``prior`` and a ``weight``, each token's sum also gets the prior's shift for its form
    (``forms``, one per token)."""
    logp = [numpy.asarray(s, dtype="float64") for s in head_scores]
    every = numpy.unique(numpy.concatenate(list(table.values())), axis=0)
    out = numpy.zeros((len(pos_ids), len(logp)), dtype="int64")
    for pos in numpy.unique(pos_ids):
        tokens = numpy.flatnonzero(pos_ids == pos)
        key = int(pos) if int(pos) in table else -1
        sets = table.get(int(pos), every)
        total = sum(logp[h][numpy.ix_(tokens, sets[:, h])] for h in range(len(logp)))
        if prior is not None and weight:
            total = total + prior.shift(forms, tokens, sets, key, weight)
        out[tokens] = sets[total.argmax(axis=1)]
    return out
