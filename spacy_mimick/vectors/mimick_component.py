"""The ``mimick_vectors`` pipeline component: Mimick vectors for tokens the static table lacks.

The vectors themselves are ``spacy_mimick.MimickVectors`` (``mimick_vectors.py``), a spaCy
vectors class: the component installs it on the pipeline's vocab around the existing table when
it is created (so also when a saved pipeline is loaded), gives it the Mimick model at
``initialize(model_path=...)``, and from then on spaCy itself serves every vector: ``token.vector``,
``has_vector``, ``similarity``, the ``Doc``/``Span`` vectors, spaCy's ``StaticVectors`` in tok2vec,
tagger, parser and NER, and ``mimick_tagger``. Nothing is stored on the docs, so ``DocBin``,
``Doc.to_bytes`` and ``nlp.pipe(n_process=N)`` keep the vectors. The Mimick model is saved with the
vocab (``vocab/mimick``).

What the component itself does with each batch of docs: it predicts, in one batch, the forms that
need Mimick (``warm``: later lookups hit the cache), and writes them into the table with
``add_to_vectors``. Settings:

- ``lowercase_backoff``, ``cache_size``, ``mimick_only``, ``n_threads``, ``spelling_backoff``,
  ``spelling_weight``, ``spelling_max_rows``: the vectors' (see ``mimick_vectors.py``).
- ``predict_all``: warm the cache with Mimick's prediction for every form, in-table ones too: the
  spelling input of ``MimickTagger.v3``'s ``mimick_features``, which reads it from the vectors.
- ``add_to_vectors``: predicted rows are also written into the table, so they are saved with the
  pipeline's vectors. Off by default: it grows the shared table with every new word seen.
- ``refine_rare`` (a share of the table, e.g. 0.5): the vectors of the table's rarest rows (the
  last ones: word2vec, GloVe, fastText and spaCy tables are in frequency order) are replaced at
  ``initialize()`` by the mean of the unit table vector and the unit Mimick prediction, scaled to
  the row's norm. Vectors of rare words are trained on few contexts; their spelling adds
  information (docs/oov_vectors.md: Stanford Rare Word 34 -> 36 with half the GloVe table,
  SimLex-999/MEN/WS-353, whose words are frequent, unchanged). The table is changed in place, so
  the pipeline saves the refined vectors.

floret vectors (``vectors.mode == "floret"``) already give every string a vector from its
subwords, so there is nothing to predict: the component then leaves the vocab as it is (unless
``mimick_only``).
"""
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Union
import warnings

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.util import minibatch
from spacy.vectors import Mode
from spacy.vocab import Vocab

from .mimick_model import MimickModel, MimickModelError
from .mimick_vectors import MIMICK, MimickVectors, install, table_of
from .spelling import DEFAULT_TYPO_MARGIN
from ..threads import AUTO


