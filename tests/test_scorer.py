"""spacy_mimick.ud.scorer: the paper's metrics, checked against hand counts and spaCy's scorer."""
from typing import List, Optional

import numpy
import pytest
import spacy
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.ud.scorer import make_attribute_scorer, score_attributes, token_level_results
from spacy_mimick.ud.corpus import read_conllu

from conftest import UD

KAZAKH_DEV = UD / "UD_Kazakh-KTB" / "kk-ud-dev.conllu"


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _doc(nlp, words: List[str], pos: List[str], morphs: List[Optional[str]], spaces=None) -> Doc:
    """A Doc with POS and FEATS; a None FEATS leaves that token's MORPH unset (unannotated)."""
    doc = Doc(nlp.vocab, words=words, spaces=spaces, pos=pos)
    for token, morph in zip(doc, morphs):
        if morph is not None:
            token.set_morph(morph)
    return doc


WORDS = ["w0", "w1", "w2", "w3"]
GOLD = (["NOUN", "VERB", "DET", "ADJ"], ["Case=Nom|Number=Sing", "Tense=Past", "", "Degree=Pos"])
PRED = (["NOUN", "NOUN", "DET", "ADJ"], ["Case=Acc|Number=Sing", "Number=Plur|Tense=Past", "", ""])
# Per attribute (correct, predicted, gold), NONE never counted, a wrong value against P and R:
#   Case (0, 1, 1)   w0: Acc for Nom
#   Number (1, 2, 1) w0 right; w1 predicted where gold is NONE
#   Tense (1, 1, 1)
#   Degree (0, 0, 1) w3 not predicted
HAND = {"Case": (0, 1, 1), "Number": (1, 2, 1), "Tense": (1, 1, 1), "Degree": (0, 0, 1)}


@pytest.fixture
def examples(nlp):
    return [Example(_doc(nlp, WORDS, *PRED), _doc(nlp, WORDS, *GOLD))]


