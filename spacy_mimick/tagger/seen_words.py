"""What the training sample says about the words it contains, and the decoding rule built on it:
``seen_word_prior``, its weight chosen on dev together with ``unseen_penalty``.

A tagger trained on a few thousand tokens is regularized hard (dropout, word dropout, label
smoothing) so that it tags new words well; on the words it has seen, it then often gives a tag
that the sample never shows on that word (the Vietnamese adposition ``ở`` tagged VERB, a seen
noun tagged PROPN). Classic taggers keep a lexicon of the tags seen with each word (a tag
dictionary; the emission model of HMM taggers). Here it is a soft prior: on a word seen in
training with n annotated tokens, c_t of them with tag t, each POS score is raised by
``seen_word_prior`` x log((c_t + p_t) / (n + 1)), p_t the sample's add-one smoothed tag
distribution (one pseudo-token; fixed before any measurement). A weight of 0 is the plain
decoding.

Measured (docs/low_resource.md, ``benchmarks/seen_word_prior.py``): on the saved 5,000-token Both
models of every treebank the prior helps at the weights chosen on dev in most runs, so the
default recipe chooses its weight on each run's dev set together with the penalty on unseen
words (``spacy_mimick.choose_word_priors.v1``; ``.v2`` also chooses ``seen_feature_set_prior``,
the same rule on the feature sets, ``feature_sets.SeenSetPrior``; ``.v3``, the default recipe's
``[training.before_to_disk]``, also ``spaced_parts_prior``, below). The two POS rules change disjoint tokens (seen,
unseen), so each weight is chosen on its own tokens; the feature sets' weight is chosen after
them, on the POS they decode.

A form written with spaces that training never saw (Vietnamese writes a word of several
syllables so: ``hàng xóm``) is built of parts that training often did see, inside other words.
``spaced_parts_prior`` is the lexicon rule for such a form: its POS scores are raised by that
weight times the mean, over its parts, of each part's log prior (:func:`seen_log_prior`) from the
tags of the training words that contain it (:func:`part_pos_counts`), as ``mimick_vectors``'
``spaced_from_parts`` gives such a form the mean of its parts' vectors. Chosen on dev after the
two POS weights (``spacy_mimick.choose_word_priors.v3``, the default recipe's); a treebank
without such forms keeps 0. Measured: docs/low_resource.md.
"""
from collections import Counter
from typing import Callable, Dict, Iterable, List, Mapping, Sequence, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .feature_sets import gold_set_rows
from .unseen_words import PENALTY_WEIGHTS, dev_pos_scores, dev_scores, penalty_vector

# The weights the default recipe chooses among on dev, the plain decoding first (it wins ties).
PRIOR_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)
# The same for the feature sets' prior (``seen_feature_set_prior``).
SET_PRIOR_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)


def pos_counts_by_form(tokens: Iterable[Tuple[str, str]]) -> Dict[str, Dict[str, int]]:
    """{form: {POS: tokens}} over ``tokens`` ((form, pos) pairs of the training data; tokens
    without a POS left out)."""
    counts: Dict[str, Counter] = {}
    for form, pos in tokens:
        if pos:
            counts.setdefault(form, Counter())[pos] += 1
    return {form: dict(sorted(c.items())) for form, c in sorted(counts.items())}


def seen_log_prior(counts: Mapping[str, Mapping[str, int]], labels: Sequence[str]) -> Tuple[Dict[str, int], numpy.ndarray]:
    """(form -> row, (n_forms, len(labels)) matrix) of log((c_t + p_t) / (n + 1)) for each form
    of ``counts`` and tag t of ``labels``; p_t is the tag's add-one smoothed share of all the
    counted tokens, so a tag never seen with the word keeps a finite, low value."""
    index = {label: i for i, label in enumerate(labels)}
    forms = {form: row for row, form in enumerate(counts)}
    table = numpy.zeros((len(forms), len(labels)), dtype="float64")
    for form, row in forms.items():
        for pos, n in counts[form].items():
            if pos in index:
                table[row, index[pos]] = n
    totals = table.sum(axis=0)
    tag_share = (totals + 1.0) / (totals.sum() + len(labels))
    log_prior = numpy.log((table + tag_share) / (table.sum(axis=1, keepdims=True) + 1.0))
    return forms, log_prior.astype("float32")


