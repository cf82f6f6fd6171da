"""Misspelled words: a seeded share of a sentence's words given one typo each.

``misspell`` is the one rule for which words get a typo and how (alphabetic words of at least 3
characters, one edit of the Mimick trainer's ``make_typo``: swap two neighbours, drop a letter,
insert or substitute a neighbouring key). ``benchmarks/typo_tagging.py`` tests taggers on text
misspelled this way; ``spacy_mimick.typo_augmenter.v1`` and ``.v2`` train them on it: every training
sentence is read with a ``rate`` share of its words misspelled, drawn anew each epoch, the
annotations kept (the POS and features of ``goverment`` are those of ``government``).
``spacy_mimick.fixed_typos.v1`` gives a sentence the same typos at every read, for a dev set
that scores checkpoints on misspelled text.
"""
import random
from typing import Callable, Iterator, List, Sequence, Tuple

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..vectors.mimick_trainer import make_typo


def misspell(words: Sequence[str], rate: float, rng: random.Random) -> Tuple[List[str], List[bool]]:
    """(words, which were misspelled): each alphabetic word of 3+ characters is misspelled with
    probability ``rate`` (re-drawn until the typo differs from the word, at most 20 times)."""
    out, mask = [], []
    for word in words:
        hit = len(word) >= 3 and word.isalpha() and rng.random() < rate
        if hit:
            for _ in range(20):
                typo = make_typo(word, rng)
                if typo != word:
                    word = typo
                    break
            else:
                hit = False
        out.append(word)
        mask.append(hit)
    return out, mask


@spacy.registry.augmenters("spacy_mimick.typo_augmenter.v1")
def create_typo_augmenter(rate: float, seed: int = 0) -> Callable[[Language, Example], Iterator[Example]]:
    """Training examples with a ``rate`` share of their words misspelled (``misspell``), new
    typos each time an example is read; the reference keeps every annotation. Set it on the
    training corpus (``spacy_mimick.ConllCorpus.v2``'s ``augmenter``), never on dev."""
    if not 0 <= rate <= 1:
        raise ValueError(f"typo_augmenter: rate is a share of the words in [0, 1], got {rate}")
    rng = random.Random(seed)

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        yield from _misspelled_example(nlp, example, rate, rng)

    return augment


def _misspelled_example(nlp: Language, example: Example, rate: float,
                        rng: random.Random) -> Iterator[Example]:
    """``example`` with its words misspelled by ``misspell`` (itself where no word got a typo)."""
    reference = example.reference
    words, mask = misspell([t.text for t in reference], rate, rng)
    if not any(mask):
        yield example
        return
    annotations = example.to_dict()
    annotations["token_annotation"]["ORTH"] = words
    predicted = Doc(nlp.vocab, words=words, spaces=[bool(t.whitespace_) for t in reference])
    yield Example.from_dict(predicted, annotations)


@spacy.registry.augmenters("spacy_mimick.typo_augmenter.v2")
def create_typo_augmenter_v2(rate: float, seed: int = 0,
                             keep_original: bool = True) -> Callable[[Language, Example], Iterator[Example]]:
    """``spacy_mimick.typo_augmenter.v1`` that can also keep each sentence as it is: with
    ``keep_original`` every training sentence is read clean and, where a word got a typo, once more
    misspelled, so the tagger sees all of its clean training text each epoch."""
    misspelled = create_typo_augmenter(rate, seed)

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        yield from _keeping_original(example, misspelled(nlp, example), keep_original)

    return augment


def _keeping_original(example: Example, augmented: Iterator[Example], keep_original: bool) -> Iterator[Example]:
    """``augmented``, each new example preceded by ``example`` itself where ``keep_original``."""
    for new in augmented:
        if keep_original and new is not example:
            yield example
        yield new


@spacy.registry.augmenters("spacy_mimick.fixed_typos.v1")
def create_fixed_typos(rate: float, seed: int = 0,
                       keep_original: bool = True) -> Callable[[Language, Example], Iterator[Example]]:
    """``spacy_mimick.typo_augmenter.v2`` with the same typos at every read: each sentence's
    draws are seeded by ``seed`` and its words, so every evaluation scores the same misspelled
    text, in any order. Meant for a dev corpus that chooses checkpoints for misspelled text
    (clean and misspelled with ``keep_original``), where the training corpus's new typos each
    epoch would make the scores of two checkpoints incomparable."""
    if not 0 <= rate <= 1:
        raise ValueError(f"fixed_typos: rate is a share of the words in [0, 1], got {rate}")

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        rng = random.Random(f"{seed}\t" + " ".join(t.text for t in example.reference))
        yield from _keeping_original(example, _misspelled_example(nlp, example, rate, rng), keep_original)

    return augment
