"""Spelling backoff: the table words one edit away from a word the table lacks.

``SpellingIndex`` finds, for a query string, the indexed words at Damerau-Levenshtein distance 1
(one deletion, insertion, substitution or transposition of two neighbours), SymSpell-style: every
indexed word is stored with each of its one-letter deletions, and a query looks up itself and its
own one-letter deletions. Two strings are within one edit only if one equals the other or one of
its deletions, or they share a deletion; each candidate is then checked with ``one_edit``.

Memory is bounded by the table: the index keeps the 64-bit hashes of the (word, deletion) strings
in one sorted numpy array beside the entry each belongs to (12 bytes a string: 8.8 MiB for the
100k words of GloVe 6B and their deletions, built in about 1.5 s), plus the list of indexed
words; a query hashes ``len(query) + 1`` strings and bisects. Hashes are Python's own (salted per
process), so the index is rebuilt, never saved; a hash collision only adds a candidate that
``one_edit`` then rejects.

Only alphabetic words are indexed and queried, queries of at least ``min_length`` characters (4)
and table words of at least one less: a number, a code or a three-letter abbreviation one edit
from a table word is not taken for a typo of it.

``SpellingBackoff`` is what the lookup does with the candidates (``MimickVectors`` with
``spelling_backoff``, and ``python -m spacy_mimick neighbors``/``predict`` with
``--spelling-backoff``): it picks the most frequent candidate (the lowest table row; tables are in
frequency order) and blends its vector with Mimick's prediction for the misspelling, half and half
by default (``weight`` 1: the candidate's vector); a candidate whose vector points away from the
prediction (cosine below ``min_cosine``, 0) is not taken. Measured on GloVe (docs/oov_vectors.md,
"Spelling backoff"): picking instead the candidate nearest to Mimick's prediction (``choice =
"cosine"``) recovers fewer misspellings, and weight 0.5 keeps the recovery of weight 1 while
costing legitimate rare words less.

``CharLM`` is the gate that tells a misspelling from a real word the table lacks: a character
n-gram model (interpolated Witten-Bell, order 5) of the table's own words. One random edit
breaks the character sequences that words of the language are made of, so a misspelling's mean
log-probability per character falls well below that of the table word it is one edit from
(``corssing`` against ``crossing``); a real rare word one edit from a table word
(``detestable``, ``detectable``) scores about as well as that word. The backoff takes a candidate
only when the word scores at least ``typo_margin`` nats per character below it. Measured
(docs/oov_vectors.md, "The typo gate"): this keeps nearly all the typo recovery and gives back
most of the Rare Word points that ungated corrections of real rare words cost;
``typo_margin=None`` takes every candidate (the lookup before the gate).
"""
from array import array
from collections import Counter
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy

# Defaults of the lookup (MimickVectors, the component, the CLI): docs/oov_vectors.md, "Spelling
# backoff", measures them.
DEFAULT_MIN_LENGTH = 4
DEFAULT_WEIGHT = 0.5
DEFAULT_MIN_COSINE = 0.0
DEFAULT_CHOICE = "frequent"
# The typo gate (``CharLM``): its order, and the margin in nats per character by which a word
# must score below its candidate, chosen on a development split (benchmarks/spelling_gate.py).
LM_ORDER = 5
LM_MAX_WORDS = 200_000
DEFAULT_TYPO_MARGIN = 0.45


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one edit: a deletion, an insertion, a
    substitution, or a transposition of two neighbouring characters."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la < lb:  # one insertion into a at i
        return a[i:] == b[i + 1:]
    if a[i + 1:] == b[i + 1:]:  # one substitution at i
        return True
    return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]


def _variants(word: str) -> List[str]:
    """``word`` and its distinct one-letter deletions."""
    return list(dict.fromkeys([word] + [word[:i] + word[i + 1:] for i in range(len(word))]))


def indexable(word: Optional[str], min_length: int) -> bool:
    return word is not None and len(word) >= min_length and word.isalpha()


