"""The paper's tagging metrics (Pinter et al. 2017, section 5.2) as a spaCy scorer.

* ``pos_acc``: UPOS accuracy.
* Morphosyntactic attributes (FEATS; POS is not one of them): every token has, for every
  attribute, a value or NONE. A predicted value is correct iff it equals the gold value.
  precision = correct / predicted non-NONE, recall = correct / gold non-NONE. ``attr_micro_*``
  pools the counts over attributes; ``attr_macro_f`` is the mean of the per-attribute F1 over
  the attributes that occur (gold or predicted) in the scored examples; ``attr_per_type`` gives
  ``{attr: {"p", "r", "f"}}``. A multi-valued feature (``PronType=Int,Rel``) is one value.
* ``morph_acc``: spaCy's whole-FEATS-string accuracy (``Scorer.score_token_attr``).
* ``oov_train_*`` / ``oov_vec_*``: POS accuracy, attribute micro-P/R/F and morph accuracy
  restricted to tokens whose form is not among the training words / that have no pretrained
  vector, with ``*_n_tokens``.
* :func:`score_dependencies` (pipelines with a parser): ``dep_uas`` / ``dep_las``, the share of
  gold words with an annotated head whose predicted head (UAS) and also label (LAS) are right,
  over every word, punctuation included (as the CoNLL 2018 shared task; spaCy's own
  ``Scorer.score_deps`` leaves punctuation out), labels compared in full (``nsubj:pass`` is not
  ``nsubj``), UD's ``root`` and spaCy's ``ROOT`` the same; and the same on ``oov_train`` /
  ``oov_vec`` tokens.

Scores are fractions in [0, 1]; None where nothing was scored (a language without attributes,
an empty or undefined OOV subset). Tokens are paired through ``Example.alignment``; with gold
tokenization that is 1:1. A gold token without a 1:1 predicted partner is scored as unpredicted
(wrong POS, no predicted attributes), as in spaCy's scorer, whose gold set still holds it.
Gold tokens with unset POS (or unset MORPH) are left out of the POS (attribute) counts.
"""
from dataclasses import dataclass
from typing import Any, Callable, Collection, Dict, Iterable, List, Optional, Set, Union

import numpy
import spacy
from spacy.scorer import Scorer
from spacy.tokens import Token
from spacy.training import Example

InVectors = Union[Callable[[Token], bool], Collection[str]]


@dataclass
class _TokenRecord:
    sentence: int
    gold_pos: int  # 0: unannotated
    pred_pos: int  # 0: no 1:1 predicted token, or unset
    gold_morph: int  # MorphAnalysis key; 0: unannotated
    pred_morph: int
    gold_feats: Dict[str, str]
    pred_feats: Dict[str, str]
    oov_train: bool
    oov_vec: bool
    gold_head: int = -1  # the gold head's index; -1: no annotated head (not scored for UAS/LAS)
    pred_head: int = -1  # the predicted head, as a gold index; -1: none, or no 1:1 gold partner
    gold_dep: str = ""
    pred_dep: str = ""
    form: str = ""

    @property
    def uas_correct(self) -> bool:
        return self.pred_head == self.gold_head

    @property
    def las_correct(self) -> bool:
        return self.uas_correct and self.pred_dep.lower() == self.gold_dep.lower()


@dataclass
class TokenLevelResults:
    """Per-token and per-sentence outcomes, for paired significance tests.

    pos_correct: bool, one entry per gold token with a POS annotation, in corpus order.
    attr_counts: int (n_sentences, 3), the columns are correct, predicted and gold non-NONE
    attribute values of each sentence (summing them gives the micro counts).
    """

    pos_correct: numpy.ndarray
    attr_counts: numpy.ndarray


@dataclass
class TokenOutcomes:
    """Every gold token's outcome on each metric, for paired tests on any subset of tokens.

    forms: the gold words; sentence: each token's sentence index. ``scored[m]`` says whether
    metric ``m`` (``pos``, ``morph``: whole FEATS, ``uas``, ``las``) scores the token (gold
    annotation present), ``correct[m]`` whether the prediction is right (False where not
    scored). All arrays hold one entry per gold token, in corpus order.
    """

    forms: List[str]
    sentence: numpy.ndarray
    scored: Dict[str, numpy.ndarray]
    correct: Dict[str, numpy.ndarray]


