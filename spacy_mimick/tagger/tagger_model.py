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
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import spacy
import torch
from spacy.attrs import IDS as SPACY_ATTRS
from spacy.tokens import Doc, Token
from spacy.vectors import Mode, Vectors
from thinc.api import ArgsKwargs, Model, NumpyOps, PyTorchWrapper_v2, chain
from thinc.types import Floats1d, Floats2d

from .pytorch_tagger_model import MimickTaggerNet
from ..vectors.mimick_vectors import (
    LOWERCASE, NONE, MimickVectors, is_mimick_only, table_of, table_rows, to_numpy, vectors_and_sources,
)

# Case classes of MimickTagger.v2's case_features (see word_shape).
WORD_SHAPES = ("lower", "Title", "UPPER", "miXed", "digits", "other")

# Where a token's vector came from (MimickTagger.v5's vector_sources): a row of the static
# table (its form or, by lowercase backoff, its lowercase form), Mimick's prediction, or none
# (the UNK vector).
VECTOR_SOURCES = ("table", "mimick", "none")

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
    hash_ids: numpy.ndarray  # (n_tokens, n_hash_attrs, 4) int64 hashed keys, before the modulo (MimickTagger.v4)
    sources: numpy.ndarray  # (n_tokens,) int64 index into VECTOR_SOURCES, or (0,) when unused (MimickTagger.v5)


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


@spacy.registry.architectures("spacy_mimick.MimickTagger.v2")
def build_mimick_tagger_v2(
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
) -> Model[List[Doc], List[Floats2d]]:
    """``MimickTagger.v1`` plus two inputs that the paper's tagger lacks.

    case_features (bool): Give the BiLSTM each token's case class (lowercase, Title, UPPER,
        mixed, digits, other; a one-hot of ``WORD_SHAPES``). Lowercased tables (GloVe) and the
        lowercase backoff map "Apple" and "apple", "US" and "us" to the same vector, so
        without it a token unseen in training keeps no trace of its capitalisation.
    word_dropout (float): In training, the probability that a token's fine-tuned delta is
        dropped (its word id set to unseen), so that the tagger also learns to tag from the
        static vector alone, which is all that words unseen in training have at test time.

    The other settings are v1's; ``hidden_width`` defaults to 256 (128 per direction).
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=False,
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
    """``MimickTagger.v2`` plus Mimick's prediction for *every* token as a second input.

    mimick_features (bool): Beside each token's word vector, give the BiLSTM the vector that
        the (frozen) Mimick model predicts from the token's spelling, for in-vocabulary
        tokens too. In the paper's Mimick variant a word with a pretrained vector shows the
        tagger nothing of its spelling; this input carries the spelling information that
        Mimick learned from the whole embedding vocabulary (suffixes, capitalisation-free
        shape), without a character model trained on the tagging data. It needs the
        pipeline's vectors to be ``MimickVectors`` with a model (a ``mimick_vectors``
        component, or ``[nlp.vectors]``), which predict it, and static vectors (Mimick
        predicts their width). With ``mimick_features = false`` this is ``MimickTagger.v2``.

    The other settings are v2's.
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=mimick_features,
    )


