"""``spacy_mimick.MimickVectors.v1``: the pipeline's vectors table, with a vector for every word it
lacks: Mimick's prediction from the word's spelling.

spaCy asks ``vocab.vectors`` for every vector it uses: ``Token.vector``, ``has_vector``,
``similarity`` and the ``Doc``/``Span`` vectors through ``vocab.get_vector`` and ``key in
vocab.vectors``; its own ``StaticVectors`` layer (the tok2vec of a tagger, parser or NER) through
``vocab.vectors.get_batch(keys)``, as for floret vectors. This class is such a vectors object (a
``BaseVectors``): it wraps the pipeline's table (a ``spacy.vectors.Vectors``) and a ``MimickModel``.
For a key

1. with a table row: that row, exactly as the table gives it;
2. else, with ``lowercase_backoff``, the row of its lowercase form ("The" -> "the");
3. else Mimick's prediction for its string. Whitespace-only strings and keys without a string
   get none, as in spaCy (``get_batch``: zeros, as spaCy's ``StaticVectors`` for rows it lacks).
   With ``spelling_backoff`` (off by default in this class and in v1; on in the
   ``mimick_vectors`` component and in v2), a word one edit (a deletion, insertion,
   substitution or transposition) from table words, which a character model of the table's
   words takes for a misspelling of one (``spelling_typo_margin``; None: any), gets the most
   frequent such word's vector blended with Mimick's prediction: ``spelling_weight`` of the
   table word's direction (``spacy_mimick.spelling``; ``spelled_from(word)`` says which word). It
   recovers most one-edit misspellings of frequent words and leaves most real rare words one
   edit from a table word alone ("detestable" is not "detectable"): docs/oov_vectors.md, "The
   typo gate". Its index and character model of the table's words are built at the first word
   that needs them (about 1.5 s and 14 MiB for 100k words) and again when the table's data is
   replaced; ``sources`` still says MIMICK for these words.

With ``mimick_only`` every non-space key gets Mimick's prediction and the table is not read: for a
pipeline without a table, or with one in another space or width than the Mimick model's.

With ``spaced_from_parts`` (off in this class, v1 and v2; on in v3 and the ``mimick_vectors``
component), a form with white space inside that the table lacks (a multiword token: Vietnamese
syllable groups such as ``hàng xóm``, French ``1 000``, an entity that ``merge_entities`` joined)
gets the mean of its parts' vectors, each found as above, as spaCy's ``Span.vector`` is the mean
of its tokens'; and ``predict`` gives it the mean of its parts' predictions. A Mimick model learned
from a table of whitespace tokens never saw a space, so its prediction for the whole form reads a
character it does not know. On Vietnamese's 5,000-token samples the tagger gained 0.30 POS on the
mean (4 of 5 samples; 1.46 on the words outside the sample): docs/low_resource.md. ``sources``
still says MIMICK for such a form.

As for floret vectors (spaCy's docs of ``Vectors.__contains__`` and ``Token.is_oov``), every word
then has a vector: ``key in vectors`` is True for any string that is not whitespace,
``token.has_vector`` is True and ``token.is_oov`` False. ``in_table(key)`` and ``sources(keys)``
tell where a vector comes from.

Predictions are made in batches (``get_batch``, ``warm``) and kept in a bounded LRU cache of
``cache_size`` read-only rows (editing one in place is refused: the cache shares it). The Mimick
model is saved with the vocab, in ``vocab/mimick/`` beside the table's files (``to_bytes`` and
pickling carry it too), so ``nlp.to_disk`` + ``spacy.load``, ``DocBin``, ``Doc.to_bytes`` and
``nlp.pipe(n_process=N)`` (fork or spawn) give the same vectors with no extra call. Every other
attribute (``data``, ``key2row``, ``find``, ``mode``, ``name``, ``most_similar``, ``add``...) is the
table's.
"""
import copyreg
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy import vocab as spacy_vocab
from spacy.strings import get_string_id
from spacy.util import registry
from spacy.vectors import BaseVectors, Vectors
from thinc.api import get_array_module

