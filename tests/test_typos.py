"""Misspelled words (spacy_mimick.ud.typos): the rule, and the training augmenter."""
import random

import pytest
import spacy

from conftest import EWT
from spacy_mimick.ud.corpus import create_conllu_corpus_reader_v2
from spacy_mimick.ud.typos import misspell
from spacy_mimick.vectors.spelling import one_edit


def test_misspell_edits_only_eligible_words_once():
    words = ["The", "government", "said", "it", "42", "co-op", "crossing", "."] * 50
    out, mask = misspell(words, 0.5, random.Random(0))
    assert len(out) == len(words) and any(mask) and not all(mask)
    for word, new, hit in zip(words, out, mask):
        if hit:
            assert one_edit(word, new), (word, new)
        else:
            assert new == word
    assert not any(h for w, h in zip(words, mask) if len(w) < 3 or not w.isalpha())
    assert misspell(words, 0.0, random.Random(0)) == (words, [False] * len(words))


def test_typo_augmenter_keeps_annotations_and_draws_new_typos():
    nlp = spacy.blank("en")
    augmenter = spacy.registry.augmenters.get("spacy_mimick.typo_augmenter.v1")(rate=0.3, seed=1)
    plain = list(create_conllu_corpus_reader_v2(EWT / "en_ewt-ud-dev.conllu", limit=60)(nlp))
    reader = create_conllu_corpus_reader_v2(EWT / "en_ewt-ud-dev.conllu", limit=60, augmenter=augmenter)
    first, second = list(reader(nlp)), list(reader(nlp))
    assert len(first) == len(second) == len(plain)
    changed = eligible = 0
    for before, after in zip(plain, first):
        ref, new = before.reference, after.reference
        assert [t.text for t in after.predicted] == [t.text for t in new]
        assert len(ref) == len(new)
        assert [t.pos_ for t in ref] == [t.pos_ for t in new]
        assert [str(t.morph) for t in ref] == [str(t.morph) for t in new]
        assert [t.head.i for t in ref] == [t.head.i for t in new] and [t.dep_ for t in ref] == [t.dep_ for t in new]
        for a, b in zip(ref, new):
            eligible += len(a.text) >= 3 and a.text.isalpha()
            if a.text != b.text:
                changed += 1
                assert one_edit(a.text, b.text)
    assert 0.2 < changed / eligible < 0.4
    # every epoch reads new typos
    assert [t.text for e in first for t in e.reference] != [t.text for e in second for t in e.reference]
    with pytest.raises(ValueError, match="rate"):
        spacy.registry.augmenters.get("spacy_mimick.typo_augmenter.v1")(rate=1.5)


def test_typo_augmenter_v2_keeps_the_clean_sentence_beside_the_misspelled_one():
    nlp = spacy.blank("en")
    plain = list(create_conllu_corpus_reader_v2(EWT / "en_ewt-ud-dev.conllu", limit=40)(nlp))
    augmenter = spacy.registry.augmenters.get("spacy_mimick.typo_augmenter.v2")(rate=0.3, seed=1)
    out = list(create_conllu_corpus_reader_v2(EWT / "en_ewt-ud-dev.conllu", limit=40, augmenter=augmenter)(nlp))
    texts = [[t.text for t in e.reference] for e in out]
    clean = [[t.text for t in e.reference] for e in plain]
    # every clean sentence is read, in order, each misspelled copy right after its original
    assert [t for t in texts if t in clean] == clean
    copies = [t for t in texts if t not in clean]
    assert copies and len(texts) == len(clean) + len(copies)
    for i, words in enumerate(texts):
        if words not in clean:
            assert texts[i - 1] in clean and len(texts[i - 1]) == len(words)
    off = spacy.registry.augmenters.get("spacy_mimick.typo_augmenter.v2")(rate=0.3, seed=1, keep_original=False)
    alone = list(create_conllu_corpus_reader_v2(EWT / "en_ewt-ud-dev.conllu", limit=40, augmenter=off)(nlp))
    assert len(alone) == len(plain)
