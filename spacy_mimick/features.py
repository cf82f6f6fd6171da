"""Spelling features of words: character ids (Mimick) and character n-gram ids (BoS-style).

Both vocabularies are learned from the training words and stored with the model, so a trained
model needs nothing from the original vectors file. Characters and n-grams that were rare in
training map to a real, trained UNK row (the original release gave unseen characters untrained
random rows, see NOTES.md).
"""
import unicodedata
from collections import Counter
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy

PAD, UNK, BOW, EOW = 0, 1, 2, 3
SPECIALS = ["<pad>", "<unk>", "<w>", "</w>"]


def normalize_word(word: str) -> str:
    """NFC-normalise a word so that composed and decomposed spellings share characters."""
    if not isinstance(word, str):
        raise TypeError(f"expected a word as str, got {type(word).__name__}: {word!r}")
    if word == "":
        raise ValueError("cannot embed the empty string: a word needs at least one character")
    return unicodedata.normalize("NFC", word)


def clip_word(word: str, max_chars: int) -> str:
    """Keep a huge word's first and last max_chars/2 characters.

    The BiLSTM's forward state ends on the suffix and its backward state on the prefix, so the two
    ends carry the information the model uses; the middle of a 10,000-character "word" only costs
    time. The clipping is deterministic, so a word always gets the same vector.
    """
    if len(word) <= max_chars:
        return word
    half = max_chars // 2
    return word[:half] + word[len(word) - (max_chars - half):]


class CharVocab:
    """Character -> id, with PAD, UNK and word-boundary symbols."""

    def __init__(self, chars: Sequence[str]):
        self.chars = list(chars)
        self.index: Dict[str, int] = {c: i + len(SPECIALS) for i, c in enumerate(self.chars)}

    @classmethod
    def build(cls, words: Iterable[str], min_count: int = 1) -> "CharVocab":
        """Characters occurring in at least ``min_count`` words; the rest train the UNK row."""
        counts: Counter = Counter()
        for word in words:
            counts.update(set(normalize_word(word)))
        kept = sorted(c for c, n in counts.items() if n >= min_count)
        return cls(kept)

    def __len__(self) -> int:
        return len(self.chars) + len(SPECIALS)

    def encode(self, word: str, max_chars: int) -> List[int]:
        word = clip_word(normalize_word(word), max_chars)
        get = self.index.get
        return [BOW] + [get(c, UNK) for c in word] + [EOW]

    def to_json(self) -> Dict:
        return {"chars": self.chars}

    @classmethod
    def from_json(cls, data: Dict) -> "CharVocab":
        return cls(data["chars"])


def encode_chars(
    vocab: CharVocab, words: Sequence[str], max_chars: int
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Padded char-id matrix (n_words, longest) and lengths, boundary symbols included."""
    seqs = [vocab.encode(w, max_chars) for w in words]
    lengths = numpy.fromiter((len(s) for s in seqs), dtype="int64", count=len(seqs))
    ids = numpy.zeros((len(seqs), int(lengths.max()) if len(seqs) else 0), dtype="int64")
    for i, seq in enumerate(seqs):
        ids[i, : len(seq)] = seq
    return ids, lengths


def word_ngrams(word: str, n_min: int, n_max: int, max_chars: int) -> List[str]:
    """Character n-grams of ``<word>`` (with boundary marks), as in BoS and fastText.

    The whole bounded word is left out: it would let the model memorise in-vocabulary words
    instead of learning from their parts, and it never exists for an OOV word.
    """
    marked = "<" + clip_word(normalize_word(word), max_chars) + ">"
    grams = []
    for n in range(n_min, n_max + 1):
        for i in range(0, len(marked) - n + 1):
            gram = marked[i : i + n]
            if gram != marked:
                grams.append(gram)
    return grams


class NgramVocab:
    """Character n-gram -> id; id 0 is the UNK n-gram (rare or unseen n-grams)."""

    def __init__(self, ngrams: Sequence[str], n_min: int, n_max: int):
        self.ngrams = list(ngrams)
        self.n_min, self.n_max = n_min, n_max
        self.index: Dict[str, int] = {g: i + 1 for i, g in enumerate(self.ngrams)}

    @classmethod
    def build(
        cls, words: Iterable[str], n_min: int, n_max: int, max_chars: int,
        min_count: int = 1, max_size: int = 0,
    ) -> "NgramVocab":
        counts: Counter = Counter()
        for word in words:
            counts.update(set(word_ngrams(word, n_min, n_max, max_chars)))
        kept = [g for g, n in counts.most_common(max_size or None) if n >= min_count]
        return cls(sorted(kept), n_min, n_max)

    def __len__(self) -> int:
        return len(self.ngrams) + 1

    def encode(self, word: str, max_chars: int) -> List[int]:
        get = self.index.get
        ids = [get(g, 0) for g in word_ngrams(word, self.n_min, self.n_max, max_chars)]
        known = [i for i in ids if i]
        # A word whose n-grams are all unknown still gets the (trained) UNK n-gram.
        return known or [0]

    def to_json(self) -> Dict:
        return {"ngrams": self.ngrams, "n_min": self.n_min, "n_max": self.n_max}

    @classmethod
    def from_json(cls, data: Dict) -> "NgramVocab":
        return cls(data["ngrams"], data["n_min"], data["n_max"])


def encode_ngrams(
    vocab: NgramVocab, words: Sequence[str], max_chars: int
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Flat n-gram ids and per-word offsets, the input format of ``torch.nn.EmbeddingBag``."""
    seqs = [vocab.encode(w, max_chars) for w in words]
    lengths = numpy.fromiter((len(s) for s in seqs), dtype="int64", count=len(seqs))
    offsets = numpy.zeros(len(seqs), dtype="int64")
    if len(seqs) > 1:
        offsets[1:] = numpy.cumsum(lengths[:-1])
    flat = numpy.fromiter((i for s in seqs for i in s), dtype="int64", count=int(lengths.sum()))
    return flat, offsets