def seen_rows(forms: Mapping[str, int], texts: Sequence[str]) -> numpy.ndarray:
    """The row of each text in the matrix of :func:`seen_log_prior`, -1 for a form not in it."""
    return numpy.fromiter((forms.get(text, -1) for text in texts), dtype="int64", count=len(texts))


def seen_shift(log_prior: numpy.ndarray, rows: numpy.ndarray, weight: float) -> numpy.ndarray:
    """(len(rows), n_labels): what ``seen_word_prior = weight`` adds to each token's POS scores
    (0 on the tokens without a row)."""
    shift = numpy.zeros((len(rows), log_prior.shape[1]), dtype="float32")
    if weight:
        seen = rows >= 0
        shift[seen] = weight * log_prior[rows[seen]]
    return shift


def part_pos_counts(counts: Mapping[str, Mapping[str, int]]) -> Dict[str, Dict[str, int]]:
    """{part: {POS: tokens}}: for each space-separated part of the training forms (``counts``:
    :func:`pos_counts_by_form`'s), the POS counts of every training form that contains it (once
    per form, however often the part occurs in it)."""
    parts: Dict[str, Counter] = {}
    for form, tags in counts.items():
        for part in set(form.split(" ")):
            if part:
                parts.setdefault(part, Counter()).update(tags)
    return {part: dict(sorted(c.items())) for part, c in sorted(parts.items())}


def spaced_parts_shift(parts: Mapping[str, int], log_prior: numpy.ndarray, texts: Sequence[str],
                       unseen: numpy.ndarray, weight: float) -> numpy.ndarray:
    """(len(texts), n_labels): what ``spaced_parts_prior = weight`` adds to each token's POS
    scores: on an ``unseen`` form with a space, ``weight`` x the mean of its parts' rows of
    ``log_prior`` (``parts``: part -> row, from :func:`part_pos_counts`), over the parts that
    have one; 0 elsewhere."""
    shift = numpy.zeros((len(texts), log_prior.shape[1]), dtype="float32")
    if not weight or not len(parts):
        return shift
    for t in numpy.flatnonzero(unseen).tolist():
        if " " not in texts[t]:
            continue
        rows = [parts[part] for part in texts[t].split(" ") if part in parts]
        if rows:
            shift[t] = weight * log_prior[rows].mean(axis=0)
    return shift


def choose_weights(
    pos_scores: numpy.ndarray, gold: numpy.ndarray, unseen: numpy.ndarray, rows: numpy.ndarray,
    unseen_prior: Mapping[str, float], log_prior: numpy.ndarray, labels: Sequence[str],
    unseen_weights: Sequence[float] = PENALTY_WEIGHTS, seen_weights: Sequence[float] = PRIOR_WEIGHTS,
) -> Tuple[float, float]:
    """(unseen_penalty, seen_word_prior): of each list of weights, the one that gets most of
    ``gold`` right (label index per token, -1 for a token without one) on the tokens it
    changes (``unseen``; ``rows`` >= 0), the first listed on a tie. The tokens are disjoint, so
    the pair is also the best pair on all tokens."""
    keep = gold >= 0

    def best(weights: Sequence[float], shift_of: Callable[[float], numpy.ndarray], tokens: numpy.ndarray) -> float:
        mask = keep & tokens
        if not mask.any():
            return weights[0]
        right = [int(((pos_scores[mask] + shift_of(w)).argmax(axis=1) == gold[mask]).sum()) for w in weights]
        return weights[int(numpy.argmax(right))]

    unseen_weight = best(unseen_weights, lambda w: penalty_vector(dict(unseen_prior), labels, w), unseen) \
        if unseen_prior else 0.0
    seen = rows >= 0
    seen_weight = best(seen_weights, lambda w: seen_shift(log_prior, rows, w)[seen & keep], seen) \
        if len(log_prior) else 0.0
    return unseen_weight, seen_weight