def _collect(
    examples: Iterable[Example], train_words: Optional[Set[str]], in_vectors: Optional[InVectors]
) -> List[_TokenRecord]:
    if in_vectors is not None and not callable(in_vectors):
        vector_words = in_vectors
        in_vectors = lambda token: token.text in vector_words  # noqa: E731
    records = []
    for sentence, example in enumerate(examples):
        align = example.alignment
        pred_doc = example.predicted
        for gold in example.reference:
            partners = align.y2x[gold.i]
            pred = pred_doc[int(partners[0])] if len(partners) == 1 else None
            if pred is not None and align.x2y.lengths[pred.i] != 1:
                pred = None
            pred_head = -1
            if pred is not None and pred.dep:
                head_partners = align.x2y[pred.head.i]
                if len(head_partners) == 1 and align.y2x.lengths[int(head_partners[0])] == 1:
                    pred_head = int(head_partners[0])
            records.append(
                _TokenRecord(
                    sentence=sentence,
                    gold_pos=gold.pos,
                    pred_pos=pred.pos if pred is not None else 0,
                    gold_morph=gold.morph.key,
                    pred_morph=pred.morph.key if pred is not None else 0,
                    gold_feats=gold.morph.to_dict(),
                    pred_feats=pred.morph.to_dict() if pred is not None else {},
                    oov_train=train_words is not None and gold.text not in train_words,
                    oov_vec=in_vectors is not None and not in_vectors(pred if pred is not None else gold),
                    gold_head=gold.head.i if gold.dep else -1,
                    pred_head=pred_head,
                    gold_dep=gold.dep_,
                    pred_dep=pred.dep_ if pred is not None else "",
                    form=gold.text,
                )
            )
    return records


def _attr_counts(record: _TokenRecord) -> Dict[str, List[int]]:
    """{attribute: [correct, predicted, gold]} for one token (NONE never counts)."""
    counts: Dict[str, List[int]] = {}
    for attr, value in record.pred_feats.items():
        counts[attr] = [int(record.gold_feats.get(attr) == value), 1, 0]
    for attr in record.gold_feats:
        counts.setdefault(attr, [0, 0, 0])[2] = 1
    return counts


def _attr_totals(records: Iterable[_TokenRecord]) -> Dict[str, List[int]]:
    """{attribute: [correct, predicted, gold]} summed over ``records``."""
    per_attr: Dict[str, List[int]] = {}
    for record in records:
        for attr, counts in _attr_counts(record).items():
            totals = per_attr.setdefault(attr, [0, 0, 0])
            for i, c in enumerate(counts):
                totals[i] += c
    return per_attr


def _f1(correct: int, predicted: int, gold: int) -> float:
    # 2PR / (P + R) simplifies to this, and is 0 (not undefined) when nothing is correct.
    return 2 * correct / (predicted + gold) if predicted + gold else 0.0


def _prf(correct: int, predicted: int, gold: int) -> Dict[str, float]:
    return {
        "p": correct / predicted if predicted else 0.0,
        "r": correct / gold if gold else 0.0,
        "f": _f1(correct, predicted, gold),
    }


def _mean(outcomes: Iterable[bool]) -> Optional[float]:
    outcomes = list(outcomes)
    return sum(outcomes) / len(outcomes) if outcomes else None


def _score_records(records: List[_TokenRecord]) -> Dict[str, Any]:
    """pos_acc, attribute micro/macro/per-type scores and morph_acc over ``records``."""
    pos_scored = [r for r in records if r.gold_pos]
    morph_scored = [r for r in records if r.gold_morph]
    per_attr = _attr_totals(morph_scored)
    micro = [sum(t[i] for t in per_attr.values()) for i in range(3)]
    micro_prf = _prf(*micro) if per_attr else {"p": None, "r": None, "f": None}
    return {
        "pos_acc": _mean(r.pred_pos == r.gold_pos for r in pos_scored),
        "attr_micro_p": micro_prf["p"],
        "attr_micro_r": micro_prf["r"],
        "attr_micro_f": micro_prf["f"],
        "attr_macro_f": sum(_f1(*t) for t in per_attr.values()) / len(per_attr) if per_attr else None,
        "attr_per_type": {attr: _prf(*t) for attr, t in sorted(per_attr.items())} if per_attr else None,
        "morph_acc": _mean(r.pred_morph == r.gold_morph for r in morph_scored),
        "n_tokens": len(records),
    }


def score_attributes(
    examples: Iterable[Example],
    *,
    train_words: Optional[Set[str]] = None,
    in_vectors: Optional[InVectors] = None,
    **cfg: Any,
) -> Dict[str, Any]:
    """Score POS and morphosyntactic attributes as in the paper (see the module docstring).

    train_words: the word forms of the tagger's training data (exact, case-sensitive match on
        the gold form); ``oov_train_*`` scores tokens outside it. None: those keys are None.
    in_vectors: whether a token has a pretrained vector, as a callable on the token (the
        predicted one, or the gold one where there is no 1:1 predicted token) or as a set of
        word forms; ``oov_vec_*`` scores tokens without one. None: those keys are None.
    cfg: ignored; spaCy passes its scorer settings (e.g. ``nlp``) to every scorer.
    """
    examples = list(examples)
    records = _collect(examples, train_words, in_vectors)
    scores = _score_records(records)
    # spaCy's own definition of morph_acc (its F-score of aligned (token, FEATS) pairs), which
    # is the accuracy above when tokenization is gold.
    scores["morph_acc"] = Scorer.score_token_attr(examples, "morph", getter=lambda t, attr: t.morph.key)[
        "morph_acc"
    ]
    for name, given, selected in (
        ("oov_train", train_words is not None, [r for r in records if r.oov_train]),
        ("oov_vec", in_vectors is not None, [r for r in records if r.oov_vec]),
    ):
        subset = _score_records(selected) if given and selected else {}
        for key in ("pos_acc", "attr_micro_p", "attr_micro_r", "attr_micro_f", "morph_acc"):
            scores[f"{name}_{key}"] = subset.get(key)
        scores[f"{name}_n_tokens"] = len(selected) if given else None
    return scores


