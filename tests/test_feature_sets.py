"""The attributes decoded as one feature set seen in training with the token's POS."""
import numpy

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