from ..devices import pipeline_device
from ..threads import AUTO, torch_threads
from .mimick_model import MimickModel
from .spelling import DEFAULT_TYPO_MARGIN, DEFAULT_WEIGHT, SpellingBackoff, check_settings

MODEL_DIR = "mimick"
# Where a vector comes from (``sources``): the table's own row, the row of the lowercase form,
# Mimick's prediction, none (whitespace, a key without a string).
TABLE, LOWERCASE, MIMICK, NONE = 0, 1, 2, 3


def to_numpy(array) -> numpy.ndarray:
    """``array`` as numpy: spaCy keeps the table (and ``Vectors.find``'s rows) on the GPU under
    ``spacy train --gpu-id N``, and cupy refuses implicit conversion."""
    return array.get() if hasattr(array, "get") else numpy.asarray(array)


def table_of(vectors: BaseVectors) -> BaseVectors:
    """The spaCy table inside ``vectors`` (``vectors`` itself when it is a plain table)."""
    return vectors.table if isinstance(vectors, MimickVectors) else vectors


def is_mimick_only(vectors: BaseVectors) -> bool:
    """Whether every vector is Mimick's and the table is not read (``mimick_only``)."""
    return isinstance(vectors, MimickVectors) and vectors.mimick_only


def table_rows(table: Vectors, rows: numpy.ndarray) -> numpy.ndarray:
    """Rows ``rows`` of ``table``'s data, as numpy (without copying a GPU table whole)."""
    xp = get_array_module(table.data)
    return to_numpy(table.data[xp.asarray(rows)])


def _key_list(keys) -> List[int]:
    if isinstance(keys, (list, tuple)):
        return [int(k) for k in keys]
    return numpy.asarray(to_numpy(keys), dtype="uint64").tolist()


def parts_of(word: str) -> Optional[List[str]]:
    """The white-space-separated parts of ``word``, or None when it has fewer than two."""
    parts = word.split()
    return parts if len(parts) > 1 else None


def spaced_forms(words: Sequence[str]) -> Tuple[Dict[str, List[str]], List[str]]:
    """``({form: its parts}, [every part once])`` for the forms of ``words`` with white space inside."""
    parts = {word: found for word in dict.fromkeys(words) if (found := parts_of(word)) is not None}
    return parts, list(dict.fromkeys(piece for found in parts.values() for piece in found))


def _frozen(vector: numpy.ndarray) -> numpy.ndarray:
    vector.flags.writeable = False
    return vector


@registry.vectors("spacy_mimick.MimickVectors.v1")
def create_mimick_vectors(
    model_path: Optional[str] = None, lowercase_backoff: bool = True, cache_size: int = 100_000,
    mimick_only: bool = False, n_threads: int = AUTO, spelling_backoff: bool = False,
    spelling_weight: float = DEFAULT_WEIGHT, spelling_max_rows: int = 0,
) -> Callable[[Any], "MimickVectors"]:
    """``[nlp.vectors] @vectors = "spacy_mimick.MimickVectors.v1"``: the pipeline's table plus
    Mimick's predictions for every other word.

    model_path: a trained Mimick model (``python -m spacy_mimick train``), read when a prediction
        is first needed and only if the vocab brought none: a saved pipeline carries its own in
        ``vocab/mimick``, so its config's path need not exist where it is loaded.
    n_threads: torch CPU threads for Mimick's predictions (the caller's setting is restored
        after each batch): -1 (the default) ``OMP_NUM_THREADS`` where set, else the cores other
        processes leave free, measured at run time (``spacy_mimick/threads.py``); N threads; 0 torch's own setting.
    spelling_backoff: a word the table lacks that is one edit from table words gets the most
        frequent one's vector, blended with Mimick's (``spelling_weight`` of the table word's:
        1 gives its vector; candidates among the first ``spelling_max_rows`` rows, 0: all).
    """
    return create_mimick_vectors_v2(
        model_path=model_path, lowercase_backoff=lowercase_backoff, cache_size=cache_size, mimick_only=mimick_only,
        n_threads=n_threads, spelling_backoff=spelling_backoff, spelling_weight=spelling_weight,
        spelling_max_rows=spelling_max_rows, spelling_typo_margin=None)


