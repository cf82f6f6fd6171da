"""Training-data augmenters for the taggers (``[corpora.train] augmenter``).

``spacy_mimick.upper_case.v1`` writes a fraction of the training sentences in capitals, keeping
their annotation. Why: a few-thousand-token sample holds almost no all-capital text, while test
sets do (Sequoia's EMEA headings, "PRECAUTIONS PARTICULIERES DE CONSERVATION"; shouting in EWT's
reviews and e-mails). A tagger that reads characters, case classes and a spelling model then has
never seen a capitalised sentence that is not a list of acronyms and names, and tags its nouns
PROPN. spaCy's ``spacy.lower_case.v1`` is the same idea in the other direction; spaCy's tagger
needs no upper-case variant because it reads the lowercased NORM.
"""
import random
import unicodedata
from typing import Callable, Iterator

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example


@spacy.registry.augmenters("spacy_mimick.upper_case.v1")
def create_upper_casing_augmenter(
    level: float, strip_accents: float = 0.0
) -> Callable[[Language, Example], Iterator[Example]]:
    """Each training example is written in capitals with probability ``level`` (in [0, 1]),
    drawn with Python's ``random`` (which ``spacy train`` seeds with ``[training] seed``).
    The words are those of the reference, each ``str.upper()``-ed; every annotation (POS,
    morphology, tags, lemmas, heads, labels) is kept. Nothing else changes: each example yields
    one example, so epochs keep their number of batches.

    ``strip_accents`` (in [0, 1]): the share of the capitalised examples whose letters also lose
    their diacritics ("CHANGÉ" -> "CHANGE"), as capitals are often written in French
    ("PRECAUTIONS PARTICULIERES", Sequoia's test set)."""
    for name, value in (("level", level), ("strip_accents", strip_accents)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"spacy_mimick.upper_case.v1: {name} must be in [0, 1], got {value!r}")

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        if level > 0.0 and random.random() < level:
            strip = strip_accents > 0.0 and random.random() < strip_accents
            yield make_uppercase_variant(nlp, example, strip_accents=strip)
        else:
            yield example

    return augment


def _without_accents(text: str) -> str:
    """``text`` without combining marks: NFD, drop category Mn, NFC."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def make_uppercase_variant(nlp: Language, example: Example, *, strip_accents: bool = False) -> Example:
    """``example`` with every word of the reference in capitals (without diacritics if
    ``strip_accents``) and the same annotation; the predicted doc has the same words (gold
    tokenization), with no annotation."""
    reference = example.reference
    words = [token.text.upper() for token in reference]
    if strip_accents:
        words = [_without_accents(word) or word for word in words]
    spaces = [bool(token.whitespace_) for token in reference]
    annotation = example.to_dict()
    annotation["token_annotation"]["ORTH"] = words
    variant = Example.from_dict(Doc(nlp.vocab, words=words, spaces=spaces), annotation)
    variant.reference.user_data.update(reference.user_data)
    return variant