class SpellingIndex:
    """The words of a table by their one-letter deletions (see the module docstring).

    entries: ``(word, row)`` pairs: the string and the table row it names (several words may share
    a row; a word given twice keeps its first row). Words that are not alphabetic or shorter
    than ``min_length - 1`` (a deletion of a query of ``min_length``) are left out.
    """

    def __init__(self, entries: Iterable[Tuple[str, int]], min_length: int = DEFAULT_MIN_LENGTH):
        self.min_length = min_length
        words: List[str] = []
        rows: List[int] = []
        seen = set()
        hashes = array("q")
        owners = array("i")
        for word, row in entries:
            if word in seen or not indexable(word, max(1, min_length - 1)):
                continue
            seen.add(word)
            entry = len(words)
            words.append(word)
            rows.append(int(row))
            variants = _variants(word)
            hashes.extend(map(hash, variants))
            owners.extend([entry] * len(variants))
        hashes_a = numpy.frombuffer(hashes, dtype="int64") if len(hashes) else numpy.zeros((0,), "int64")
        order = numpy.argsort(hashes_a, kind="stable")
        self._hashes = hashes_a[order]
        self._owners = (numpy.frombuffer(owners, dtype="int32") if len(owners) else numpy.zeros((0,), "int32"))[order]
        self.words = words
        self.rows = numpy.asarray(rows, dtype="int64")

    def __len__(self) -> int:
        return len(self.words)

    @property
    def nbytes(self) -> int:
        """Bytes of the index's arrays (the words themselves are the table's strings)."""
        return int(self._hashes.nbytes + self._owners.nbytes + self.rows.nbytes)

    def candidates(self, query: str) -> List[Tuple[str, int]]:
        """The indexed ``(word, row)`` pairs one edit from ``query``, most frequent (lowest
        row) first; none for a query that is not alphabetic or shorter than ``min_length``."""
        if not indexable(query, self.min_length) or not len(self._hashes):
            return []
        keys = numpy.asarray([hash(v) for v in _variants(query)], dtype="int64")
        lo = numpy.searchsorted(self._hashes, keys, side="left")
        hi = numpy.searchsorted(self._hashes, keys, side="right")
        found = set()
        for a, b in zip(lo.tolist(), hi.tolist()):
            found.update(self._owners[a:b].tolist())
        out = [(self.words[e], int(self.rows[e])) for e in found if one_edit(query, self.words[e])]
        return sorted(out, key=lambda pair: (pair[1], pair[0]))


_BOW, _EOW = "\x02", "\x03"  # word boundaries of CharLM (control characters: never in a word)


def _lookup(keys: numpy.ndarray, sorted_keys: numpy.ndarray, values: numpy.ndarray) -> numpy.ndarray:
    """values[i] where sorted_keys[i] == key, 0 for keys not there."""
    at = numpy.minimum(numpy.searchsorted(sorted_keys, keys), max(0, len(sorted_keys) - 1))
    found = sorted_keys[at] == keys if len(sorted_keys) else numpy.zeros(keys.shape, bool)
    return numpy.where(found, values[at] if len(values) else 0, 0)