@Language.factory(
    "mimick_vectors",
    default_config={
        "lowercase_backoff": True, "cache_size": 100_000, "add_to_vectors": False,
        "batch_size": 1000, "refine_rare": 0.0, "predict_all": False, "mimick_only": False,
        "n_threads": AUTO, "spelling_backoff": True, "spelling_weight": 0.5, "spelling_max_rows": 0,
        "spelling_typo_margin": DEFAULT_TYPO_MARGIN, "spaced_from_parts": True,
    },
)
def make_mimick_vectors(
    nlp: Language, name: str, lowercase_backoff: bool, cache_size: int,
    add_to_vectors: bool, batch_size: int, refine_rare: float = 0.0, predict_all: bool = False,
    mimick_only: bool = False, n_threads: int = AUTO, spelling_backoff: bool = True,
    spelling_weight: float = 0.5, spelling_max_rows: int = 0,
    spelling_typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN, spaced_from_parts: bool = True,
) -> "MimickVectorsComponent":
    """Create the component; the trained Mimick model is loaded in ``initialize(model_path=...)``.

    predict_all (bool): Also predict, per batch, Mimick's vector of every token that has a
        pretrained one (the input of ``MimickTagger.v3``'s ``mimick_features``, which the
        vectors would otherwise predict when the tagger asks). Token vectors are unchanged.
    mimick_only (bool): Give every token Mimick's vector and ignore the pipeline's vectors
        table (none, or one in another space or width); whitespace tokens get none.
    n_threads (int): torch CPU threads for Mimick's predictions, the caller's setting restored
        after each batch: -1 (the default) ``OMP_NUM_THREADS`` where set, else the cores other
        processes leave free, measured at run time (``spacy_mimick/threads.py``); N threads; 0 torch's own setting (docs/speed.md).
    spelling_backoff (bool): A token the table lacks that is one edit from table words gets the
        most frequent one's vector blended with Mimick's, ``spelling_weight`` of the table
        word's (candidates among the first ``spelling_max_rows`` rows; 0: all), when it looks
        like a misspelling of it: at least ``spelling_typo_margin`` nats per character less
        likely under a character model of the table's words (null: any candidate). On by
        default: it recovers most one-edit misspellings and, gated, leaves real rare words
        their Mimick vector (docs/oov_vectors.md, "The typo gate").
    spaced_from_parts (bool): A token with white space inside that the table lacks (Vietnamese
        syllable groups, French ``1 000``, an entity that ``merge_entities`` joined) gets the
        mean of its parts' vectors, as spaCy's ``Span.vector`` is the mean of its tokens':
        Mimick models learned from whitespace tokens never saw a space (docs/low_resource.md,
        Vietnamese). Pipelines saved before this setting existed get it on when loaded.
    """
    return MimickVectorsComponent(
        nlp.vocab, name, lowercase_backoff=lowercase_backoff, cache_size=cache_size,
        add_to_vectors=add_to_vectors, batch_size=batch_size, refine_rare=refine_rare,
        predict_all=predict_all, mimick_only=mimick_only, n_threads=n_threads,
        spelling_backoff=spelling_backoff, spelling_weight=spelling_weight, spelling_max_rows=spelling_max_rows,
        spelling_typo_margin=spelling_typo_margin, spaced_from_parts=spaced_from_parts,
    )


# The component's settings that are its MimickVectors' (kept in sync by ``vectors``).
VECTORS_SETTINGS = ("lowercase_backoff", "cache_size", "mimick_only", "n_threads", "spelling_backoff",
                    "spelling_weight", "spelling_max_rows", "spelling_typo_margin", "spaced_from_parts")
# Settings of how the component runs, not of what initialize() did: a loaded pipeline takes them
# from its config (see MimickVectorsComponent._load_cfg).
RUNTIME_SETTINGS = VECTORS_SETTINGS + ("batch_size", "predict_all", "add_to_vectors")


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
    vectors = table_of(vocab.vectors)
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


