"""The ``mimick_vectors`` pipeline component: Mimick vectors for tokens the static table lacks.

For each token whose form has no row in ``nlp.vocab.vectors`` (whitespace tokens excepted: as
in spaCy, they have no vector) the component supplies a vector:
first the row of its lowercase form (``lowercase_backoff``), else Mimick's prediction from its
spelling. Each unique OOV form is predicted once per batch of docs, and kept in a bounded LRU
cache across batches (each vector is its own read-only array, so the cache holds at most
``cache_size`` rows). In-vocabulary tokens keep their own vectors.

Where the vectors live:
- ``doc.user_data["spacy_mimick.oov_vectors"]``: ``{form: float32 vector}``. This is the
  data; it survives ``DocBin(store_user_data=True)`` and ``nlp.pipe(n_process=...)``.
- ``doc.user_hooks`` / ``user_span_hooks`` / ``user_token_hooks``: make ``token.vector``,
  ``token.has_vector``, ``token.similarity`` and the span and doc vectors use that data. spaCy
  drops hooks when a doc is serialised (DocBin, multiprocessing); ``restore_vector_hooks(doc)``
  reinstalls them from ``user_data``, and ``token._.mimick_vector`` works with or without them.
- optional (``add_to_vectors = true``): predicted rows are also written into
  ``nlp.vocab.vectors``, so they are saved with the pipeline's vectors and later lookups skip
  Mimick. Off by default: it grows the shared table with every new word seen.

Opt-in ``refine_rare`` (a share of the table, e.g. 0.5): the vectors of the table's rarest rows
(the last ones: word2vec, GloVe, fastText and spaCy tables are in frequency order) are replaced at
``initialize()`` by the mean of the unit table vector and the unit Mimick prediction, scaled to
the row's norm. Vectors of rare words are trained on few contexts; their spelling adds
information (docs/oov_vectors.md: Stanford Rare Word 34 -> 36 with half the GloVe table,
SimLex-999/MEN/WS-353, whose words are frequent, unchanged). The table is changed in place, so
the pipeline saves the refined vectors.

Opt-in ``predict_all``: Mimick also predicts the tokens that have a pretrained vector, and the
predictions of all tokens go to ``doc.user_data["spacy_mimick.spelling_vectors"]``, where
``MimickTagger.v3`` reads them as a spelling input (``mimick_features``). Token vectors do not
change.

Opt-in ``mimick_only``: every token (whitespace tokens excepted, as in spaCy) gets Mimick's
prediction, whether or not the pipeline has a vectors table and whatever its width; the table is
not read. For a pipeline without a table, or with a table in another space than the Mimick
model's (e.g. GloVe 50d beside a converted Polyglot-64d release model). Frequent words then
lose their distributional vectors: every vector is a guess from spelling. The docs carry
``doc.user_data["spacy_mimick.mimick_only"] = True`` (and the width), which ``doc_vectors``
and the tagger read.

floret vectors (``vectors.mode == "floret"``) already give every string a vector from its
subwords, so there is nothing to predict: the component then leaves docs unchanged (unless
``mimick_only``).
"""
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union
import warnings

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, Token
from spacy.util import minibatch
from spacy.vectors import Mode
from spacy.vocab import Vocab

from .devices import pipeline_device
from .mimick_model import MimickModel, MimickModelError
from .pipeline_links import register_component, warn_if_worker
from .token_vectors import (
    MIMICK_ONLY_KEY, MIMICK_WIDTH_KEY, OOV_VECTORS_KEY, SPELLING_VECTORS_KEY, get_oov_table,
    mimick_only_width, to_numpy,
)


def _token_vector(token: Token) -> numpy.ndarray:
    vector = get_oov_table(token.doc).get(token.text)
    if vector is not None:
        return vector
    only_width = mimick_only_width(token.doc)
    if only_width is not None:  # Mimick-only: no table vectors (whitespace tokens)
        return numpy.zeros((only_width,), dtype="float32")
    return token.vocab.get_vector(token.orth)


def _token_has_vector(token: Token) -> bool:
    if token.text in get_oov_table(token.doc):
        return True
    return mimick_only_width(token.doc) is None and token.vocab.has_vector(token.orth)


