"""Spelling features of words: character ids (Mimick) and character n-gram ids (BoS-style).

Both vocabularies are learned from the training words and stored with the model, so a trained
model needs nothing from the original vectors file. Characters and n-grams that were rare in
training map to a real, trained UNK row (the original release gave unseen characters untrained
random rows, see NOTES.md).
"""
import unicodedata
from collections import Counter
from itertools import chain
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy

PAD, UNK, BOW, EOW = 0, 1, 2, 3
SPECIALS = ["<pad>", "<unk>", "<w>", "</w>"]


def normalize_word(word: str, form: Optional[str] = "NFC") -> str:
    """NFC-normalise a word so that composed and decomposed spellings share characters.

    ``form=None`` only validates the word (converted release models read characters as the
    original did, see ``CharVocab``).
    """
    if not isinstance(word, str):
        raise TypeError(f"expected a word as str, got {type(word).__name__}: {word!r}")
    if word == "":
        raise ValueError("cannot embed the empty string: a word needs at least one character")
    return unicodedata.normalize(form, word) if form else word


# Ways a CharVocab may map a character it has no row for to a similar known one before UNK
# (see CharVocab.similar_char).
UNSEEN_RULES = ("swapcase", "nfkd_base")


def nfkd_base(char: str) -> str:
    """The character without its accents and compatibility decoration ("é" -> "e",
    "ｅ" -> "e"); may be empty (a lone combining mark) or longer than one character ("ﬁ")."""
    return "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))


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
    """Character -> id, with PAD, UNK and word-boundary symbols.

    normalize: the Unicode form words are brought to before lookup ("NFC", the default of
        every trained model), or None to read characters as they come. Converted release
        models (``original_release``) use None: the original did not normalise, and its
        alphabets hold characters that NFC changes (Hindi's precomposed nukta letters, which
        NFC decomposes; Hebrew's ohm sign).
    unseen: rules tried in order for a character with no row before it falls back to UNK
        (``UNSEEN_RULES``): "swapcase" (the other case, if it is one character with a row),
        "nfkd_base" (the character without accents/compatibility decoration, then that
        base's other case). Empty (the default) for trained models, whose UNK row is
        trained on rare characters.
    """

    def __init__(self, chars: Sequence[str], normalize: Optional[str] = "NFC",
                 unseen: Sequence[str] = ()):
        unknown = [rule for rule in unseen if rule not in UNSEEN_RULES]
        if unknown:
            raise ValueError(f"unknown unseen-character rules {unknown}: expected some of {UNSEEN_RULES}")
        if normalize not in (None, "NFC", "NFD", "NFKC", "NFKD"):
            raise ValueError(f"normalize must be None or a Unicode form (NFC, NFD, NFKC, NFKD), got {normalize!r}")
        self.chars = list(chars)
        self.normalize = normalize
        self.unseen = tuple(unseen)
        self.index: Dict[str, int] = {c: i + len(SPECIALS) for i, c in enumerate(self.chars)}

    def similar_char(self, char: str) -> int:
        """The id of ``char``'s stand-in under the ``unseen`` rules, else UNK."""
        get = self.index.get
        for rule in self.unseen:
            if rule == "swapcase":
                candidates = [char.swapcase()]
            else:  # nfkd_base
                base = nfkd_base(char)
                candidates = [base, base.swapcase()]
            for cand in candidates:
                if len(cand) == 1 and cand in self.index:
                    return get(cand)
        return UNK

    @classmethod
    def build(cls, words: Iterable[str], min_count: int = 1) -> "CharVocab":
        """Characters occurring in at least ``min_count`` words; the rest train the UNK row."""
        # Each word's distinct characters, counted in one C-level pass.
        counts = Counter(chain.from_iterable(map(set, map(normalize_word, words))))
        kept = sorted(c for c, n in counts.items() if n >= min_count)
        return cls(kept)

    def __len__(self) -> int:
        return len(self.chars) + len(SPECIALS)

    def encode(self, word: str, max_chars: int) -> List[int]:
        word = clip_word(normalize_word(word, self.normalize), max_chars)
        get = self.index.get
        if self.unseen:
            return [BOW] + [get(c) or self.similar_char(c) for c in word] + [EOW]
        return [BOW] + [get(c, UNK) for c in word] + [EOW]

    def char_id(self, char: str) -> int:
        """The id ``encode`` gives the character ``char``."""
        found = self.index.get(char)
        if found is not None:
            return found
        return self.similar_char(char) if self.unseen else UNK

    def to_json(self) -> Dict:
        data: Dict = {"chars": self.chars}
        # Written only when not the default, so existing models' files stay as they were.
        if self.normalize != "NFC":
            data["normalize"] = self.normalize
        if self.unseen:
            data["unseen"] = list(self.unseen)
        return data

    @classmethod
    def from_json(cls, data: Dict) -> "CharVocab":
        return cls(data["chars"], normalize=data.get("normalize", "NFC"), unseen=data.get("unseen", ()))


# From this many words on, ``encode_chars`` maps characters to ids with numpy (once per distinct
# character) instead of one dict lookup per character; below it the per-word loop is faster.
_ARRAY_ENCODE_MIN_WORDS = 32


def encode_chars(
    vocab: CharVocab, words: Sequence[str], max_chars: int
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Padded char-id matrix (n_words, longest) and lengths, boundary symbols included: row i is
    ``vocab.encode(words[i], max_chars)`` followed by PAD."""
    if len(words) < _ARRAY_ENCODE_MIN_WORDS:
        seqs = [vocab.encode(w, max_chars) for w in words]
        lengths = numpy.fromiter((len(s) for s in seqs), dtype="int64", count=len(seqs))
        ids = numpy.zeros((len(seqs), int(lengths.max()) if len(seqs) else 0), dtype="int64")
        for i, seq in enumerate(seqs):
            ids[i, : len(seq)] = seq
        return ids, lengths
    form = vocab.normalize
    clipped = [clip_word(normalize_word(w, form), max_chars) for w in words]
    chars = numpy.fromiter(map(len, clipped), dtype="int64", count=len(clipped))
    ids = numpy.zeros((len(clipped), int(chars.max()) + 2), dtype="int64")
    # One code point per character (a str's characters are code points; lone surrogates too).
    codes = numpy.frombuffer("".join(clipped).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    present = numpy.flatnonzero(numpy.bincount(codes))
    table = numpy.zeros(int(present[-1]) + 1, dtype="int64")
    table[present] = [vocab.char_id(chr(c)) for c in present.tolist()]
    # Row-major boolean indexing fills each row's first chars[i] cells in order.
    ids[:, 1:-1][numpy.arange(ids.shape[1] - 2) < chars[:, None]] = table[codes]
    ids[:, 0] = BOW
    ids[numpy.arange(len(clipped)), chars + 1] = EOW
    return ids, chars + 2


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