@registry.vectors("spacy_mimick.MimickVectors.v2")
def create_mimick_vectors_v2(
    model_path: Optional[str] = None, lowercase_backoff: bool = True, cache_size: int = 100_000,
    mimick_only: bool = False, n_threads: int = AUTO, spelling_backoff: bool = True,
    spelling_weight: float = DEFAULT_WEIGHT, spelling_max_rows: int = 0,
    spelling_typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN,
) -> Callable[[Any], "MimickVectors"]:
    """``spacy_mimick.MimickVectors.v1`` with the spelling backoff on and gated: a word one edit
    from table words is taken for a misspelling of one only when it is at least
    ``spelling_typo_margin`` nats per character less likely than that word under a character
    model of the table's words (``spelling.CharLM``; null: every candidate, as v1 does).
    docs/oov_vectors.md, "The typo gate", measures it."""
    return create_mimick_vectors_v3(
        model_path=model_path, lowercase_backoff=lowercase_backoff, cache_size=cache_size, mimick_only=mimick_only,
        n_threads=n_threads, spelling_backoff=spelling_backoff, spelling_weight=spelling_weight,
        spelling_max_rows=spelling_max_rows, spelling_typo_margin=spelling_typo_margin, spaced_from_parts=False)


@registry.vectors("spacy_mimick.MimickVectors.v3")
def create_mimick_vectors_v3(
    model_path: Optional[str] = None, lowercase_backoff: bool = True, cache_size: int = 100_000,
    mimick_only: bool = False, n_threads: int = AUTO, spelling_backoff: bool = True,
    spelling_weight: float = DEFAULT_WEIGHT, spelling_max_rows: int = 0,
    spelling_typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN, spaced_from_parts: bool = True,
) -> Callable[[Any], "MimickVectors"]:
    """``spacy_mimick.MimickVectors.v2`` with ``spaced_from_parts``: a form with white space inside
    that the table lacks gets the mean of its parts' vectors (the module's docstring)."""
    settings = dict(model_path=model_path, lowercase_backoff=lowercase_backoff, cache_size=cache_size,
                    mimick_only=mimick_only, n_threads=n_threads, spelling_backoff=spelling_backoff,
                    spelling_weight=spelling_weight, spelling_max_rows=spelling_max_rows,
                    spelling_typo_margin=spelling_typo_margin, spaced_from_parts=spaced_from_parts)

    def make(vocab) -> MimickVectors:
        return MimickVectors(strings=vocab.strings, **settings)
    return make