def _frozen(vector: numpy.ndarray) -> numpy.ndarray:
    """``vector`` made read-only: the component's vectors are shared by the cache and every
    doc holding the word, so editing one in place is refused."""
    vector.flags.writeable = False
    return vector


def _read_only(vector: numpy.ndarray) -> numpy.ndarray:
    """A read-only view of a row of the vectors table (the table itself stays writable)."""
    return _frozen(vector.view())


def _mean_vector(tokens: Union[Doc, Span]) -> numpy.ndarray:
    if len(tokens) == 0:
        doc = tokens if isinstance(tokens, Doc) else tokens.doc
        width = mimick_only_width(doc)
        if width is None:
            width = tokens.vocab.vectors.shape[1]
            table = get_oov_table(doc)
            if table:
                width = len(next(iter(table.values())))
        return numpy.zeros((width,), dtype="float32")
    return numpy.mean([_token_vector(t) for t in tokens], axis=0).astype("float32")


def _any_has_vector(tokens: Union[Doc, Span]) -> bool:
    return any(_token_has_vector(t) for t in tokens)


def _cosine(a, b) -> float:
    """``similarity`` of Mimick-only docs: the cosine of the two vectors, 0.0 if either is zero.
    (spaCy's own would warn that the vocab has no vectors, which is beside the point there.)"""
    va, vb = numpy.asarray(a.vector), numpy.asarray(b.vector)
    norm = float(numpy.linalg.norm(va)) * float(numpy.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0


def restore_vector_hooks(doc: Doc) -> Doc:
    """Make ``doc``'s vector attributes use the Mimick vectors stored in its ``user_data``.

    Needed after ``DocBin.get_docs`` or ``nlp.pipe(n_process=...)``, which keep user_data but
    drop hooks. A doc without Mimick vectors is returned unchanged.
    """
    if OOV_VECTORS_KEY in doc.user_data:
        doc.user_hooks["vector"] = _mean_vector
        doc.user_hooks["has_vector"] = _any_has_vector
        doc.user_span_hooks["vector"] = _mean_vector
        doc.user_span_hooks["has_vector"] = _any_has_vector
        doc.user_token_hooks["vector"] = _token_vector
        doc.user_token_hooks["has_vector"] = _token_has_vector
        if mimick_only_width(doc) is not None:
            for hooks in (doc.user_hooks, doc.user_span_hooks, doc.user_token_hooks):
                hooks["similarity"] = _cosine
    return doc


def _mimick_vector_getter(token: Token) -> Optional[numpy.ndarray]:
    """``token._.mimick_vector``: the vector Mimick (or lowercase backoff) gave, else None."""
    return get_oov_table(token.doc).get(token.text)


if not Token.has_extension("mimick_vector"):
    Token.set_extension("mimick_vector", getter=_mimick_vector_getter)


@Language.factory(
    "mimick_vectors",
    default_config={
        "lowercase_backoff": True, "cache_size": 100_000, "add_to_vectors": False,
        "batch_size": 1000, "refine_rare": 0.0, "predict_all": False, "mimick_only": False,
    },
)
def make_mimick_vectors(
    nlp: Language, name: str, lowercase_backoff: bool, cache_size: int,
    add_to_vectors: bool, batch_size: int, refine_rare: float = 0.0, predict_all: bool = False,
    mimick_only: bool = False,
) -> "MimickVectors":
    """Create the component; the trained Mimick model is loaded in ``initialize(model_path=...)``.

    predict_all (bool): Also predict a vector for every token that has a pretrained one and
        store the predictions of all tokens in ``doc.user_data["spacy_mimick.spelling_vectors"]``
        (``{form: vector}``). Token vectors are unchanged; this is the input of
        ``MimickTagger.v3``'s ``mimick_features``. Each form is predicted once and cached.
    mimick_only (bool): Give every token Mimick's vector and ignore the pipeline's vectors
        table (none, or one in another space or width); whitespace tokens get none. See the
        module docstring.
    """
    return MimickVectors(
        nlp.vocab, name, lowercase_backoff=lowercase_backoff, cache_size=cache_size,
        add_to_vectors=add_to_vectors, batch_size=batch_size, refine_rare=refine_rare,
        predict_all=predict_all, mimick_only=mimick_only,
    )


def blend_with_table(vector: numpy.ndarray, predicted: numpy.ndarray) -> numpy.ndarray:
    """The direction of the mean of the two unit vectors, at ``vector``'s norm."""
    norm = float(numpy.linalg.norm(vector))
    mean = vector / max(norm, 1e-8) + predicted / max(float(numpy.linalg.norm(predicted)), 1e-8)
    return (mean / max(float(numpy.linalg.norm(mean)), 1e-8) * norm).astype("float32")


def first_rare_row(n_rows: int, share: float) -> int:
    """The first of the last ``share`` of ``n_rows`` rows: where ``refine_rare`` starts."""
    return int(round(n_rows * (1 - share)))


def refine_rare_rows(vocab: Vocab, model: MimickModel, share: float, batch_size: int = 4096) -> int:
    """Blend the last ``share`` of ``vocab.vectors``' rows with Mimick's predictions for their
    words (see the module docstring); returns the number of rows changed. A row shared by
    several keys (a pruned table) is predicted from its first key, the word that owns it."""
    vectors = vocab.vectors
    first = first_rare_row(vectors.shape[0], share)
    owners: Dict[int, int] = {}
    for key, row in vectors.key2row.items():
        if row >= first and row not in owners:
            owners[row] = key
    stores = [vocab.strings] + ([vectors.strings] if getattr(vectors, "strings", None) is not None else [])

    def word(key: int) -> Optional[str]:
        for store in stores:
            if key in store:
                return store[key]
        return None

    words = {row: word(key) for row, key in owners.items()}
    unknown = [row for row, w in words.items() if w is None]
    if unknown:
        warnings.warn(f"refine_rare: {len(unknown)} rows have keys with no string in the vocab; left unchanged")
    rows = sorted(row for row, w in words.items() if w is not None)
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        predicted = model.predict([words[row] for row in chunk])
        for row, vector in zip(chunk, predicted):
            vectors.data[row] = blend_with_table(numpy.asarray(vectors.data[row]), vector)
    return len(rows)


class MimickVectors(Pipe):
    def __init__(
        self, vocab: Vocab, name: str = "mimick_vectors", *, lowercase_backoff: bool = True,
        cache_size: int = 100_000, add_to_vectors: bool = False, batch_size: int = 1000,
        refine_rare: float = 0.0, predict_all: bool = False, model: Optional[MimickModel] = None,
        mimick_only: bool = False,
    ):
        if not 0 <= refine_rare < 1:
            raise ValueError(f"[{name}] refine_rare is a share of the table's rows in [0, 1), got {refine_rare}")
        if mimick_only and (add_to_vectors or refine_rare):
            raise ValueError(
                f"[{name}] mimick_only ignores the vectors table, so it cannot be combined with "
                f"add_to_vectors or refine_rare, which write Mimick's vectors into it")
        self.vocab = vocab
        self.name = name
        self.model = model
        self.cfg = {
            "lowercase_backoff": lowercase_backoff, "cache_size": cache_size,
            "add_to_vectors": add_to_vectors, "batch_size": batch_size, "refine_rare": refine_rare,
            "predict_all": predict_all, "mimick_only": mimick_only,
        }
        self._cache: "OrderedDict[str, numpy.ndarray]" = OrderedDict()

    # -- set-up ------------------------------------------------------------------------------
    def initialize(
        self, get_examples: Optional[Callable] = None, *, nlp: Optional[Language] = None,
        model_path: Optional[Union[str, Path]] = None,
    ) -> None:
        """Load the trained Mimick model from ``model_path`` (a ``spacy_mimick train`` output).

        In a training config: ``[initialize.components.mimick_vectors] model_path = ...``.
        """
        if model_path is None:
            if self.model is None:
                raise ValueError(
                    f"[{self.name}] initialize() needs model_path: the directory of a trained "
                    f"Mimick model (python -m spacy_mimick train VECTORS OUTPUT_DIR)"
                )
        else:
            self.set_model(MimickModel.from_disk(model_path))
        if self.vocab.vectors.mode == Mode.floret and not self.cfg.get("mimick_only"):
            warnings.warn(
                f"[{self.name}] the pipeline has floret vectors, which cover every word: "
                f"mimick_vectors will leave docs unchanged."
            )
        elif self.cfg.get("refine_rare", 0.0) > 0 and not self._table_is_refined():
            self.cfg["refined_rows"] = refine_rare_rows(self.vocab, self._require_model(), self.cfg["refine_rare"])
            self.cfg["refined_checksum"] = self._rare_rows_checksum()

    def _rare_rows_checksum(self) -> float:
        data = numpy.asarray(self.vocab.vectors.data)
        first = first_rare_row(data.shape[0], self.cfg["refine_rare"])
        return float(numpy.abs(data[first:]).sum(dtype="float64"))

    def _table_is_refined(self) -> bool:
        """Whether the rare rows are those this component refined (then a second initialize,
        e.g. of a loaded pipeline, must not blend them again); a freshly loaded table is not."""
        checksum = self.cfg.get("refined_checksum")
        return checksum is not None and abs(self._rare_rows_checksum() - checksum) <= 1e-6 * max(checksum, 1.0)

    def set_model(self, model: MimickModel) -> None:
        width = self.vocab.vectors.shape[1]
        # Mimick-only never mixes the two, so any table width is fine.
        if (not self.cfg.get("mimick_only") and self.vocab.vectors.shape[0]
                and self.vocab.vectors.mode != Mode.floret and width != model.width):
            raise ValueError(
                f"[{self.name}] the Mimick model predicts {model.width}-dimensional vectors but "
                f"the pipeline's vectors are {width}-dimensional: train Mimick on the same vectors"
            )
        self.model = model
        self._cache.clear()
        register_component(self)

    def _require_model(self) -> MimickModel:
        """The Mimick model, on the pipeline's device: the GPU after ``spacy.require_gpu()``
        or under ``spacy train --gpu-id N``, the CPU otherwise (as thinc's PyTorch wrapper
        places spaCy's own torch models)."""
        if self.model is None:
            raise ValueError(
                f"[{self.name}] no Mimick model: call nlp.initialize() with "
                f"[initialize.components.{self.name}] model_path set, or load a saved pipeline"
            )
        device = pipeline_device()
        if self.model.device != device:
            self.model.to(device)
        return self.model

    # -- prediction --------------------------------------------------------------------------
    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc], batch_size=1))

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        for docs in minibatch(stream, size=batch_size or self.cfg["batch_size"]):
            yield from self._annotate(docs)

    def _annotate(self, docs: List[Doc]) -> List[Doc]:
        mimick_only = self.cfg.get("mimick_only", False)
        if self.vocab.vectors.mode == Mode.floret and not mimick_only:
            return docs
        register_component(self)
        tables, spelling = self._predict_tables(docs)
        warn_if_worker(self.name)
        for doc, doc_table in zip(docs, tables):
            table = dict(get_oov_table(doc))
            table.update(doc_table)
            doc.user_data[OOV_VECTORS_KEY] = table
            if mimick_only:
                doc.user_data[MIMICK_ONLY_KEY] = True
                doc.user_data[MIMICK_WIDTH_KEY] = self._require_model().width
            if spelling:
                doc.user_data[SPELLING_VECTORS_KEY] = {token.text: spelling[token.text] for token in doc}
            restore_vector_hooks(doc)
        return docs

    def oov_tables(self, docs: List[Doc]) -> List[Dict[str, numpy.ndarray]]:
        """The ``{form: vector}`` table this component would store on each of ``docs``, without
        changing the docs (no user_data, no hooks). ``MimickStaticVectors`` calls it for docs
        that did not pass through the component. Floret tables: ``{}`` (nothing is OOV)."""
        if self.vocab.vectors.mode == Mode.floret and not self.cfg.get("mimick_only", False):
            return [{} for _ in docs]
        return self._predict_tables(docs, spelling=False)[0]

    def _predict_tables(
        self, docs: List[Doc], spelling: bool = True,
    ) -> Tuple[List[Dict[str, numpy.ndarray]], Dict[str, numpy.ndarray]]:
        """Per doc, ``{form: vector}`` of its OOV forms; and, with ``predict_all`` (and
        ``spelling``), Mimick's prediction of every form of the batch."""
        mimick_only = self.cfg.get("mimick_only", False)
        model = self._require_model()
        key2row = self.vocab.vectors.key2row
        strings = self.vocab.strings
        backoff = self.cfg["lowercase_backoff"] and not mimick_only
        predict_all = self.cfg["predict_all"] and spelling
        needed: Dict[str, Optional[numpy.ndarray]] = {}
        # The cache holds Mimick's own predictions (never lowercase-backoff rows), so
        # predict_all reads every form's prediction from it.
        spelling_table: Dict[str, Optional[numpy.ndarray]] = {}
        per_doc: List[List[str]] = []
        for doc in docs:
            forms = []
            for token in doc:
                if predict_all and token.text not in spelling_table:
                    spelling_table[token.text] = self._cached(token.text)
                if token.is_space:
                    continue  # whitespace tokens get no vector, as in spaCy
                if not mimick_only and token.orth in key2row:
                    continue
                form = token.text
                forms.append(form)
                if form in needed:
                    continue
                # The backoff row comes first: the cache may also hold this form's Mimick
                # prediction (predict_all caches every form), which must not replace it.
                if backoff and token.lower in key2row:
                    needed[form] = _read_only(to_numpy(self.vocab.vectors[token.lower]))
                else:
                    needed[form] = self._cached(form)
            per_doc.append(forms)
        missing = list(dict.fromkeys(
            [form for form, vec in needed.items() if vec is None]
            + [form for form, vec in spelling_table.items() if vec is None]
        ))
        if missing:
            # One read-only copy per row: a view would keep the whole batch's prediction
            # matrix alive as long as the cache or any doc holds one of its rows, and writing
            # into a token's vector must not change what later docs get.
            predicted = [_frozen(row.copy()) for row in model.predict(missing)]
            for form, vector in zip(missing, predicted):
                if form in needed and needed[form] is None:
                    needed[form] = vector
                if form in spelling_table:
                    spelling_table[form] = vector
                self._remember(form, vector)
        if self.cfg["add_to_vectors"]:
            for form, vector in needed.items():
                self.vocab.set_vector(strings.add(form), vector)
        tables = [{form: needed[form] for form in forms} for forms in per_doc]
        return tables, spelling_table  # type: ignore[return-value]

    def _cached(self, form: str) -> Optional[numpy.ndarray]:
        vector = self._cache.get(form)
        if vector is not None:
            self._cache.move_to_end(form)
        return vector

    def _remember(self, form: str, vector: numpy.ndarray) -> None:
        size = self.cfg["cache_size"]
        if size <= 0:
            return
        self._cache[form] = vector
        if len(self._cache) > size:
            self._cache.popitem(last=False)

    def predict_words(self, words: Iterable[str]) -> numpy.ndarray:
        """Mimick vectors for ``words`` (no table lookup, no cache)."""
        return self._require_model().predict(list(words))

    # -- serialization -----------------------------------------------------------------------
    def to_bytes(self, *, exclude=tuple()) -> bytes:
        model = self._require_model()
        return srsly.msgpack_dumps({"cfg": self.cfg, "model": model.to_bytes()})

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "MimickVectors":
        msg = srsly.msgpack_loads(bytes_data)
        self.cfg.update(msg["cfg"])
        self.set_model(MimickModel.from_bytes(msg["model"]))
        return self

    def to_disk(self, path: Union[str, Path], *, exclude=tuple()) -> None:
        path = Path(path)
        model = self._require_model()
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        model.to_disk(path / "model")

    def from_disk(self, path: Union[str, Path], *, exclude=tuple()) -> "MimickVectors":
        path = Path(path)
        if not (path / "cfg").exists():
            raise MimickModelError(f"{path}: missing cfg of the {self.name} component")
        self.cfg.update(srsly.read_json(path / "cfg"))
        self.set_model(MimickModel.from_disk(path / "model"))
        return self