class CharLM:
    """A character n-gram model of a table's words (the typo gate; see the module docstring).

    Interpolated Witten-Bell over orders 1..``order``, add-one unigrams, each word padded with
    ``order - 1`` start marks and one end mark, every word counted once (the model is of the
    words' spelling, not of their frequency in text). Counts are kept as sorted 64-bit hashes
    of the n-grams and of their contexts, as ``SpellingIndex`` keeps its strings: about 24
    bytes an n-gram, rebuilt per process (Python's hashes are salted), never saved.
    """

    def __init__(self, words: Iterable[str], order: int = LM_ORDER):
        if order < 1:
            raise ValueError(f"CharLM: order is at least 1, got {order}")
        self.order = order
        pad = _BOW * (order - 1)
        padded = [pad + word + _EOW for word in words]
        self.grams: List[Tuple[numpy.ndarray, numpy.ndarray]] = []  # per length: (hashes, counts)
        self.contexts: List[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]] = []  # (hashes, counts, types)
        for k in range(order):  # n-grams of k + 1 characters, contexts of k
            counts = Counter(s[i - k:i + 1] for s in padded for i in range(order - 1, len(s)))
            hashes = numpy.fromiter(map(hash, counts), dtype="int64", count=len(counts))
            of_gram = numpy.fromiter((hash(g[:-1]) for g in counts), dtype="int64", count=len(counts))
            gram_counts = numpy.fromiter(counts.values(), dtype="int64", count=len(counts))
            order_of = numpy.argsort(hashes, kind="stable")
            context_keys, inverse = numpy.unique(of_gram, return_inverse=True)
            self.grams.append((hashes[order_of], gram_counts[order_of]))
            self.contexts.append((context_keys, numpy.bincount(inverse, weights=gram_counts).astype("int64"),
                                  numpy.bincount(inverse).astype("int64")))
        self.n_chars = int(self.grams[0][1].sum())
        self.n_symbols = len(self.grams[0][0]) + 1  # + one for characters never seen

    @property
    def nbytes(self) -> int:
        return int(sum(k.nbytes + c.nbytes for k, c in self.grams)
                   + sum(k.nbytes + c.nbytes + t.nbytes for k, c, t in self.contexts))

    def logprob(self, word: str) -> float:
        """Natural log-probability of ``word`` (its characters and the end mark)."""
        s = _BOW * (self.order - 1) + word + _EOW
        positions = range(self.order - 1, len(s))
        unigram = numpy.asarray([hash(s[i]) for i in positions], dtype="int64")
        p = (_lookup(unigram, *self.grams[0]) + 1.0) / (self.n_chars + self.n_symbols)
        for k in range(1, self.order):
            gram = numpy.asarray([hash(s[i - k:i + 1]) for i in positions], dtype="int64")
            context = numpy.asarray([hash(s[i - k:i]) for i in positions], dtype="int64")
            seen = _lookup(context, self.contexts[k][0], self.contexts[k][1]).astype("float64")
            types = _lookup(context, self.contexts[k][0], self.contexts[k][2]).astype("float64")
            count = _lookup(gram, *self.grams[k])
            p = numpy.where(seen > 0, (count + types * p) / numpy.maximum(seen + types, 1.0), p)
        return float(numpy.log(p).sum())

    def per_char(self, word: str) -> float:
        """Mean log-probability per character, the end mark included: words of other lengths
        compare on one scale."""
        return self.logprob(word) / (len(word) + 1)

    def typo_scores(self, word: str, candidates: Sequence[str]) -> List[float]:
        """How much less likely ``word`` is as a word than each of ``candidates``, in nats per
        character (lowercased): high for a misspelling of a candidate, near 0 or below for a
        real word. The word is scored once."""
        own = self.per_char(word.lower())
        return [self.per_char(candidate.lower()) - own for candidate in candidates]

    def typo_score(self, word: str, candidate: str) -> float:
        return self.typo_scores(word, [candidate])[0]


def unit(vectors: numpy.ndarray) -> numpy.ndarray:
    vectors = numpy.asarray(vectors, dtype="float32")
    return vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=-1, keepdims=True), 1e-8)


def choose(predicted: numpy.ndarray, candidates: numpy.ndarray, min_cosine: float = DEFAULT_MIN_COSINE) -> int:
    """Index of the candidate vector (rows of ``candidates``) nearest to ``predicted`` by
    cosine, or -1 when none reaches ``min_cosine``."""
    if not len(candidates):
        return -1
    cos = unit(candidates) @ unit(predicted)
    best = int(numpy.argmax(cos))
    return best if cos[best] >= min_cosine else -1


def blend(candidate: numpy.ndarray, predicted: numpy.ndarray, weight: float = DEFAULT_WEIGHT) -> numpy.ndarray:
    """``weight`` of the candidate's direction and ``1 - weight`` of the prediction's (unit
    vectors), at the candidate's norm; ``weight`` 1 gives the candidate's vector itself."""
    candidate = numpy.asarray(candidate, dtype="float32")
    if weight >= 1:
        return candidate.copy()
    mix = weight * unit(candidate) + (1 - weight) * unit(predicted)
    return (unit(mix) * float(numpy.linalg.norm(candidate))).astype("float32")