class MimickVectors(BaseVectors):
    def __init__(
        self, *, strings=None, table: Optional[Vectors] = None, model: Optional[MimickModel] = None,
        model_path: Optional[Union[str, Path]] = None, lowercase_backoff: bool = True,
        cache_size: int = 100_000, mimick_only: bool = False, n_threads: int = AUTO,
        spelling_backoff: bool = False, spelling_weight: float = DEFAULT_WEIGHT, spelling_max_rows: int = 0,
        spelling_typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN, spaced_from_parts: bool = False,
    ):
        check_settings(spelling_weight, spelling_max_rows, spelling_typo_margin)
        super().__init__(strings=strings)
        self.table = table if table is not None else Vectors(strings=strings)
        self._model = model
        self.model_path = None if model_path in (None, "") else str(model_path)
        self.lowercase_backoff = lowercase_backoff
        self.cache_size = cache_size
        self.mimick_only = mimick_only
        self.n_threads = n_threads
        self.spelling_backoff = spelling_backoff
        self.spelling_weight = spelling_weight
        self.spelling_max_rows = spelling_max_rows
        self.spelling_typo_margin = spelling_typo_margin
        self.spaced_from_parts = spaced_from_parts
        self._cache: "OrderedDict[str, numpy.ndarray]" = OrderedDict()
        # The spelling backoff's index, what it was built for, and its results per string
        # ((vector, table word) or None), bounded as the cache.
        self._speller: Optional[SpellingBackoff] = None
        self._speller_for: Optional[tuple] = None
        self._spelled: "OrderedDict[str, Optional[Tuple[numpy.ndarray, str]]]" = OrderedDict()

    # -- the parts of the table that differ ---------------------------------------------------
    def __getattr__(self, name: str):
        # Only called for names this class lacks: the table's (data, key2row, find, mode, ...).
        if name == "table":
            raise AttributeError(name)
        return getattr(self.table, name)

    @property
    def attr(self) -> int:
        # Read by spaCy for every token.vector: a property, not the slower __getattr__ fallback.
        return self.table.attr

    @attr.setter
    def attr(self, attr) -> None:
        self.table.attr = attr

    @property
    def strings(self):
        return self.table.strings

    @strings.setter
    def strings(self, strings) -> None:
        self.table.strings = strings

    @property
    def model(self) -> Optional[MimickModel]:
        """The Mimick model (read from ``model_path`` the first time it is needed), on the
        pipeline's device: the GPU after ``spacy.require_gpu()`` or under ``spacy train --gpu-id N``."""
        if self._model is None and self.model_path is not None:
            self.set_model(MimickModel.from_disk(self.model_path))
        if self._model is not None:
            device = pipeline_device()
            if self._model.device != device:
                self._model.to(device)
        return self._model

    def set_model(self, model: Optional[MimickModel]) -> None:
        if model is not None and not self.mimick_only and self.table.shape[0] and self.table.shape[1] != model.width:
            raise ValueError(
                f"the Mimick model predicts {model.width}-dimensional vectors but the pipeline's "
                f"vectors are {self.table.shape[1]}-dimensional: train Mimick on the same vectors "
                f"(or set mimick_only)")
        self._model = model
        self.clear_cache()

    def clear_cache(self) -> None:
        """Forget the cached predictions and spelling results (not the spelling index)."""
        self._cache.clear()
        self._spelled.clear()

    @property
    def reads_table(self) -> bool:
        return not self.mimick_only and self.table.shape[0] > 0

    @property
    def is_floret(self) -> bool:
        return self.table.mode == "floret" and not self.mimick_only

    @property
    def shape(self) -> Tuple[int, int]:
        if self.reads_table or self._model is None:
            return self.table.shape
        return (0 if self.mimick_only else self.table.shape[0], self._model.width)

    @property
    def vectors_length(self) -> int:
        return self.shape[1]

    @property
    def size(self) -> int:
        # Non-zero whenever there are vectors: spaCy's Token.vector reads doc.tensor instead
        # when the vocab's vectors have size 0.
        return self.table.size if self.reads_table else self.shape[1]

    @property
    def n_keys(self) -> int:
        # As floret: -1, every key has a vector (0 would make spaCy warn W007 on similarity).
        return self.table.n_keys if self._model is None and self.model_path is None else -1

    def __len__(self) -> int:
        return len(self.table)

    @property
    def is_full(self) -> bool:
        return self.table.is_full

    def add(self, key, **kwargs) -> int:
        return self.table.add(key, **kwargs)

    def to_ops(self, ops) -> None:
        self.table.to_ops(ops)

    # -- lookups ------------------------------------------------------------------------------
    def _has_model(self) -> bool:
        return self._model is not None or self.model_path is not None

    def _string(self, key: int) -> Optional[str]:
        return self.strings[key] if key in self.strings else None

    def in_table(self, key: Union[int, str]) -> bool:
        """Whether the table itself has a row for ``key`` (what ``key in vectors`` means for
        spaCy's plain tables)."""
        return self.reads_table and get_string_id(key) in self.table.key2row

    def _source(self, key: int) -> Tuple[int, int, Optional[str]]:
        """One key's source, table row and string: ``_plan`` for a single key, without arrays
        (``token.vector`` asks per token)."""
        # Inlined reads_table / is_floret: spaCy asks twice per token.vector (has_vector, then
        # the vector); an empty table's key2row finds nothing, which is what reads_table says.
        table = not self.mimick_only
        if table:
            if self.table.mode == "floret":
                return TABLE, -1, None
            row = self.table.key2row.get(key)
            if row is not None:
                return TABLE, row, None
        text = self._string(key)
        if text is None or not text or text.isspace():
            return NONE, -1, None
        if table and self.lowercase_backoff:
            row = self.table.key2row.get(get_string_id(text.lower()))
            if row is not None:
                return LOWERCASE, row, text
        return (MIMICK, -1, text) if self._has_model() else (NONE, -1, None)

    def __contains__(self, key: Union[int, str]) -> bool:
        return self._source(get_string_id(key))[0] != NONE

    def __getitem__(self, key: Union[int, str]):
        key = get_string_id(key)
        source, row, text = self._source(key)
        if source == NONE:
            raise KeyError(f"no vector for key {key}: whitespace or a string the vocab does not know")
        if source == TABLE:
            return self.table[key] if row < 0 else self.table.data[row]
        if source == LOWERCASE:
            return self.table.data[row]
        if self.spaced_from_parts and parts_of(text) is not None:
            return self.lookup([key])[0][0]
        vector = self._cached(text)
        if vector is None:
            vector = self.predict([text])[0]
        if self.spelling_backoff:
            spelled = self._spell(text, vector)
            if spelled is not None:
                return spelled[0]
        return vector

    def get_batch(self, keys):
        """The vectors of ``keys`` (an array of hashes, as spaCy's ``StaticVectors`` passes),
        on the table's device; zeros where there is none."""
        return self.lookup(keys)[0]

    def sources(self, keys: Iterable[int]) -> numpy.ndarray:
        """Per key: TABLE, LOWERCASE, MIMICK or NONE (no prediction is made)."""
        return self._plan(_key_list(keys))[0]

    def _plan(self, keys: Sequence[int]) -> Tuple[numpy.ndarray, numpy.ndarray, Dict[int, str]]:
        """Each key's source and table row (the lowercase form's for LOWERCASE), and the
        strings of the keys Mimick predicts."""
        n = len(keys)
        sources = numpy.full((n,), NONE, dtype="int64")
        rows = numpy.full((n,), -1, dtype="int64")
        if self.is_floret:  # a vector for every string already: nothing to predict
            return numpy.full((n,), TABLE, dtype="int64"), rows, {}
        if self.reads_table:
            rows = to_numpy(self.table.find(keys=numpy.asarray(keys, dtype="uint64"))).astype("int64")
            sources[rows >= 0] = TABLE
        texts: Dict[int, str] = {}
        backoff = self.lowercase_backoff and self.reads_table
        has_model = self._has_model()
        lower_rows: Dict[int, int] = {}
        for i in numpy.flatnonzero(rows < 0).tolist():
            key = keys[i]
            text = texts.get(key) or self._string(key)
            if text is None or not text or text.isspace():
                continue
            if backoff:
                row = lower_rows.get(key)
                if row is None:
                    row = lower_rows[key] = int(self.table.key2row.get(get_string_id(text.lower()), -1))
                if row >= 0:
                    sources[i], rows[i] = LOWERCASE, row
                    continue
            if has_model:
                sources[i] = MIMICK
                texts[key] = text
        return sources, rows, texts

    def lookup(self, keys) -> Tuple[Any, numpy.ndarray]:
        """``(vectors, sources)`` of ``keys``: (n, width) on the table's device, zeros where
        the source is NONE; one Mimick batch for the keys that need a prediction."""
        keys = _key_list(keys)
        sources, rows, texts = self._plan(keys)
        if self.is_floret:
            return self.table.get_batch(keys), sources
        width = self.shape[1]
        xp = get_array_module(self.table.data) if self.reads_table else numpy
        out = xp.zeros((len(keys), width), dtype="float32")
        rowed = numpy.flatnonzero(rows >= 0)
        if rowed.size:
            out[xp.asarray(rowed)] = self.table.data[xp.asarray(rows[rowed])]
        predicted = numpy.flatnonzero(sources == MIMICK)
        if predicted.size:
            words = [texts[keys[i]] for i in predicted.tolist()]
            spaced = self._from_parts(words, xp) if self.spaced_from_parts else {}
            if spaced:
                from_parts = numpy.array([word in spaced for word in words])
                out[xp.asarray(predicted[from_parts])] = xp.stack([spaced[word] for word in words if word in spaced])
                predicted, words = predicted[~from_parts], [word for word in words if word not in spaced]
            if words:
                vectors = self.predict(words)
                if self.spelling_backoff:
                    vectors = self._spell_batch(words, vectors)
                out[xp.asarray(predicted)] = xp.asarray(vectors)
        return out, sources

    def _from_parts(self, words: Sequence[str], xp) -> Dict[str, Any]:
        """``{form: the mean of its parts' vectors}`` for each form of ``words`` with white space
        inside (``spaced_from_parts``); the parts are looked up as any key is, in one batch."""
        parts, pieces = spaced_forms(words)
        if not parts:
            return {}
        vectors, _ = self.lookup([self.strings.add(piece) for piece in pieces])
        row = dict(zip(pieces, range(len(pieces))))
        return {word: vectors[xp.asarray([row[piece] for piece in found])].mean(axis=0) for word, found in parts.items()}

    # -- spelling backoff -----------------------------------------------------------------------
    def spelled_from(self, word: str) -> Optional[str]:
        """The table word whose vector ``word``'s is blended from (``spelling_backoff``), or None:
        the option is off, ``word`` has a table row (or its lowercase form has), or no table word
        is one edit away."""
        if (not self.spelling_backoff or not self.reads_table or self.is_floret or not word or word.isspace()
                or self.in_table(word) or (self.lowercase_backoff and self.in_table(word.lower()))):
            return None
        spelled = self._spell(word, self.predict([word])[0])
        return None if spelled is None else spelled[1]

    def _spell_batch(self, words: Sequence[str], vectors: numpy.ndarray) -> numpy.ndarray:
        out = vectors
        for i, word in enumerate(words):
            spelled = self._spell(word, vectors[i])
            if spelled is not None:
                if out is vectors:
                    out = numpy.array(vectors)
                out[i] = spelled[0]
        return out

    def _spell(self, text: str, predicted: numpy.ndarray) -> Optional[Tuple[numpy.ndarray, str]]:
        """(vector, table word) of the spelling backoff for ``text``, a string with no table row,
        or None; remembered per string (as the cache), the index built when first needed."""
        speller = self._spelling_index()  # first: a rebuilt index forgets the results
        if speller is None:
            return None
        if text in self._spelled:
            self._spelled.move_to_end(text)
            return self._spelled[text]
        vector, word = speller.vector(text, numpy.asarray(predicted, dtype="float32"))
        result = None if vector is None else (_frozen(vector), word)
        if self.cache_size > 0:
            self._spelled[text] = result
            while len(self._spelled) > self.cache_size:
                self._spelled.popitem(last=False)
        return result

    def _spelling_index(self) -> Optional[SpellingBackoff]:
        """The spelling backoff over the table's words, (re)built when the table's data, its
        shape or the spelling settings differ from the last build (``from_disk`` or ``resize``
        replace the data; keys added in place, as ``add_to_vectors`` adds Mimick's own vectors,
        are not candidates until then)."""
        if not self.reads_table or self.is_floret:
            return None
        table = self.table
        built_for = (id(table), id(table.data), table.shape, self.spelling_weight, self.spelling_max_rows,
                     self.lowercase_backoff, self.spelling_typo_margin)
        if self._speller is None or self._speller_for != built_for:
            check_settings(self.spelling_weight, self.spelling_max_rows, self.spelling_typo_margin)
            entries = [(self.strings[key], row) for key, row in table.key2row.items() if key in self.strings]
            if len(entries) < len(table.key2row):
                warnings.warn(
                    f"spelling_backoff: {len(table.key2row) - len(entries)} of the table's "
                    f"{len(table.key2row)} keys have no string in the vocab, so they are never "
                    f"spelling candidates (add the words to nlp.vocab.strings)")
            self._speller = SpellingBackoff(
                entries, lambda rows: table_rows(table, numpy.asarray(rows, dtype="int64")),
                weight=self.spelling_weight, max_rows=self.spelling_max_rows, lowercase=self.lowercase_backoff,
                typo_margin=self.spelling_typo_margin)
            self._speller_for = built_for
            self._spelled.clear()
        return self._speller

    def predict(self, words: Sequence[str]) -> numpy.ndarray:
        """Mimick's prediction for each of ``words`` (float32, numpy), through the cache: each
        form not cached is predicted once, in one batch. With ``spaced_from_parts``, a form with
        white space inside gets the mean of its parts' predictions."""
        parts, pieces = spaced_forms(words) if self.spaced_from_parts else ({}, [])
        if not parts:
            return self._predict_forms(words)
        whole = [word for word in words if word not in parts]
        row = dict(zip(whole + pieces, self._predict_forms(whole + pieces)))
        return numpy.stack([row[word] if word not in parts else numpy.mean([row[piece] for piece in parts[word]], axis=0)
                            for word in words]).astype("float32")

    def _predict_forms(self, words: Sequence[str]) -> numpy.ndarray:
        """Mimick's prediction for each of ``words`` as spelled, through the cache."""
        model = self.model
        if model is None:
            raise ValueError("MimickVectors has no Mimick model: give it model_path, or initialize "
                             "the mimick_vectors component with one")
        found = [self._cached(word) for word in words]
        missing = list(dict.fromkeys(w for w, v in zip(words, found) if v is None))
        fresh: Dict[str, numpy.ndarray] = {}
        if missing:
            with torch_threads(self.n_threads):
                predicted = model.predict(missing)
            for word, row in zip(missing, predicted):
                # One read-only copy per row: a view would keep the whole batch alive.
                fresh[word] = _frozen(numpy.array(row, dtype="float32"))
                self._remember(word, fresh[word])
        if not words:
            return numpy.zeros((0, model.width), dtype="float32")
        return numpy.stack([v if v is not None else fresh[w] for w, v in zip(words, found)])

    def warm(self, words: Iterable[str]) -> None:
        """Predict the forms of ``words`` that need a prediction, in one batch, into the cache."""
        words = list(dict.fromkeys(words))
        keys = [get_string_id(w) for w in words]
        sources = self._plan(keys)[0]
        needed = [w for w, s in zip(words, sources) if s == MIMICK and w not in self._cache]
        if needed and self.cache_size > 0:
            self.predict(needed[-self.cache_size:])

    def _cached(self, word: str) -> Optional[numpy.ndarray]:
        vector = self._cache.get(word)
        if vector is not None:
            self._cache.move_to_end(word)
        return vector

    def _remember(self, word: str, vector: numpy.ndarray) -> None:
        if self.cache_size <= 0:
            return
        self._cache[word] = vector
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    # -- serialization ------------------------------------------------------------------------
    def _settings(self) -> Dict[str, Any]:
        return {"lowercase_backoff": self.lowercase_backoff, "cache_size": self.cache_size,
                "mimick_only": self.mimick_only, "n_threads": self.n_threads,
                "spelling_backoff": self.spelling_backoff, "spelling_weight": self.spelling_weight,
                "spelling_max_rows": self.spelling_max_rows, "spelling_typo_margin": self.spelling_typo_margin,
                "spaced_from_parts": self.spaced_from_parts}

    def to_disk(self, path: Union[str, Path], *, exclude=tuple()) -> None:
        path = Path(path)
        self.table.to_disk(path, exclude=exclude)
        model = self.model
        if model is not None:
            model.to_disk(path / MODEL_DIR)

    def from_disk(self, path: Union[str, Path], *, exclude=tuple()) -> "MimickVectors":
        path = Path(path)
        self.table.from_disk(path, exclude=exclude)
        self._speller = None  # a new table: the spelling index is built again when needed
        self._spelled.clear()
        if (path / MODEL_DIR).exists():
            self.set_model(MimickModel.from_disk(path / MODEL_DIR))
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        model = self.model
        return srsly.msgpack_dumps({
            "table": self.table.to_bytes(exclude=exclude),
            "mimick": model.to_bytes() if model is not None else None,
        })

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "MimickVectors":
        msg = srsly.msgpack_loads(data)
        self.table.from_bytes(msg["table"], exclude=exclude)
        self._speller = None  # a new table: the spelling index is built again when needed
        self._spelled.clear()
        if msg.get("mimick") is not None:
            self.set_model(MimickModel.from_bytes(msg["mimick"]))
        return self

    def __reduce__(self):
        model = self.model
        return (_unpickle, (self.table, None if model is None else model.to_bytes(), self._settings()))


