"""benchmarks/typo_tagging.py: the seeded misspelling of a test set, and scoring on it."""
import importlib.util
from pathlib import Path

import spacy

from conftest import EWT
from spacy_mimick.ud.corpus import read_conllu

spec = importlib.util.spec_from_file_location(
    "typo_tagging", Path(__file__).resolve().parents[1] / "benchmarks" / "typo_tagging.py")
typo_tagging = importlib.util.module_from_spec(spec)
spec.loader.exec_module(typo_tagging)


def gold_docs(n=40):
    vocab = spacy.blank("en").vocab
    return list(read_conllu(EWT / "en_ewt-ud-dev.conllu", vocab, limit=n))


def test_rate_zero_changes_nothing_and_one_changes_every_eligible_word():
    gold = gold_docs()
    same, masks = typo_tagging.corrupt(gold, 0.0, seed=0)
    assert [t.text for d in same for t in d] == [t.text for d in gold for t in d]
    assert not any(m.any() for m in masks)
    every, masks = typo_tagging.corrupt(gold, 1.0, seed=0)
    for doc, new, mask in zip(gold, every, masks):
        for token, changed, hit in zip(doc, new, mask):
            eligible = len(token.text) >= 3 and token.text.isalpha()
            assert hit == eligible and (changed.text != token.text) == eligible
            assert changed.pos_ == token.pos_ and str(changed.morph) == str(token.morph)


def test_the_same_seed_gives_the_same_typos_and_another_seed_others():
    gold = gold_docs()
    a = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=1)[0] for t in d]
    b = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=1)[0] for t in d]
    c = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=2)[0] for t in d]
    assert a == b and a != c


def test_misspelled_only_scores_exactly_the_misspelled_tokens():
    from spacy.training import Example

    gold = gold_docs(10)
    corrupted, masks = typo_tagging.corrupt(gold, 0.5, seed=0)
    # A "system" that copies gold POS except on misspelled tokens, where it says X.
    examples = []
    for doc, mask in zip(corrupted, masks):
        pred = spacy.tokens.Doc(doc.vocab, words=[t.text for t in doc],
                                pos=["X" if hit else (t.pos_ or None) for t, hit in zip(doc, mask)])
        examples.append(Example(pred, doc))
    subset = typo_tagging.misspelled_only(examples, masks)
    assert len(subset) == sum(int(m.sum()) for m in masks) > 0
    scores = typo_tagging.score_attributes(subset)
    real_x = sum(1 for d, m in zip(corrupted, masks) for t, hit in zip(d, m) if hit and t.pos_ == "X")
    assert scores["pos_acc"] == real_x / len(subset)
