"""How likely each POS is on a word the tagger has not seen, estimated from its training data,
and the decoding rule built on it: ``unseen_penalty``, its weight chosen on dev.

A tagger trained on a sample learns every tag from words it has seen; on a new word it has only
the spelling, Mimick's vector and the context. Which tags fall on new words differs by language:
in Vietnamese a new word is almost never a pronoun or an adposition, in Basque inflected pronouns
and determiners are new words all the time. The classic estimate of P(new word | tag) is the
share of the tag's training tokens whose form occurs once (hapax legomena: they would have been
new had they been left out; Baayen & Sproat 1996, the unknown-word model of HMM taggers).

Measured (docs/low_resource.md, ``benchmarks/unseen_word_rules.py``): lowering, on unseen words,
the tags rarer than average on new words helps Vietnamese and costs English at the same weight,
so the weight is chosen on each run's dev set, 0 (off) when nothing gains: by the default
recipe's ``[training.before_to_disk]``, ``spacy_mimick.choose_word_priors.v2`` (seen_words.py),
together with the prior on seen words; ``spacy_mimick.choose_unseen_penalty.v1`` chooses this
weight alone, for the configs that name it.
"""
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .tagger_model import through_components_before

# The weights the default recipe chooses among on dev, the plain decoding first (it wins ties).
PENALTY_WEIGHTS = (0.0, 1.0, 2.0, 4.0)


def hapax_pos_log_prior(tokens: Iterable[Tuple[str, str]], strength: float = 5.0) -> Dict[str, float]:
    """log(P(new | tag) / P(new)) for each POS of ``tokens`` ((form, pos) pairs of the training
    data, unannotated tokens left out), P(new | tag) being the tag's share of hapax tokens,
    smoothed towards the overall share with ``strength`` pseudo-tokens (a tag seen on a handful
    of tokens stays near 0; > 0, so that a tag never seen on a hapax gets a finite value). Empty
    when no form occurs once (nothing to estimate from)."""
    if not strength > 0:
        raise ValueError(f"hapax_pos_log_prior: strength must be > 0, got {strength!r}")
    tokens = [(form, pos) for form, pos in tokens if pos]
    form_counts = Counter(form for form, _ in tokens)
    n_tag: Counter = Counter()
    hapax_tag: Counter = Counter()
    for form, pos in tokens:
        n_tag[pos] += 1
        hapax_tag[pos] += form_counts[form] == 1
    total = sum(n_tag.values())
    overall = sum(hapax_tag.values()) / total if total else 0.0
    if not overall:
        return {}
    return {
        pos: float(numpy.log((hapax_tag[pos] + strength * overall) / (n + strength) / overall))
        for pos, n in sorted(n_tag.items())
    }


def penalty_vector(prior: Dict[str, float], labels: Sequence[str], weight: float) -> numpy.ndarray:
    """What ``unseen_penalty = weight`` adds to an unseen word's POS scores (columns in the order
    of ``labels``): ``weight`` x the log prior of the tags below average, 0 for the others."""
    return (weight * numpy.minimum([prior.get(label, 0.0) for label in labels], 0.0)).astype("float32")


def decode_pos(pos_scores: numpy.ndarray, unseen: numpy.ndarray, shift: numpy.ndarray) -> numpy.ndarray:
    """The POS column of each row of ``pos_scores``, ``shift`` added to the ``unseen`` rows."""
    return numpy.where(unseen[:, None], pos_scores + shift, pos_scores).argmax(axis=1)


def choose_weight(
    pos_scores: numpy.ndarray, gold: numpy.ndarray, unseen: numpy.ndarray, prior: Dict[str, float],
    labels: Sequence[str], weights: Sequence[float] = PENALTY_WEIGHTS,
) -> Tuple[float, List[float]]:
    """The weight whose decoding of ``pos_scores`` ((n_tokens, len(labels))) gets most of
    ``gold`` (label index per token, -1 for a token without one) right, the first listed on a
    tie; and each weight's accuracy."""
    keep = gold >= 0
    accuracies = []
    for weight in weights:
        decoded = decode_pos(pos_scores, unseen, penalty_vector(prior, labels, weight))
        accuracies.append(float((decoded == gold)[keep].mean()) if keep.any() else 0.0)
    return weights[int(numpy.argmax(accuracies))], accuracies