def _unpickle(table: Vectors, model: Optional[bytes], settings: Dict[str, Any]) -> MimickVectors:
    vectors = MimickVectors(strings=table.strings, table=table, **settings)
    if model is not None:
        vectors.set_model(MimickModel.from_bytes(model))
    return vectors


def _pickle_vocab(vocab):
    """spaCy's pickling of a Vocab, plus one step on loading (see ``_unpickle_vocab``)."""
    _, args = spacy_vocab.pickle_vocab(vocab)
    return (_unpickle_vocab, args)


def _unpickle_vocab(*args):
    """spaCy's ``unpickle_vocab`` sets ``vocab.vectors`` (which hands the vectors the vocab's
    string store of that moment) before it replaces the vocab's string store with the pickled
    one: strings added later (a spawned ``nlp.pipe`` worker's tokens) would then be missing from
    the vectors' store, and Mimick could not read their spelling. Point the vectors at the store
    the vocab ends up with, as ``vocab.vectors = ...`` does."""
    vocab = spacy_vocab.unpickle_vocab(*args)
    if isinstance(vocab.vectors, MimickVectors):
        vocab.vectors.strings = vocab.strings
    return vocab


copyreg.pickle(spacy_vocab.Vocab, _pickle_vocab)


def install(vocab, **settings) -> MimickVectors:
    """Make ``vocab.vectors`` a ``MimickVectors`` around its table (the same table object, no
    copy), with ``settings``; an existing one is updated. Returns it."""
    vectors = vocab.vectors
    if not isinstance(vectors, MimickVectors):
        vectors = MimickVectors(strings=vocab.strings, table=vectors)
        vocab.vectors = vectors
    for name, value in settings.items():
        setattr(vectors, name, value)
    vectors.clear_cache()
    return vectors