@spacy.registry.callbacks("spacy_mimick.choose_word_priors.v1")
def make_choose_word_priors(
    corpus: Callable[[Language], Iterable[Example]],
    unseen_weights: List[float] = list(PENALTY_WEIGHTS),
    seen_weights: List[float] = list(PRIOR_WEIGHTS),
    component: str = "mimick_tagger",
) -> Callable[[Language], Language]:
    """A ``[training.before_to_disk]`` callback: before each save (model-last, and model-best
    when it is the best), tag ``corpus`` (the dev set: ``corpus = ${corpora.dev}``) once and set
    the tagger's ``unseen_penalty`` (words outside the training data) and ``seen_word_prior``
    (words in it) to the weights that get most POS right on it (the first listed on a tie).
    The components before the tagger (Mimick's vectors, frozen) run once; each save costs one
    pass of the tagger over dev."""
    _check_weights(unseen_weights=unseen_weights, seen_weights=seen_weights)
    cache: Dict[str, object] = {}

    def before_to_disk(nlp: Language) -> Language:
        dev = dev_pos_scores(nlp, component, corpus, cache)
        if dev is not None:
            _set_pos_weights(nlp.get_pipe(component), *dev, unseen_weights, seen_weights)
        return nlp

    return before_to_disk


def _check_weights(**lists: List[float]) -> None:
    for name, weights in lists.items():
        if not weights or any(w < 0 for w in weights):
            raise ValueError(f"choose_word_priors: {name} must be a non-empty list of values >= 0, got {weights!r}")


def _set_pos_weights(tagger, docs: List[Doc], gold: numpy.ndarray, scores: numpy.ndarray,
                     unseen_weights: Sequence[float], seen_weights: Sequence[float]) -> List[str]:
    """Set the tagger's two POS weights to those best on the dev tokens (``scores``: their POS
    scores first); returns the forms as the tagger reads them."""
    labels = list(tagger.cfg["labels_pos"])
    forms, log_prior = tagger.seen_log_prior()
    read = tagger.read_forms(docs)
    tagger.unseen_penalty, tagger.seen_word_prior = choose_weights(
        scores[:, :len(labels)], gold, tagger.unseen_forms(read), seen_rows(forms, read),
        tagger.cfg.get("unseen_pos_log_prior") or {}, log_prior, labels, unseen_weights, seen_weights)
    return read


@spacy.registry.callbacks("spacy_mimick.choose_word_priors.v2")
def make_choose_word_priors_v2(
    corpus: Callable[[Language], Iterable[Example]],
    unseen_weights: List[float] = list(PENALTY_WEIGHTS),
    seen_weights: List[float] = list(PRIOR_WEIGHTS),
    feature_set_weights: List[float] = list(SET_PRIOR_WEIGHTS),
    component: str = "mimick_tagger",
) -> Callable[[Language], Language]:
    """As ``spacy_mimick.choose_word_priors.v1``, and then the tagger's
    ``seen_feature_set_prior`` (the feature sets each training word had, raised on that word)
    set to the weight of ``feature_set_weights`` that gets most of dev's feature sets exactly
    right (UFeats, spaCy's ``morph_acc``), with the POS weights just chosen (the first listed
    on a tie). A tagger without ``seen_feature_sets``, without attributes or saved before the
    counts were kept keeps its weight. One pass of the tagger over dev per save, as v1."""
    _check_weights(unseen_weights=unseen_weights, seen_weights=seen_weights, feature_set_weights=feature_set_weights)

    def choose(tagger, docs: List[Doc], gold: numpy.ndarray, scores: numpy.ndarray, cache: Dict[str, object]) -> None:
        read = _set_pos_weights(tagger, docs, gold, scores, unseen_weights, seen_weights)
        _set_feature_set_prior(tagger, docs, scores, read, cache, feature_set_weights)

    return _on_dev_scores(corpus, component, choose)