class SpellingBackoff:
    """The lookup's spelling step over one table: ``vector(word, predicted)`` gives the blended
    vector of the table word one edit from ``word`` (see the module docstring), or None.

    entries: ``(word, row)`` pairs of the table (only rows below ``max_rows`` are indexed when it
        is set: candidates among the table's most frequent words).
    row_vectors: ``rows -> (len(rows), width)`` numpy array of the table's rows.
    choice: "frequent" (the lowest row) or "cosine" (the candidate nearest to Mimick's prediction).
    min_cosine: no spelled vector when the chosen candidate's cosine to the prediction is lower.
    typo_margin: the typo gate: a candidate is taken only when the word scores at least this
        many nats per character below it under ``CharLM`` of the table's words; None: no gate.
    """

    def __init__(
        self, entries: Iterable[Tuple[str, int]], row_vectors: Callable[[Sequence[int]], numpy.ndarray], *,
        weight: float = DEFAULT_WEIGHT, max_rows: int = 0, min_cosine: float = DEFAULT_MIN_COSINE,
        choice: str = DEFAULT_CHOICE, min_length: int = DEFAULT_MIN_LENGTH, lowercase: bool = True,
        typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN,
    ):
        check_settings(weight, max_rows, typo_margin)
        if choice not in ("cosine", "frequent"):
            raise ValueError(f"spelling backoff: choice is 'cosine' or 'frequent', got {choice!r}")
        entries = list(entries)
        # The gate models the language's words: the table's most frequent LM_MAX_WORDS (lowest
        # rows), also those beyond max_rows; a pipeline's table can have 500k keys.
        self.lm = None
        if typo_margin is not None:
            by_row = sorted((row, word) for word, row in entries if indexable(word, 1))
            self.lm = CharLM(word.lower() for _, word in by_row[:LM_MAX_WORDS])
        if max_rows:
            entries = [(word, row) for word, row in entries if row < max_rows]
        self.index = SpellingIndex(entries, min_length=min_length)
        self.row_vectors = row_vectors
        self.weight, self.min_cosine, self.choice, self.lowercase = weight, min_cosine, choice, lowercase
        self.typo_margin = typo_margin

    def candidates(self, word: str) -> List[Tuple[str, int]]:
        """``(word, row)`` of the table words one edit from ``word`` (or, when there are none and
        ``lowercase``, from its lowercase form), lowest row first."""
        pairs = self.index.candidates(word)
        if self.lowercase and not pairs and word.lower() != word:
            pairs = self.index.candidates(word.lower())
        return pairs

    def vector(self, word: str, predicted: numpy.ndarray) -> Tuple[Optional[numpy.ndarray], Optional[str]]:
        """(vector, the table word it is spelled from) for ``word`` given Mimick's prediction for
        it, or (None, None) when no table word is one edit away (or none within ``min_cosine``)."""
        pairs = self.candidates(word)
        if self.lm is not None and pairs:  # the gate: only the candidates it takes word for a typo of
            scores = self.lm.typo_scores(word, [w for w, _ in pairs])
            pairs = [pair for pair, score in zip(pairs, scores) if score >= self.typo_margin]
        if not pairs:
            return None, None
        if self.choice == "frequent":
            pairs = pairs[:1]
        vectors = numpy.asarray(self.row_vectors([row for _, row in pairs]), dtype="float32")
        best = choose(predicted, vectors, self.min_cosine)
        if best < 0:
            return None, None
        return blend(vectors[best], predicted, self.weight), pairs[best][0]

    def apply(
        self, words: Sequence[str], predicted: numpy.ndarray, in_table: Optional[Callable[[str], bool]] = None,
    ) -> Tuple[numpy.ndarray, List[Optional[str]]]:
        """``predicted`` (one row per word) with the spelled vectors in place of Mimick's where
        there is one (a copy), and the table word each was spelled from (None: Mimick's). Words
        for which ``in_table`` is True keep Mimick's prediction: the lookup gives them their
        table row, never a neighbour's."""
        out = numpy.array(predicted, dtype="float32")
        spelled: List[Optional[str]] = []
        for i, word in enumerate(words):
            if in_table is not None and in_table(word):
                spelled.append(None)
                continue
            vector, source = self.vector(word, out[i])
            if vector is not None:
                out[i] = vector
            spelled.append(source)
        return out, spelled


def check_settings(weight: float, max_rows: int, typo_margin: Optional[float] = None) -> None:
    if not 0 < weight <= 1:
        raise ValueError(f"spelling backoff: the weight of the table word's vector is in (0, 1], got {weight}")
    if max_rows < 0:
        raise ValueError(f"spelling backoff: max_rows is a number of table rows (0: all), got {max_rows}")
    if typo_margin is not None and not numpy.isfinite(typo_margin):
        raise ValueError(f"spelling backoff: typo_margin is a number of nats per character (or None: no gate), "
                         f"got {typo_margin}")


def for_word_vectors(table, **settings) -> SpellingBackoff:
    """A ``SpellingBackoff`` over a ``WordVectors`` table (``read_vectors``)."""
    return SpellingBackoff(((w, i) for i, w in enumerate(table.words)), lambda rows: table.matrix[list(rows)],
                           **settings)