def vectors_and_sources(vocab, docs: List) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The static vector of every token of ``docs`` (numpy, (n_tokens, width)) and its source,
    whatever ``vocab.vectors`` is: a ``MimickVectors``, a default table (rows or NONE) or floret
    (every token TABLE). The one path by which the tagger reads "the vector of this token"."""
    vectors = vocab.vectors
    keys = numpy.concatenate([doc.to_array("ORTH") for doc in docs]) if docs else numpy.zeros((0,), "uint64")
    if isinstance(vectors, MimickVectors):
        out, sources = vectors.lookup(keys)
        return to_numpy(out).astype("float32", copy=False), sources
    width = vectors.shape[1] if vectors.shape[0] else 0
    if not len(keys) or not width:
        return numpy.zeros((len(keys), width), dtype="float32"), numpy.full((len(keys),), NONE, dtype="int64")
    if vectors.mode == "floret":
        return to_numpy(vectors.get_batch(keys)).astype("float32"), numpy.full((len(keys),), TABLE, dtype="int64")
    rows = to_numpy(vectors.find(keys=keys))
    out = numpy.zeros((len(keys), width), dtype="float32")
    found = rows >= 0
    if found.any():
        out[found] = table_rows(vectors, rows[found])
    sources = numpy.where(found, TABLE, NONE).astype("int64")
    return out, sources