@spacy.registry.callbacks("spacy_mimick.choose_unseen_penalty.v1")
def make_choose_unseen_penalty(
    corpus: Callable[[Language], Iterable[Example]],
    weights: List[float] = list(PENALTY_WEIGHTS),
    component: str = "mimick_tagger",
) -> Callable[[Language], Language]:
    """A ``[training.before_to_disk]`` callback: before each save (model-last, and model-best
    when it is the best), tag ``corpus`` (the dev set: ``corpus = ${corpora.dev}``) once and set
    the tagger's ``unseen_penalty`` to the weight that gets most POS right on it (the first of
    ``weights`` on a tie). The components before the tagger (Mimick's vectors, frozen) run once;
    each save costs one pass of the tagger over dev."""
    if not weights or any(w < 0 for w in weights):
        raise ValueError(f"choose_unseen_penalty: weights must be a non-empty list of values >= 0, got {weights!r}")
    cache: Dict[str, object] = {}

    def before_to_disk(nlp: Language) -> Language:
        tagger = nlp.get_pipe(component)
        prior = tagger.cfg.get("unseen_pos_log_prior") or {}
        if not prior:
            return nlp
        labels = list(tagger.cfg["labels_pos"])
        dev = dev_pos_scores(nlp, component, corpus, cache)
        if dev is not None:
            docs, gold, scores = dev
            tagger.unseen_penalty, _ = choose_weight(scores, gold, tagger.unseen_tokens(docs), prior, labels, weights)
        return nlp

    return before_to_disk


def dev_pos_scores(
    nlp: Language, component: str, corpus: Callable[[Language], Iterable[Example]], cache: Dict[str, object],
) -> Optional[Tuple[List[Doc], numpy.ndarray, numpy.ndarray]]:
    """For the dev-choice callbacks: the corpus's Docs, through the components before the tagger
    (once per vocab, kept in ``cache``), the gold POS label index of each token (-1 where it has
    none or the tagger lacks it), and the tagger's POS scores now; None for an empty corpus."""
    dev = dev_scores(nlp, component, corpus, cache)
    if dev is None:
        return None
    docs, gold, scores = dev
    return docs, gold, scores[:, :len(nlp.get_pipe(component).cfg["labels_pos"])]


def dev_scores(
    nlp: Language, component: str, corpus: Callable[[Language], Iterable[Example]], cache: Dict[str, object],
) -> Optional[Tuple[List[Doc], numpy.ndarray, numpy.ndarray]]:
    """As :func:`dev_pos_scores`, with every head's scores (the tagger's ``scores``); the cache
    also keeps each token's gold FEATS string (``cache["feats"]``, None where the token has
    no annotation)."""
    tagger = nlp.get_pipe(component)
    labels = list(tagger.cfg["labels_pos"])
    if cache.get("vocab") is not nlp.vocab:
        examples = list(corpus(nlp))
        docs = through_components_before(nlp, component, [eg.predicted for eg in examples])
        index = {label: i for i, label in enumerate(labels)}
        pos_feats = [(pos, feats) for eg in examples
                     for pos, feats in zip(eg.get_aligned("POS", as_string=True), eg.get_aligned("MORPH", as_string=True))]
        gold = [index.get(pos, -1) if pos else -1 for pos, _ in pos_feats]
        feats = [feats if pos else None for pos, feats in pos_feats]
        cache.update(vocab=nlp.vocab, docs=docs, gold=numpy.array(gold), feats=feats)
    docs = cache["docs"]
    scores = [s for start in range(0, len(docs), 256) for s in tagger.scores(docs[start:start + 256])]
    if not scores:
        return None
    return docs, cache["gold"], numpy.concatenate(scores)