def attribute_counts(
    examples: Iterable[Example], *, train_words: Optional[Set[str]] = None
) -> Dict[str, Dict[str, List[int]]]:
    """``{"all": {attr: [correct, predicted, gold]}, "oov_train": {...}}``: the counts behind
    ``attr_per_type``, over all scored tokens and over those whose form is not in
    ``train_words`` (empty without it). F1 of an attribute: ``2 correct / (predicted + gold)``;
    its errors (a wrong, missing or extra value): ``predicted + gold - 2 correct``."""
    scored = [r for r in _collect(examples, train_words, None) if r.gold_morph]
    return {"all": _attr_totals(scored), "oov_train": _attr_totals(r for r in scored if r.oov_train)}


def _dep_scores(records: List[_TokenRecord]) -> Dict[str, Optional[float]]:
    scored = [r for r in records if r.gold_head >= 0]
    return {"dep_uas": _mean(r.uas_correct for r in scored), "dep_las": _mean(r.las_correct for r in scored),
            "dep_n_tokens": len(scored)}


def score_dependencies(
    examples: Iterable[Example],
    *,
    train_words: Optional[Set[str]] = None,
    in_vectors: Optional[InVectors] = None,
) -> Dict[str, Any]:
    """UAS and LAS (see the module docstring) overall and on the ``oov_train`` / ``oov_vec``
    tokens (same definitions as :func:`score_attributes`): ``dep_uas``, ``dep_las``,
    ``dep_n_tokens`` (words with a gold head), ``oov_train_dep_uas``, ... None where nothing
    was scored. Sentences without gold heads are left out."""
    records = _collect(list(examples), train_words, in_vectors)
    scores: Dict[str, Any] = _dep_scores(records)
    for name, given in (("oov_train", train_words is not None), ("oov_vec", in_vectors is not None)):
        subset = _dep_scores([r for r in records if getattr(r, name)]) if given else {}
        for key in ("dep_uas", "dep_las", "dep_n_tokens"):
            scores[f"{name}_{key}"] = subset.get(key)
    return scores


@spacy.registry.scorers("spacy_mimick.attribute_scorer.v1")
def make_attribute_scorer() -> Callable[..., Dict[str, Any]]:
    """The registered scorer: ``scorer(examples, **kwargs)`` -> :func:`score_attributes`."""
    return score_attributes


def token_level_results(examples: Iterable[Example]) -> TokenLevelResults:
    """Outcomes per token (POS) and per sentence (attribute counts), for significance tests."""
    examples = list(examples)
    records = _collect(examples, None, None)
    attr_counts = numpy.zeros((len(examples), 3), dtype=numpy.int64)
    for record in records:
        if record.gold_morph:
            for counts in _attr_counts(record).values():
                attr_counts[record.sentence] += counts
    pos_correct = numpy.array([r.pred_pos == r.gold_pos for r in records if r.gold_pos], dtype=bool)
    return TokenLevelResults(pos_correct=pos_correct, attr_counts=attr_counts)


def token_outcomes(examples: Iterable[Example]) -> TokenOutcomes:
    """Per-token outcomes of POS, whole-FEATS morph, UAS and LAS (:class:`TokenOutcomes`)."""
    records = _collect(list(examples), None, None)
    scored = {
        "pos": numpy.array([bool(r.gold_pos) for r in records], dtype=bool),
        "morph": numpy.array([bool(r.gold_morph) for r in records], dtype=bool),
        "uas": numpy.array([r.gold_head >= 0 for r in records], dtype=bool),
    }
    scored["las"] = scored["uas"]
    correct = {
        "pos": numpy.array([bool(r.gold_pos) and r.pred_pos == r.gold_pos for r in records], dtype=bool),
        "morph": numpy.array([bool(r.gold_morph) and r.pred_morph == r.gold_morph for r in records], dtype=bool),
        "uas": numpy.array([r.gold_head >= 0 and r.uas_correct for r in records], dtype=bool),
        "las": numpy.array([r.gold_head >= 0 and r.las_correct for r in records], dtype=bool),
    }
    sentence = numpy.array([r.sentence for r in records], dtype=numpy.int64)
    return TokenOutcomes(forms=[r.form for r in records], sentence=sentence, scored=scored, correct=correct)