class MimickVectorsComponent(Pipe):
    def __init__(
        self, vocab: Vocab, name: str = "mimick_vectors", *, lowercase_backoff: bool = True,
        cache_size: int = 100_000, add_to_vectors: bool = False, batch_size: int = 1000,
        refine_rare: float = 0.0, predict_all: bool = False, model: Optional[MimickModel] = None,
        mimick_only: bool = False, n_threads: int = AUTO, spelling_backoff: bool = True,
        spelling_weight: float = 0.5, spelling_max_rows: int = 0,
        spelling_typo_margin: Optional[float] = DEFAULT_TYPO_MARGIN, spaced_from_parts: bool = True,
    ):
        if not 0 <= refine_rare < 1:
            raise ValueError(f"[{name}] refine_rare is a share of the table's rows in [0, 1), got {refine_rare}")
        if mimick_only and (add_to_vectors or refine_rare):
            raise ValueError(
                f"[{name}] mimick_only ignores the vectors table, so it cannot be combined with "
                f"add_to_vectors or refine_rare, which write Mimick's vectors into it")
        self.vocab = vocab
        self.name = name
        self.cfg = {
            "lowercase_backoff": lowercase_backoff, "cache_size": cache_size,
            "add_to_vectors": add_to_vectors, "batch_size": batch_size, "refine_rare": refine_rare,
            "predict_all": predict_all, "mimick_only": mimick_only, "n_threads": n_threads,
            "spelling_backoff": spelling_backoff, "spelling_weight": spelling_weight,
            "spelling_max_rows": spelling_max_rows, "spelling_typo_margin": spelling_typo_margin,
            "spaced_from_parts": spaced_from_parts,
        }
        self._model: Optional[MimickModel] = None  # kept to reinstall the vectors (see ``vectors``)
        self.vectors
        if model is not None:
            self.set_model(model)

    @property
    def vectors(self) -> MimickVectors:
        """The vocab's ``MimickVectors`` with this component's settings, installed around the
        vocab's table if something replaced it (``nlp.vocab.vectors = Vectors(...)``)."""
        vectors = self.vocab.vectors
        settings = {k: self.cfg[k] for k in VECTORS_SETTINGS}
        if not isinstance(vectors, MimickVectors):
            vectors = install(self.vocab, **settings)
            if self._model is not None:
                vectors.set_model(self._model)
        elif any(getattr(vectors, k) != v for k, v in settings.items()):
            install(self.vocab, **settings)
        return vectors

    @property
    def model(self) -> Optional[MimickModel]:
        return self.vectors.model

    # -- set-up ------------------------------------------------------------------------------
    def initialize(
        self, get_examples: Optional[Callable] = None, *, nlp: Optional[Language] = None,
        model_path: Optional[Union[str, Path]] = None,
    ) -> None:
        """Load the trained Mimick model from ``model_path`` (a ``spacy_mimick train`` output).

        In a training config: ``[initialize.components.mimick_vectors] model_path = ...``.
        """
        if model_path is not None:
            self.set_model(MimickModel.from_disk(model_path))
        elif self.model is None:
            # A config error (a ValueError): `spacy train` prints it without a traceback.
            from confection import ConfigValidationError

            raise ConfigValidationError(
                title=f"[{self.name}] has no Mimick model: set --paths.mimick_model DIR on the spacy "
                      f"train command line, or [initialize.components.{self.name}] model_path in the config",
                desc=f"DIR: the directory of a trained Mimick model (python -m spacy_mimick train "
                     f"VECTORS OUTPUT_DIR). In Python: nlp.initialize() with that model_path in "
                     f"nlp.config, or {self.name}.initialize(model_path=DIR).",
                errors=[{"loc": ["initialize", "components", self.name, "model_path"],
                         "msg": "field required (the directory of a trained Mimick model)"}],
                show_config=False)
        else:
            self.set_model(self.model)  # a table loaded since (init vectors) must match its width
        if table_of(self.vocab.vectors).mode == Mode.floret and not self.cfg.get("mimick_only"):
            warnings.warn(
                f"[{self.name}] the pipeline has floret vectors, which cover every word: "
                f"mimick_vectors will leave docs unchanged."
            )
        elif self.cfg.get("refine_rare", 0.0) > 0 and not self._table_is_refined():
            self.cfg["refined_rows"] = refine_rare_rows(self.vocab, self._require_model(), self.cfg["refine_rare"])
            self.cfg["refined_checksum"] = self._rare_rows_checksum()
            self.vectors.clear_cache()

    def _rare_rows_checksum(self) -> float:
        data = numpy.asarray(table_of(self.vocab.vectors).data)
        first = first_rare_row(data.shape[0], self.cfg["refine_rare"])
        return float(numpy.abs(data[first:]).sum(dtype="float64"))

    def _table_is_refined(self) -> bool:
        """Whether the rare rows are those this component refined (then a second initialize,
        e.g. of a loaded pipeline, must not blend them again); a freshly loaded table is not."""
        checksum = self.cfg.get("refined_checksum")
        return checksum is not None and abs(self._rare_rows_checksum() - checksum) <= 1e-6 * max(checksum, 1.0)

    def set_model(self, model: MimickModel) -> None:
        table = table_of(self.vocab.vectors)
        # Mimick-only never mixes the two, so any table width is fine.
        if (not self.cfg.get("mimick_only") and table.shape[0] and table.mode != Mode.floret
                and table.shape[1] != model.width):
            raise ValueError(
                f"[{self.name}] the Mimick model predicts {model.width}-dimensional vectors but "
                f"the pipeline's vectors are {table.shape[1]}-dimensional: train Mimick on the same vectors"
            )
        self._model = model
        self.vectors.set_model(model)

    def _require_model(self) -> MimickModel:
        model = self.model
        if model is None:
            raise ValueError(
                f"[{self.name}] no Mimick model: call nlp.initialize() with "
                f"[initialize.components.{self.name}] model_path set, or load a saved pipeline"
            )
        return model

    # -- prediction --------------------------------------------------------------------------
    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc], batch_size=1))

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        for docs in minibatch(stream, size=batch_size or self.cfg["batch_size"]):
            yield from self._annotate(docs)

    def _annotate(self, docs: List[Doc]) -> List[Doc]:
        vectors = self.vectors
        if table_of(vectors).mode == Mode.floret and not vectors.mimick_only:
            return docs
        self._require_model()
        forms = list(dict.fromkeys(token.text for doc in docs for token in doc))
        if self.cfg["predict_all"]:
            vectors.predict([form for form in forms if form.strip()])
        vectors.warm(forms)
        if self.cfg["add_to_vectors"]:
            keys = [self.vocab.strings.add(form) for form in forms]
            table = vectors.table
            for key, source in zip(keys, vectors.sources(keys)):
                if source == MIMICK:  # as Vocab.set_vector, which would find every key present
                    vector = vectors[key]
                    if table.is_full:
                        table.resize((max(100, int(table.shape[0] * 1.3)), table.shape[1]))
                    self.vocab[key].rank = table.add(key, vector=vector)
        return docs

    def predict_words(self, words: Iterable[str]) -> numpy.ndarray:
        """Mimick vectors for ``words`` (no table lookup, no cache)."""
        return self._require_model().predict(list(words))

    # -- serialization: the settings; the Mimick model is saved with the vocab ----------------
    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.msgpack_dumps({"cfg": self.cfg})

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "MimickVectorsComponent":
        msg = srsly.msgpack_loads(bytes_data)
        self._load_cfg(msg["cfg"])
        if msg.get("model") is not None:  # saved by spacy-mimick 0.1's component
            self.set_model(MimickModel.from_bytes(msg["model"]))
        return self

    def to_disk(self, path: Union[str, Path], *, exclude=tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)

    def from_disk(self, path: Union[str, Path], *, exclude=tuple()) -> "MimickVectorsComponent":
        path = Path(path)
        if not (path / "cfg").exists():
            raise MimickModelError(f"{path}: missing cfg of the {self.name} component")
        self._load_cfg(srsly.read_json(path / "cfg"))
        if (path / "model").exists():  # saved by spacy-mimick 0.1's component
            self.set_model(MimickModel.from_disk(path / "model"))
        return self

    def _load_cfg(self, cfg: Dict) -> None:
        """The saved cfg, except for the run-time settings: those the component was made with
        win (``config.cfg`` and its overrides, e.g. ``spacy.load(..., config={"components":
        {"mimick_vectors": {"spelling_backoff": True}}})``), as spaCy's config does for every
        factory setting (until now the saved cfg silently undid such an override). The saved cfg
        still gives what ``initialize`` recorded (the refined rows)."""
        given = {k: self.cfg[k] for k in RUNTIME_SETTINGS}
        self.cfg.update(cfg)
        self.cfg.update(given)
        self.vectors
