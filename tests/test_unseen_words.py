"""The estimate of how likely each POS is on a word outside the training data."""
import math

import pytest
import spacy

from spacy_mimick.tagger.unseen_words import hapax_pos_log_prior
from spacy_mimick.ud.corpus import read_conllu

from conftest import EWT


def test_ewt_hapax_prior_favours_open_classes(shared_data):
    """On the first 9,323 EWT training tokens, nouns, verbs and proper nouns are new words
    more often than the average token; pronouns, adpositions, determiners and conjunctions
    several times less often."""
    docs = read_conllu(EWT / "en_ewt-ud-train.conllu", spacy.blank("en").vocab, limit=400)
    tokens = [(t.text, t.pos_) for doc in docs for t in doc]
    prior = hapax_pos_log_prior(tokens)
    for open_class in ("NOUN", "VERB", "PROPN"):
        assert prior[open_class] > 0.3, (open_class, prior[open_class])
    for closed in ("PRON", "ADP", "DET", "CCONJ"):
        assert prior[closed] < -1.0, (closed, prior[closed])


def test_rare_tag_is_smoothed_towards_the_average():
    # "x" occurs once (hapax), tagged SYM once: unsmoothed its share would be 1.0 (log 1/0.5).
    tokens = [("a", "DET"), ("a", "DET"), ("dog", "NOUN"), ("x", "SYM")]
    raw = math.log(1.0 / 0.5)
    assert 0 < hapax_pos_log_prior(tokens)["SYM"] < raw
    assert math.isclose(hapax_pos_log_prior(tokens, strength=1e-9)["SYM"], raw, rel_tol=1e-6)
    assert math.isfinite(hapax_pos_log_prior(tokens, strength=1e-9)["DET"])  # never a hapax
    with pytest.raises(ValueError, match="strength"):
        hapax_pos_log_prior(tokens, strength=0.0)


def test_no_hapax_no_prior():
    assert hapax_pos_log_prior([("a", "DET"), ("a", "DET"), ("", "")]) == {}
    assert hapax_pos_log_prior([]) == {}
