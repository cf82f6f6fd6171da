"""The attributes decoded as one feature set seen in training with the token's POS."""
import numpy
import pytest

from spacy_mimick.tagger.feature_sets import decode_feature_sets, feature_set_table, feature_sets_by_pos

HEADS = [("Number", ["NONE", "Plur", "Sing"]), ("Tense", ["NONE", "Past", "Pres"])]


def test_feature_sets_by_pos_are_ud_strings_per_pos():
    tokens = [("NOUN", {"Number": "Sing"}), ("NOUN", {"Number": "Plur"}), ("NOUN", {"Number": "Sing"}),
              ("VERB", {"Tense": "Past"}), ("VERB", {"Tense": "Pres", "Number": "Sing"}), ("ADP", {}),
              ("", {"Number": "Sing"})]
    assert feature_sets_by_pos(tokens) == {
        "ADP": [""], "NOUN": ["Number=Plur", "Number=Sing"], "VERB": ["Number=Sing|Tense=Pres", "Tense=Past"]}


def test_table_holds_the_heads_indices_and_drops_what_the_heads_lack():
    sets = {"NOUN": ["Number=Plur", "Number=Sing"], "VERB": ["Number=Sing|Tense=Pres", "Tense=Fut"],
            "ADP": [""], "X": ["Foreign=Yes"]}
    table = feature_set_table(sets, ["ADP", "NOUN", "VERB", "X"], HEADS)
    assert table[0].tolist() == [[0, 0]]
    assert table[1].tolist() == [[1, 0], [2, 0]]
    assert table[2].tolist() == [[2, 2]]  # Tense=Fut has no output: left out
    assert 3 not in table  # X's only set names an attribute the heads lack


def test_decoding_takes_the_best_seen_set_of_each_tokens_pos():
    table = {0: numpy.array([[0, 0]]), 1: numpy.array([[1, 0], [2, 0]]), 2: numpy.array([[2, 2], [0, 1]])}
    # Token 0 (NOUN): the heads prefer Number=Plur|Tense=Past, unseen with NOUN: Number=Plur.
    # Token 1 (VERB): the heads prefer Number=Plur|Tense=Pres, unseen with VERB; of its sets
    # Number=Sing|Tense=Pres sums log 0.4 + log 0.8, Tense=Past log 0.1 + log 0.1.
    # Token 2 (a POS without sets): the best set of any POS.
    number = numpy.log(numpy.array([[0.1, 0.6, 0.3], [0.1, 0.5, 0.4], [0.3, 0.1, 0.6]]))
    tense = numpy.log(numpy.array([[0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.05, 0.05, 0.9]]))
    out = decode_feature_sets([number, tense], numpy.array([1, 2, 5]), table)
    assert out.tolist() == [[1, 0], [2, 2], [2, 2]]


def test_counts_by_form_and_the_gold_rows():
    from spacy_mimick.tagger.feature_sets import feature_set_counts_by_form, gold_set_rows

    tokens = [("cats", "NOUN", {"Number": "Plur"}), ("cat", "NOUN", {"Number": "Sing"}),
              ("cat", "VERB", {"Number": "Sing", "Tense": "Pres"}), ("cat", "NOUN", {"Number": "Sing"}),
              ("of", "ADP", {}), ("x", "", {"Number": "Sing"})]
    assert feature_set_counts_by_form(tokens) == {
        "cat": {"Number=Sing": 2, "Number=Sing|Tense=Pres": 1}, "cats": {"Number=Plur": 1}, "of": {"": 1}}
    rows = gold_set_rows(["Number=Plur", "_", "", None, "Tense=Fut", "Number=Sing|Tense=Past"], HEADS)
    assert rows.tolist() == [[1, 0], [0, 0], [0, 0], [-1, -1], [-1, -1], [2, 1]]


def test_seen_set_prior_raises_the_sets_a_training_word_had():
    """log((c_s + q_s) / (n + 1)) per candidate set on a training word, 0 on other words; at a
    high weight a word always seen with one set gets it, against the heads."""
    from spacy_mimick.tagger.feature_sets import SeenSetPrior

    counts = {"cat": {"Number=Sing": 3}, "cats": {"Number=Plur": 1}, "x": {"Foreign=Yes": 2}}
    prior = SeenSetPrior(counts, HEADS)
    assert len(prior) == 3
    # 6 tokens, 2 sets the heads can hold: q = (n_s + 1) / (6 + 2 + 1); Foreign=Yes is not one of them.
    sets = numpy.array([[1, 0], [2, 0]])
    shift = prior.shift(["cat", "dog", "cats"], numpy.array([0, 1, 2]), sets, 1, 2.0)
    q_plur, q_sing = 2 / 9, 4 / 9
    assert shift[0] == pytest.approx(2.0 * numpy.log([q_plur / 4, (3 + q_sing) / 4]))
    assert shift[1].tolist() == [0.0, 0.0]
    assert shift[2] == pytest.approx(2.0 * numpy.log([(1 + q_plur) / 2, q_sing / 2]))
    assert not prior.shift(["cat"], numpy.array([0]), sets, 1, 0.0).any()
    table = {1: sets}
    number = numpy.log(numpy.array([[0.1, 0.6, 0.3], [0.1, 0.6, 0.3]]))  # the heads say Plur for both
    tense = numpy.log(numpy.array([[0.8, 0.1, 0.1], [0.8, 0.1, 0.1]]))
    plain = decode_feature_sets([number, tense], numpy.array([1, 1]), table)
    assert plain.tolist() == [[1, 0], [1, 0]]
    with_prior = decode_feature_sets([number, tense], numpy.array([1, 1]), table, prior=prior,
                                     forms=["cat", "dog"], weight=4.0)
    assert with_prior.tolist() == [[2, 0], [1, 0]]  # "cat" was Sing three times of three; "dog" unseen
