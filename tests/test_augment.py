"""spacy_mimick.upper_case.v1 and the reader that applies augmenters (ConllCorpus.v2), on
Sequoia's dev file."""
import random

import pytest
import spacy

from spacy_mimick.tagger.augment import create_upper_casing_augmenter
from spacy_mimick.ud.corpus import create_conllu_corpus_reader, create_conllu_corpus_reader_v2

from conftest import REPO, UD

SEQUOIA_DEV = UD / "UD_French-Sequoia" / "fr_sequoia-ud-dev.conllu"


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("fr")


def _annotation(doc):
    return [(t.pos_, str(t.morph), t.lemma_, t.tag_, t.dep_, t.head.i, bool(t.whitespace_), t.is_sent_start)
            for t in doc]


def test_upper_case_keeps_every_annotation(nlp):
    reader = create_conllu_corpus_reader_v2(SEQUOIA_DEV, limit=50, augmenter=create_upper_casing_augmenter(1.0))
    plain = list(create_conllu_corpus_reader(SEQUOIA_DEV, limit=50)(nlp))
    upper = list(reader(nlp))
    assert len(upper) == len(plain) == 50
    changed = 0
    for before, after in zip(plain, upper):
        words = [t.text.upper() for t in before.reference]
        assert [t.text for t in after.reference] == words
        assert [t.text for t in after.predicted] == words  # gold tokenization, no retokenizing
        assert after.predicted.text == before.reference.text.upper()
        assert _annotation(after.reference) == _annotation(before.reference)
        assert not after.predicted.has_annotation("POS")
        changed += after.reference.text != before.reference.text
    assert changed == 50
    assert any("É" in eg.reference.text for eg in upper)  # accents are kept: "CHANGÉ"


def test_upper_case_level_is_the_share_of_examples(nlp):
    random.seed(0)
    examples = list(create_conllu_corpus_reader(SEQUOIA_DEV)(nlp))
    augment = create_upper_casing_augmenter(0.25)
    out = [list(augment(nlp, eg)) for eg in examples]
    assert all(len(o) == 1 for o in out)  # one example in, one out: epochs keep their batches
    share = sum(o[0] is not eg for o, eg in zip(out, examples)) / len(examples)
    assert 0.2 < share < 0.3, share
    off = create_upper_casing_augmenter(0.0)
    assert all(next(iter(off(nlp, eg))) is eg for eg in examples[:20])


@pytest.mark.parametrize("level", [-0.1, 1.5])
def test_upper_case_level_outside_0_1_is_an_error(level):
    with pytest.raises(ValueError, match=r"level must be in \[0, 1\]"):
        create_upper_casing_augmenter(level)


def test_reader_v2_without_augmenter_reads_as_v1(nlp):
    v1 = list(create_conllu_corpus_reader(SEQUOIA_DEV, n_tokens=2000, seed=3)(nlp))
    v2 = list(create_conllu_corpus_reader_v2(SEQUOIA_DEV, n_tokens=2000, seed=3)(nlp))
    assert len(v2) == len(v1)
    for a, b in zip(v1, v2):
        assert a.reference.text == b.reference.text
        assert _annotation(a.reference) == _annotation(b.reference)


def test_augmenter_from_a_config_and_spacy_train_overrides(nlp):
    """As `spacy train CONFIG --corpora.train.@readers spacy_mimick.ConllCorpus.v2
    --corpora.train.augmenter '{"@augmenters": "spacy_mimick.upper_case.v1", "level": 0.1}'`
    sets it (a dotted `--corpora.train.augmenter.@augmenters` cannot add the section)."""
    from spacy.util import load_config

    config = load_config(REPO / "configs" / "tagger_both_lowres.cfg",
                         overrides={"paths.train": str(SEQUOIA_DEV), "paths.dev": str(SEQUOIA_DEV),
                                    "corpora.train.@readers": "spacy_mimick.ConllCorpus.v2",
                                    "corpora.train.limit": 20,
                                    "corpora.train.augmenter": {"@augmenters": "spacy_mimick.upper_case.v1",
                                                                "level": 1.0}},
                         interpolate=True)
    reader = spacy.registry.resolve({"train": config["corpora"]["train"]})["train"]
    examples = list(reader(nlp))
    assert len(examples) == 20
    assert all(eg.reference.text == eg.reference.text.upper() for eg in examples)


def test_upper_case_can_strip_accents(nlp):
    reader = create_conllu_corpus_reader_v2(
        SEQUOIA_DEV, limit=100, augmenter=create_upper_casing_augmenter(1.0, strip_accents=1.0))
    plain = list(create_conllu_corpus_reader(SEQUOIA_DEV, limit=100)(nlp))
    upper = list(reader(nlp))
    texts = " ".join(eg.reference.text for eg in upper)
    assert "CHANGE" in texts and not any(c in texts for c in "ÉÈÊÀÇÔ")
    for before, after in zip(plain, upper):
        assert len(after.reference) == len(before.reference)
        assert _annotation(after.reference) == _annotation(before.reference)
    with pytest.raises(ValueError, match=r"strip_accents must be in \[0, 1\]"):
        create_upper_casing_augmenter(0.5, strip_accents=2.0)