@spacy.registry.callbacks("spacy_mimick.choose_word_priors.v3")
def make_choose_word_priors_v3(
    corpus: Callable[[Language], Iterable[Example]],
    unseen_weights: List[float] = list(PENALTY_WEIGHTS),
    seen_weights: List[float] = list(PRIOR_WEIGHTS),
    parts_weights: List[float] = list(PRIOR_WEIGHTS),
    feature_set_weights: List[float] = list(SET_PRIOR_WEIGHTS),
    component: str = "mimick_tagger",
) -> Callable[[Language], Language]:
    """As ``spacy_mimick.choose_word_priors.v2``, with the tagger's ``spaced_parts_prior`` (on
    an unseen form written with spaces, the tags of the training words that contain its parts
    raised) set between the POS weights and the feature sets' one: the weight of
    ``parts_weights`` that gets most POS right on dev's unseen forms with a space, decoded with
    the POS weights just chosen (the first listed on a tie; a dev set without such forms keeps
    the first). One pass of the tagger over dev per save, as v1."""
    _check_weights(unseen_weights=unseen_weights, seen_weights=seen_weights, parts_weights=parts_weights,
                   feature_set_weights=feature_set_weights)

    def choose(tagger, docs: List[Doc], gold: numpy.ndarray, scores: numpy.ndarray, cache: Dict[str, object]) -> None:
        read = _set_pos_weights(tagger, docs, gold, scores, unseen_weights, seen_weights)
        _set_parts_prior(tagger, docs, gold, scores, read, parts_weights)
        _set_feature_set_prior(tagger, docs, scores, read, cache, feature_set_weights)

    return _on_dev_scores(corpus, component, choose)


def _on_dev_scores(corpus: Callable[[Language], Iterable[Example]], component: str,
                   choose: Callable[..., None]) -> Callable[[Language], Language]:
    """A ``[training.before_to_disk]`` callback that tags ``corpus`` once per save and hands the
    tagger, the Docs, their gold POS and every head's scores (``dev_scores``) and its cache to
    ``choose``, which sets the decoding weights."""
    cache: Dict[str, object] = {}

    def before_to_disk(nlp: Language) -> Language:
        dev = dev_scores(nlp, component, corpus, cache)
        if dev is not None:
            choose(nlp.get_pipe(component), *dev, cache)
        return nlp

    return before_to_disk


def _set_parts_prior(tagger, docs: List[Doc], gold: numpy.ndarray, scores: numpy.ndarray, read: List[str],
                     parts_weights: Sequence[float]) -> None:
    """Set the tagger's ``spaced_parts_prior`` to the weight best on dev's unseen forms with a
    space (POS decoded as the tagger decodes them now, the other weights included)."""
    tokens = tagger.unseen_forms(read) & numpy.array([" " in form for form in read], dtype=bool) & (gold >= 0)
    if not tokens.any():
        tagger.spaced_parts_prior = parts_weights[0]
        return
    right = []
    for weight in parts_weights:
        tagger.spaced_parts_prior = weight
        pos = tagger.decode(scores.copy(), docs, read)[:, 0]
        right.append(int((pos[tokens] == gold[tokens]).sum()))
    tagger.spaced_parts_prior = parts_weights[int(numpy.argmax(right))]


def _set_feature_set_prior(tagger, docs: List[Doc], scores: numpy.ndarray, read: List[str],
                           cache: Dict[str, object], feature_set_weights: Sequence[float]) -> None:
    """Set the tagger's ``seen_feature_set_prior`` to the weight that gets most of dev's feature
    sets exactly right, with the POS weights set now; a tagger without ``seen_feature_sets``,
    without attributes or saved before the counts were kept keeps its weight."""
    heads = tagger._heads
    if not (tagger.seen_feature_sets and len(heads) > 1 and len(tagger.seen_set_prior())):
        return
    # The gold sets as value indices, again when the dev tokens (a new vocab) or the heads change.
    made_for = cache.get("set_rows_for")
    if made_for is None or made_for[0] is not cache["feats"] or made_for[1] != heads:
        cache.update(set_rows_for=(cache["feats"], heads), set_rows=gold_set_rows(cache["feats"], heads[1:]))
    gold_sets = cache["set_rows"]
    keep = (gold_sets >= 0).all(axis=1)
    right = []
    for weight in feature_set_weights:
        tagger.seen_feature_set_prior = weight
        ids = tagger.decode(scores.copy(), docs, read)
        right.append(int(((ids[:, 1:] == gold_sets).all(axis=1) & keep).sum()))
    tagger.seen_feature_set_prior = feature_set_weights[int(numpy.argmax(right))]