@spacy.registry.architectures("spacy_mimick.MimickTagger.v4")
def build_mimick_tagger_v4(
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
    hash_attrs: Sequence[str] = ("NORM", "PREFIX", "SUFFIX", "SHAPE"),
    hash_rows: Sequence[int] = (5000, 1000, 2500, 2500),
    hash_width: int = 32,
) -> Model[List[Doc], List[Floats2d]]:
    """``MimickTagger.v3`` plus spaCy's subword hash embeddings as a further input.

    hash_attrs (list of str): Lexical attributes embedded the way spaCy's own tok2vec
        (``spacy.MultiHashEmbed.v2``) embeds them: each value (spaCy's 64-bit string hash) is
        hashed four times into a table of ``hash_rows`` rows and the four rows summed, so a
        fixed-size table covers any vocabulary, unseen words included. spaCy's defaults:
        NORM (the lowercase form), PREFIX (the first character), SUFFIX (the last three),
        SHAPE ("Xxxx", "dd"). An empty list turns them off, and is ``MimickTagger.v3``.
    hash_rows (list of int): Rows of each attribute's table (spaCy's 5000, 1000, 2500, 2500).
    hash_width (int): Width of each attribute's embedding; the BiLSTM reads them side by side.

    The other settings are v3's, with the defaults of the ``lowres`` recipe (dropout 0.2,
    char->tag's BiLSTM on: char_embed 20).
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=mimick_features, hash_attrs=hash_attrs,
        hash_rows=hash_rows, hash_width=hash_width,
    )


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
    vector_sources: bool = False,
    mimick_dropout: float = 0.0,
    vector_scale: float = 1.0,
) -> Model[List[Doc], List[Floats2d]]:
    """``MimickTagger.v3`` with three settings for the static vectors, each off by default
    (then this is v3 with the ``lowres`` recipe's dropout and char->tag defaults).

    vector_sources (bool): Give the BiLSTM a one-hot of where the token's vector came from:
        a row of the static table, Mimick's prediction, or none (``VECTOR_SOURCES``). A table
        holds a language's most frequent words, so a word outside it is a rare word, most
        often a name or a content word, never a function word. Without a character model the
        tagger sees that in the UNK vector (No-Char, char->tag), but Mimick's prediction
        looks like the vector of a frequent word of similar spelling ("Bucher" lands among
        verbs in "-cher"), and the tagger loses the cue; this gives it back.
    mimick_dropout (float): In training, the probability that a token whose vector comes from
        the static table is shown as an out-of-vocabulary word instead: Mimick's prediction
        for its form in place of the table's row, and no fine-tuned delta (its word id set to
        unseen, as ``word_dropout`` does). At test time Mimick's vectors are the input of every
        word the table lacks, the words a tagger errs on most; in a few thousand training
        tokens almost every word has a table row, so without this the tagger learns to read
        the table's vectors and meets Mimick's, which are smoother and lie elsewhere in the
        space, only on its test words. It needs ``MimickVectors`` with a model (their
        predictions for in-vocabulary forms) and a static table; tokens with no table row are not touched.
    vector_scale (float): Multiply every static vector (table rows, Mimick's predictions, UNK,
        and Mimick's spelling input) by this before the BiLSTM. Tables differ in scale (median
        row norm 4.75 in GloVe 6B 50d, 25.8 in the project's French rows of fr_core_news_md),
        and with it in how far the first LSTM layer's inputs saturate it, against the char->tag
        and case inputs of fixed scale, and how far an Adam step of the fine-tuned deltas moves
        a vector.

    The other settings are v3's, with the defaults of the ``lowres`` recipe (dropout 0.2,
    char->tag's BiLSTM on: char_embed 20). docs/low_resource.md measures the three settings
    (section "Scaled vectors, and three ideas that did not help (French, 10,000 tokens)").
    """
    return _build_mimick_tagger(
        hidden_width=hidden_width, depth=depth, dropout=dropout, fine_tune=fine_tune,
        lowercase_backoff=lowercase_backoff, unk_key=unk_key, word_width=word_width,
        char_embed=char_embed, char_hidden=char_hidden, case_features=case_features,
        word_dropout=word_dropout, mimick_features=mimick_features, mimick_dropout=mimick_dropout,
        vector_sources=vector_sources, vector_scale=vector_scale,
    )


def _build_mimick_tagger(
    *, hidden_width: int, depth: int, dropout: float, fine_tune: bool, lowercase_backoff: bool,
    unk_key: str, word_width: int, char_embed: int, char_hidden: int, case_features: bool,
    word_dropout: float, mimick_features: bool, hash_attrs: Sequence[str] = (),
    hash_rows: Sequence[int] = (), hash_width: int = 0, mimick_dropout: float = 0.0,
    vector_sources: bool = False, vector_scale: float = 1.0,
) -> Model[List[Doc], List[Floats2d]]:
    if not 0.0 <= word_dropout < 1.0:
        raise ValueError(f"word_dropout must be in [0, 1), got {word_dropout}")
    if not 0.0 <= mimick_dropout < 1.0:
        raise ValueError(f"mimick_dropout must be in [0, 1), got {mimick_dropout}")
    if not 0.0 < vector_scale < float("inf"):
        raise ValueError(f"vector_scale must be a positive number, got {vector_scale}")
    hash_attrs, hash_rows = _check_hash_features(hash_attrs, hash_rows, hash_width)
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
            "hash_attrs": hash_attrs,
            "mimick_dropout": mimick_dropout,
            "vector_sources": vector_sources,
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
            "hash_rows": hash_rows,
            "hash_width": hash_width if hash_attrs else 0,
            "vector_sources": vector_sources,
        },
    )
    model = chain(featurizer, net)
    model.set_ref("featurizer", featurizer)
    model.set_ref("net", net)
    return model


# Seeds of the hash functions, one per attribute, as spaCy's MultiHashEmbed numbers them (8, 9, ...).
HASH_SEED = 8


def _check_hash_features(
    hash_attrs: Sequence[str], hash_rows: Sequence[int], hash_width: int
) -> Tuple[List[str], List[int]]:
    attrs = [str(attr).upper() for attr in hash_attrs]
    rows = [int(n) for n in hash_rows]
    unknown = [attr for attr in attrs if attr not in SPACY_ATTRS]
    if unknown:
        raise ValueError(
            f"hash_attrs: {unknown} are not spaCy token attributes (expected names such as "
            "NORM, PREFIX, SUFFIX, SHAPE, LOWER, ORTH)"
        )
    if len(rows) != len(attrs):
        raise ValueError(
            f"hash_rows gives {len(rows)} table sizes for {len(attrs)} hash_attrs {attrs}; "
            "expected one size per attribute"
        )
    if any(n < 1 for n in rows):
        raise ValueError(f"hash_rows must be >= 1 each, got {rows}")
    if attrs and hash_width < 1:
        raise ValueError(f"hash_width must be >= 1 with hash_attrs {attrs}, got {hash_width}")
    return attrs, rows


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
    word_ids = numpy.fromiter((words.get(text, 0) for text in texts), dtype="int64", count=len(texts))
    if is_train and model.attrs["word_dropout"]:
        word_ids[numpy.random.random_sample(len(word_ids)) < model.attrs["word_dropout"]] = 0
    lengths = numpy.array([len(doc) for doc in docs], dtype="int64")
    width = model.get_dim("nV")
    # The sources (MimickTagger.v5): its vector_sources input, and the tokens mimick_dropout may drop.
    dropout = is_train and model.attrs["mimick_dropout"]
    with_sources = bool(model.attrs["vector_sources"] or dropout)
    if width:
        vectors, sources = _static_vectors(model, docs)
    else:
        vectors = numpy.zeros((len(texts), 0), dtype="float32")
        sources = numpy.full((len(texts),), VECTOR_SOURCES.index("none"), dtype="int64")
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
    if dropout:
        from_table = sources == VECTOR_SOURCES.index("table")
        if from_table.any():
            dropped = _mimick_dropout(model, docs, vectors, word_ids, from_table, spelling)
            sources[dropped] = VECTOR_SOURCES.index("mimick")
    scale = model.attrs["vector_scale"]
    if scale != 1.0:
        vectors *= scale
        spelling *= scale
    if not model.attrs["vector_sources"]:
        sources = numpy.zeros((0,), dtype="int64")
    inputs = TaggerInputs(
        lengths, vectors, word_ids, char_ids, char_lengths, token_words, shapes, spelling,
        hash_keys(docs, model.attrs["hash_attrs"]), sources,
    )
    return inputs, lambda d_inputs: []


_NUMPY_OPS = NumpyOps()


def hash_keys(docs: List[Doc], attrs: Sequence[str]) -> numpy.ndarray:
    """The four hashed keys of each token's attributes, as thinc's HashEmbed finds them
    (before the modulo by each table's size, which the network applies):
    (n_tokens, len(attrs), 4) int64."""
    n_tokens = sum(len(doc) for doc in docs)
    if not attrs or not n_tokens:
        return numpy.zeros((n_tokens, len(attrs), 4), dtype="int64")
    values = numpy.concatenate(
        [doc.to_array([SPACY_ATTRS[attr] for attr in attrs]).reshape(len(doc), len(attrs)) for doc in docs]
    ).astype("uint64")
    keys = [
        _NUMPY_OPS.hash(numpy.ascontiguousarray(values[:, i]), HASH_SEED + i) for i in range(len(attrs))
    ]
    return numpy.stack(keys, axis=1).astype("int64")


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


def _mimick_dropout(
    model: Model, docs: List[Doc], vectors: Floats2d, word_ids: numpy.ndarray,
    from_table: numpy.ndarray, spelling: Floats2d,
) -> numpy.ndarray:
    """MimickTagger.v5's ``mimick_dropout``, in place: a share of the tokens with a table row
    get Mimick's prediction for their form instead, and lose their fine-tuned delta. Returns
    the mask of those tokens."""
    dropped = from_table & (numpy.random.random_sample(len(from_table)) < model.attrs["mimick_dropout"])
    if not dropped.any():
        return dropped
    if not spelling.shape[1]:
        # mimick_features off: the predictions are not featurized yet.
        spelling = spelling_vectors(docs, [t.text for doc in docs for t in doc], vectors.shape[1])
    vectors[dropped] = spelling[dropped]
    word_ids[dropped] = 0
    return dropped


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


# MimickVectors' sources -> the featurizer's VECTOR_SOURCES (the lowercase form's row is a table row)
_SOURCE_INDEX = numpy.array([VECTOR_SOURCES.index(name) for name in ("table", "table", "mimick", "none")])


def _static_vectors(model: Model, docs: List[Doc]) -> Tuple[Floats2d, numpy.ndarray]:
    """The vocab's vectors (table, then Mimick's predictions), then the featurizer's own
    lowercase backoff, then UNK; and where each came from (indices into ``VECTOR_SOURCES``:
    only MimickTagger.v5's settings read them)."""
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
    return vectors, _SOURCE_INDEX[sources]


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
        hash_rows=attrs["hash_rows"],
        hash_width=attrs["hash_width"],
        n_sources=len(VECTOR_SOURCES) if attrs["vector_sources"] else 0,
    )
    wrapper = PyTorchWrapper_v2(net, convert_inputs=_convert_inputs, convert_outputs=_convert_outputs)
    model.layers[:] = [wrapper]


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
            X.shapes, X.spelling, X.hash_ids, X.sources,
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