def test_hand_counted_scores(examples):
    scores = score_attributes(examples)
    assert scores["pos_acc"] == pytest.approx(3 / 4)
    assert scores["attr_micro_p"] == pytest.approx(2 / 4)
    assert scores["attr_micro_r"] == pytest.approx(2 / 4)
    assert scores["attr_micro_f"] == pytest.approx(2 / 4)
    per_attr_f = {attr: 2 * c / (p + g) for attr, (c, p, g) in HAND.items()}
    assert per_attr_f == {"Case": 0.0, "Number": pytest.approx(2 / 3), "Tense": 1.0, "Degree": 0.0}
    assert scores["attr_macro_f"] == pytest.approx(sum(per_attr_f.values()) / 4)
    assert scores["attr_per_type"]["Number"] == pytest.approx({"p": 1 / 2, "r": 1.0, "f": 2 / 3})
    assert scores["attr_per_type"]["Degree"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert scores["morph_acc"] == pytest.approx(1 / 4)  # only w2 ("" == "")
    assert scores["n_tokens"] == 4
    for key in ("oov_train_pos_acc", "oov_train_attr_micro_f", "oov_vec_morph_acc", "oov_vec_n_tokens"):
        assert scores[key] is None  # no training words / vector table given


def test_unannotated_gold_is_left_out(nlp):
    gold = _doc(nlp, ["a", "b", "c"], ["NOUN", "", "VERB"], ["Number=Sing", "Number=Sing", None])
    pred = _doc(nlp, ["a", "b", "c"], ["NOUN", "VERB", "NOUN"], ["Number=Sing", "Number=Plur", "Tense=Past"])
    scores = score_attributes([Example(pred, gold)])
    assert scores["pos_acc"] == pytest.approx(1 / 2)  # b has no gold POS
    # c has no gold MORPH: its predicted Tense counts nowhere.
    assert (scores["attr_micro_p"], scores["attr_micro_r"]) == (pytest.approx(1 / 2), pytest.approx(1 / 2))
    assert scores["morph_acc"] == pytest.approx(1 / 2)


def test_oov_subsets(examples):
    scores = score_attributes(examples, train_words={"w0", "w1"}, in_vectors={"w0", "w2"})
    # OOV for training: w2 (DET, no attributes, right) and w3 (ADJ right, Degree missed).
    assert scores["oov_train_n_tokens"] == 2
    assert scores["oov_train_pos_acc"] == 1.0
    assert (scores["oov_train_attr_micro_p"], scores["oov_train_attr_micro_r"]) == (0.0, 0.0)
    assert scores["oov_train_morph_acc"] == pytest.approx(1 / 2)
    # No vector: w1 (VERB as NOUN; Tense right, Number wrong) and w3.
    assert scores["oov_vec_n_tokens"] == 2
    assert scores["oov_vec_pos_acc"] == pytest.approx(1 / 2)
    assert scores["oov_vec_attr_micro_p"] == pytest.approx(1 / 2)  # Tense of 2 predicted
    assert scores["oov_vec_attr_micro_r"] == pytest.approx(1 / 2)  # Tense of Tense, Degree
    assert scores["oov_vec_morph_acc"] == 0.0
    by_callable = score_attributes(examples, in_vectors=lambda token: token.text in {"w0", "w2"})
    assert by_callable["oov_vec_attr_micro_f"] == scores["oov_vec_attr_micro_f"]
    empty = score_attributes(examples, train_words=set(WORDS))
    assert empty["oov_train_n_tokens"] == 0 and empty["oov_train_pos_acc"] is None


def test_agrees_with_spacy_on_gold_tokenization(nlp):
    docs = list(read_conllu(KAZAKH_DEV, nlp.vocab))
    rng = numpy.random.default_rng(0)
    examples = []
    for gold in docs:
        pred = Doc(nlp.vocab, words=[t.text for t in gold], spaces=[bool(t.whitespace_) for t in gold])
        for g, p in zip(gold, pred):  # a noisy copy of the gold analysis
            p.pos_ = g.pos_ if rng.random() < 0.8 else "X"
            feats = g.morph.to_dict()
            if feats and rng.random() < 0.3:
                feats.pop(sorted(feats)[0])
            p.set_morph("|".join(f"{k}={v}" for k, v in feats.items()) if rng.random() < 0.9 else "Case=Abl")
        examples.append(Example(pred, gold))
    morph_key = lambda token, attr: token.morph.key  # noqa: E731  (as spaCy's morphologizer)
    ours = score_attributes(examples)
    assert 0.7 < ours["pos_acc"] < 0.9
    assert ours["pos_acc"] == pytest.approx(Scorer.score_token_attr(examples, "pos")["pos_acc"])
    assert ours["morph_acc"] == pytest.approx(
        Scorer.score_token_attr(examples, "morph", getter=morph_key)["morph_acc"]
    )
    # spaCy's per-feature micro scores pool the same (token, Feature=Value) items, except that it
    # skips tokens whose gold FEATS is empty, where a predicted value is a false positive for us.
    spacy_feats = Scorer.score_token_attr_per_feat(examples, "morph", getter=morph_key)
    assert ours["attr_micro_r"] == pytest.approx(spacy_feats["morph_micro_r"])
    assert ours["attr_micro_p"] < spacy_feats["morph_micro_p"]
    # With no predictions on those tokens the two agree exactly.
    cleared = []
    for eg in examples:
        pred = eg.predicted.copy()
        for p, g in zip(pred, eg.reference):
            if not str(g.morph):
                p.set_morph("")
        cleared.append(Example(pred, eg.reference))
    ours_cleared = score_attributes(cleared)
    spacy_cleared = Scorer.score_token_attr_per_feat(cleared, "morph", getter=morph_key)
    for key in "prf":
        assert ours_cleared[f"attr_micro_{key}"] == pytest.approx(spacy_cleared[f"morph_micro_{key}"])


def test_perfect_and_empty_predictions_on_real_data(nlp):
    docs = list(read_conllu(KAZAKH_DEV, nlp.vocab))
    perfect = score_attributes([Example(doc, doc) for doc in docs])
    for key in ("pos_acc", "attr_micro_f", "attr_macro_f", "morph_acc"):
        assert perfect[key] == 1.0
    bare = [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in docs]
    scores = score_attributes(bare)
    assert scores["pos_acc"] == 0.0 and scores["attr_micro_p"] == 0.0 and scores["attr_micro_f"] == 0.0


def test_no_attributes_gives_none(nlp):
    doc = _doc(nlp, ["a", "b"], ["NOUN", "VERB"], ["", ""])
    scores = score_attributes([Example(doc, doc)])
    assert scores["pos_acc"] == 1.0 and scores["morph_acc"] == 1.0
    assert scores["attr_micro_f"] is scores["attr_macro_f"] is scores["attr_per_type"] is None


def test_misaligned_tokens_count_as_unpredicted(nlp):
    gold = _doc(nlp, ["can", "not", "go"], ["AUX", "PART", "VERB"], ["", "Polarity=Neg", "VerbForm=Inf"],
                spaces=[False, True, False])
    pred = _doc(nlp, ["cannot", "go"], ["AUX", "VERB"], ["Polarity=Neg", "VerbForm=Inf"],
                spaces=[True, False])
    scores = score_attributes([Example(pred, gold)])
    assert scores["pos_acc"] == pytest.approx(1 / 3)
    assert (scores["attr_micro_p"], scores["attr_micro_r"]) == (1.0, pytest.approx(1 / 2))
    results = token_level_results([Example(pred, gold)])
    assert results.pos_correct.tolist() == [False, False, True]


def test_registered_scorer_and_token_level_results(examples):
    scorer = spacy.registry.scorers.get("spacy_mimick.attribute_scorer.v1")()
    assert scorer is make_attribute_scorer() is score_attributes
    scores = scorer(examples, nlp=None)  # spaCy passes extra settings
    results = token_level_results(examples + examples)
    assert results.pos_correct.tolist() == [True, False, True, True] * 2
    assert results.pos_correct.mean() == scores["pos_acc"]
    assert results.attr_counts.tolist() == [[2, 4, 4], [2, 4, 4]]
