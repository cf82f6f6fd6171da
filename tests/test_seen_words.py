"""The training words' POS prior: counts per form, the smoothed log prior, and the choice of
both decoding weights on dev."""
import math

import numpy
import pytest
import spacy

from spacy_mimick.tagger.seen_words import (
    choose_weights, part_pos_counts, pos_counts_by_form, seen_log_prior, seen_rows, seen_shift, spaced_parts_shift,
)
from spacy_mimick.ud.corpus import read_conllu

from conftest import EWT


def test_counts_per_form_leave_out_tokens_without_a_pos():
    counts = pos_counts_by_form([("that", "SCONJ"), ("that", "PRON"), ("that", "SCONJ"), ("x", ""), ("dog", "NOUN")])
    assert counts == {"dog": {"NOUN": 1}, "that": {"PRON": 1, "SCONJ": 2}}


def test_log_prior_is_the_smoothed_share_of_each_tag_on_the_word():
    counts = {"that": {"SCONJ": 2, "PRON": 1}, "dog": {"NOUN": 3}}
    labels = ["NOUN", "PRON", "SCONJ", "SYM"]
    forms, log_prior = seen_log_prior(counts, labels)
    # tag shares: add-one over the 6 counted tokens and 4 labels: NOUN 4/10, PRON 2/10, SCONJ 3/10, SYM 1/10
    that = log_prior[forms["that"]]
    assert that[2] == pytest.approx(math.log((2 + 0.3) / 4))
    assert that[1] == pytest.approx(math.log((1 + 0.2) / 4))
    assert that[0] == pytest.approx(math.log(0.4 / 4))  # never seen with the word: low, finite
    assert that[3] == pytest.approx(math.log(0.1 / 4))  # a label the data never had: finite
    assert numpy.isfinite(log_prior).all()
    assert list(seen_rows(forms, ["dog", "cat", "that"])) == [forms["dog"], -1, forms["that"]]
    shift = seen_shift(log_prior, seen_rows(forms, ["dog", "cat"]), 2.0)
    assert shift[0] == pytest.approx(2.0 * log_prior[forms["dog"]]) and not shift[1].any()
    assert not seen_shift(log_prior, seen_rows(forms, ["dog"]), 0.0).any()


def test_ewt_prior_keeps_each_word_s_tags(shared_data):
    """On 400 EWT training sentences the prior ranks, for frequent ambiguous words, the tags the
    word had above those it never had."""
    docs = list(read_conllu(EWT / "en_ewt-ud-train.conllu", spacy.blank("en").vocab, limit=400))
    counts = pos_counts_by_form((t.text, t.pos_) for doc in docs for t in doc)
    labels = sorted({t.pos_ for doc in docs for t in doc if t.pos_})
    forms, log_prior = seen_log_prior(counts, labels)
    for word in ("that", "to", "the"):
        row = log_prior[forms[word]]
        had = [labels.index(tag) for tag in counts[word]]
        never = [i for i in range(len(labels)) if labels[i] not in counts[word]]
        assert row[had].min() > row[never].max(), word


def test_each_weight_is_chosen_on_the_tokens_it_changes():
    labels = ["NOUN", "VERB"]
    # Token 0 seen (counts say VERB), token 1 unseen; the scores say NOUN for both.
    scores = numpy.array([[1.0, 0.0], [1.0, 0.0]], dtype="float32")
    forms, log_prior = seen_log_prior({"run": {"VERB": 5}}, labels)
    rows = numpy.array([forms["run"], -1])
    unseen = numpy.array([False, True])
    prior = {"NOUN": -2.0, "VERB": 0.5}  # NOUN rare on new words
    gold = numpy.array([1, 1])  # VERB both times
    assert choose_weights(scores, gold, unseen, rows, prior, log_prior, labels, [0.0, 1.0], [0.0, 4.0]) == (1.0, 4.0)
    gold = numpy.array([0, 0])  # NOUN both times: the plain decoding wins both
    assert choose_weights(scores, gold, unseen, rows, prior, log_prior, labels, [0.0, 1.0], [0.0, 4.0]) == (0.0, 0.0)
    gold = numpy.array([-1, -1])  # nothing annotated: the first weights
    assert choose_weights(scores, gold, unseen, rows, prior, log_prior, labels, [0.0, 1.0], [0.0, 4.0]) == (0.0, 0.0)


def test_parts_keep_the_tags_of_the_training_words_that_contain_them():
    """Each space-separated part gets the POS counts of every training form it is in (once per
    form), so ``hàng`` counts the NOUN of ``hàng`` and of ``hàng xóm``."""
    counts = {"hàng": {"NOUN": 3}, "hàng xóm": {"NOUN": 2}, "xóm": {"NOUN": 1}, "đi": {"VERB": 4}, "đi đi": {"VERB": 1}}
    assert part_pos_counts(counts) == {"hàng": {"NOUN": 5}, "xóm": {"NOUN": 3}, "đi": {"VERB": 5}}


def test_spaced_parts_shift_touches_only_unseen_forms_with_spaces():
    labels = ["NOUN", "VERB"]
    parts, log_prior = seen_log_prior(part_pos_counts({"hàng xóm": {"NOUN": 4}, "đi": {"VERB": 4}}), labels)
    texts = ["hàng đi", "hàng xóm", "xóm", "lạ quá", "đi lạ"]
    unseen = numpy.array([True, False, True, True, True])
    shift = spaced_parts_shift(parts, log_prior, texts, unseen, 2.0)
    # The mean of the two parts' rows, times the weight.
    assert shift[0] == pytest.approx(2.0 * (log_prior[parts["hàng"]] + log_prior[parts["đi"]]) / 2)
    assert not shift[1].any()  # seen
    assert not shift[2].any()  # no space: not a spaced form
    assert not shift[3].any()  # no part seen in training
    assert shift[4] == pytest.approx(2.0 * log_prior[parts["đi"]])  # the parts that have a row
    assert shift[4][1] > shift[4][0]  # VERB raised over NOUN
    assert not spaced_parts_shift(parts, log_prior, texts, unseen, 0.0).any()
