"""``spacy_mimick.MimickStaticVectors.v1``: spaCy's ``StaticVectors`` with Mimick vectors for OOV
tokens, so that spaCy's own tok2vec, tagger, morphologizer, parser and NER see them.

spaCy's ``StaticVectors`` (spacy/ml/staticvectors.py) looks every token up in
``vocab.vectors`` and gives a zero vector to tokens without a row. This layer has the same
signature (``nO, nM, dropout, init_W, key_attr``), the same single parameter (the projection
``W``, shape ``(nO, nM)``) and the same output; only the input rows of OOV tokens differ:

1. the table row, when the token has one (exactly as ``StaticVectors``);
2. else the vector ``mimick_vectors`` stored in ``doc.user_data["spacy_mimick.oov_vectors"]``
   (Mimick's prediction, or the row of the lowercase form with ``lowercase_backoff``): what
   ``token.vector`` gives, read without the doc's hooks;
3. else, for docs that did not pass through the component (``nlp.initialize``'s sample docs,
   training without ``[training] annotating_components``, a tok2vec called directly), the same
   vectors computed by the ``mimick_vectors`` component of the docs' pipeline, without changing
   the docs (see ``pipeline_links``);
4. else zeros, as ``StaticVectors``, with a ``MimickLayerWarning`` (once): the pipeline has no
   ``mimick_vectors`` component with a model.

The Mimick model lives in the component only: the layer stores nothing but ``W``. The shared
vectors table is never grown. Because the weights are those of ``StaticVectors``, a trained
pipeline's ``StaticVectors`` can be replaced by this layer with its ``W``: in-vocabulary inputs
are unchanged (``python -m spacy_mimick add`` does this through the config).

The embedding architectures below are spaCy's with this layer in place of ``StaticVectors``,
built by spaCy's own functions so that their structure (and therefore saved weights) is
identical: one line of a config changes.
"""
import warnings
from typing import Callable, Dict, List, Optional, Tuple, Union, cast

import numpy
from spacy.attrs import ORTH
from spacy.ml import staticvectors as spacy_static_vectors
from spacy.ml.models.tok2vec import CharacterEmbed, MultiHashEmbed, build_hash_embed_cnn_tok2vec
from spacy.tokens import Doc
from spacy.util import registry
from spacy.vectors import Mode, Vectors
from thinc.api import Model
from thinc.initializers import glorot_uniform_init
from thinc.types import Floats2d, Ragged
from thinc.util import partial

from .pipeline_links import MimickLayerWarning, component_for
from .token_vectors import MIMICK_WIDTH_KEY, OOV_VECTORS_KEY, is_mimick_only, to_numpy

LAYER_NAME = "mimick_static_vectors"


@registry.architectures("spacy_mimick.MimickStaticVectors.v1")
def MimickStaticVectors(
    nO: Optional[int] = None,
    nM: Optional[int] = None,
    *,
    dropout: Optional[float] = None,
    init_W: Callable = glorot_uniform_init,
    key_attr: str = "ORTH",
) -> Model[List[Doc], Ragged]:
    """Embed docs with their vocab's vectors, Mimick's vectors for OOV tokens, through a learned
    projection ``W`` (nO x nM). Same signature and weights as ``spacy.StaticVectors.v2``;
    ``key_attr`` is ignored there too (the table's own ``attr`` is used)."""
    return Model(
        LAYER_NAME,
        forward,
        init=partial(init, init_W),
        params={"W": None},
        attrs={"key_attr": key_attr, "dropout_rate": dropout},
        dims={"nO": nO, "nM": nM},
    )


def is_mimick_static_vectors(node: Model) -> bool:
    return node._func is forward


def is_spacy_static_vectors(node: Model) -> bool:
    return node._func is spacy_static_vectors.forward


def replace_static_vectors(model: Model) -> int:
    """Replace every spaCy ``StaticVectors`` node of ``model`` by ``MimickStaticVectors`` with the
    same dims, dropout and (if initialized) ``W``; returns the number replaced."""
    old_nodes = [node for node in model.walk() if is_spacy_static_vectors(node)]
    for old in old_nodes:
        new = MimickStaticVectors(
            old.maybe_get_dim("nO"), old.maybe_get_dim("nM"),
            dropout=old.attrs.get("dropout_rate"), key_attr=old.attrs.get("key_attr", "ORTH"),
        )
        if old.has_param("W"):
            new.set_param("W", old.get_param("W").copy())
        model.replace_node(old, new)
    return len(old_nodes)


def _with_mimick_vectors(model: Model) -> Model:
    replace_static_vectors(model)
    return model


@registry.architectures("spacy_mimick.MultiHashEmbed.v1")
def mimick_multi_hash_embed(
    width: int, attrs: List[Union[str, int]], rows: List[int], include_static_vectors: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy.MultiHashEmbed.v2`` with ``MimickStaticVectors`` in place of ``StaticVectors``."""
    return _with_mimick_vectors(MultiHashEmbed(width, attrs, rows, include_static_vectors))


@registry.architectures("spacy_mimick.CharacterEmbed.v1")
def mimick_character_embed(
    width: int, rows: int, nM: int, nC: int, include_static_vectors: bool = True,
    feature: Union[int, str] = "LOWER",
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy.CharacterEmbed.v2`` with ``MimickStaticVectors`` in place of ``StaticVectors``."""
    return _with_mimick_vectors(CharacterEmbed(width, rows, nM, nC, include_static_vectors, feature))


@registry.architectures("spacy_mimick.HashEmbedCNN.v1")
def mimick_hash_embed_cnn(
    width: int, depth: int, embed_size: int, window_size: int, maxout_pieces: int,
    subword_features: bool, pretrained_vectors: Optional[bool],
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy.HashEmbedCNN.v2`` with ``MimickStaticVectors`` in place of ``StaticVectors``."""
    return _with_mimick_vectors(build_hash_embed_cnn_tok2vec(
        width=width, depth=depth, embed_size=embed_size, window_size=window_size,
        maxout_pieces=maxout_pieces, subword_features=subword_features,
        pretrained_vectors=pretrained_vectors,
    ))


# -- forward -----------------------------------------------------------------------------------
def _doc_tables(docs: List[Doc]) -> List[Optional[Dict[str, numpy.ndarray]]]:
    """Each doc's Mimick table; docs without one get the component's (not stored on the doc)."""
    tables: List[Optional[Dict[str, numpy.ndarray]]] = [doc.user_data.get(OOV_VECTORS_KEY) for doc in docs]
    bare = [i for i, table in enumerate(tables) if table is None]
    if bare:
        component = component_for(docs[0].vocab)
        if component is not None:
            for i, table in zip(bare, component.oov_tables([docs[i] for i in bare])):
                tables[i] = table
    return tables


def _mimick_only(docs: List[Doc]) -> bool:
    if any(is_mimick_only(doc) for doc in docs):
        return True
    component = component_for(docs[0].vocab)
    return component is not None and bool(component.cfg.get("mimick_only"))


def input_vectors(docs: List[Doc], nM: int, xp=numpy) -> Tuple[numpy.ndarray, int]:
    """The (n_tokens, nM) input rows of ``docs`` (before the projection) and how many OOV
    tokens got zeros because no Mimick vector was available."""
    vocab = docs[0].vocab
    vectors = vocab.vectors
    n = sum(len(doc) for doc in docs)
    if isinstance(vectors, Vectors) and vectors.mode == Mode.floret:
        keys = numpy.concatenate([doc.to_array(vectors.attr) for doc in docs])
        return xp.ascontiguousarray(vectors.get_batch(keys)), 0
    if not isinstance(vectors, Vectors):
        raise RuntimeError(
            f"{LAYER_NAME}: vocab.vectors is a {type(vectors).__name__}, not spaCy's Vectors; "
            f"this layer reads default-mode spaCy tables only")
    mimick_only = _mimick_only(docs)
    if mimick_only or not vectors.shape[0]:
        rows = numpy.full((n,), -1, dtype="int64")
        V = xp.zeros((n, nM), dtype="float32")
    else:
        keys = numpy.concatenate([doc.to_array(vectors.attr) for doc in docs]).astype("uint64")
        rows = to_numpy(vectors.find(keys=keys))
        if vectors.shape[1] != nM:
            raise ValueError(
                f"{LAYER_NAME}: the vectors table is {vectors.shape[1]}-d, the layer expects "
                f"nM={nM}")
        V = xp.asarray(vectors.data)[xp.asarray(rows)]
    missing = numpy.flatnonzero(rows < 0)
    if not missing.size:
        return V, 0
    V[xp.asarray(missing)] = 0
    tables = _doc_tables(docs)
    found_at: List[int] = []
    found: List[numpy.ndarray] = []
    unserved = 0
    starts = numpy.cumsum([0] + [len(doc) for doc in docs])
    doc_of = numpy.searchsorted(starts, missing, side="right") - 1
    for i, d in zip(missing.tolist(), doc_of.tolist()):
        token = docs[d][i - starts[d]]
        table = tables[d]
        vector = table.get(token.text) if table is not None else None
        if vector is not None:
            found_at.append(i)
            found.append(vector)
        elif table is None and not token.is_space:
            unserved += 1
    if found:
        block = numpy.stack(found).astype("float32", copy=False)
        if block.shape[1] != nM:
            raise ValueError(
                f"{LAYER_NAME}: the docs' Mimick vectors are {block.shape[1]}-d but the layer "
                f"expects nM={nM}: the Mimick model was trained on other vectors than the "
                f"pipeline's")
        V[xp.asarray(found_at)] = xp.asarray(block)
    return V, unserved


def forward(model: Model[List[Doc], Ragged], docs: List[Doc], is_train: bool) -> Tuple[Ragged, Callable]:
    nO = model.get_dim("nO")
    if not sum(len(doc) for doc in docs):
        return Ragged(model.ops.alloc2f(0, nO), model.ops.alloc1i(0)), lambda d: []
    W = cast(Floats2d, model.ops.as_contig(model.get_param("W")))
    V, unserved = input_vectors(docs, model.get_dim("nM"), xp=model.ops.xp)
    if unserved:
        warnings.warn(
            f"{LAYER_NAME}: {unserved} OOV tokens got zero vectors: the docs carry no Mimick "
            f"vectors and the pipeline has no mimick_vectors component with a model. Add "
            f"mimick_vectors before the tok2vec (nlp.add_pipe('mimick_vectors', first=True) "
            f"and initialize it with model_path), or use spaCy's StaticVectors.",
            MimickLayerWarning,
            stacklevel=2,
        )
    V = model.ops.as_contig(V)
    output = Ragged(model.ops.gemm(V, W, trans2=True), model.ops.asarray1i([len(doc) for doc in docs]))
    mask = None
    if is_train:
        rate = model.attrs.get("dropout_rate")
        if rate is not None:
            mask = model.ops.get_dropout_mask((W.shape[0],), rate)
            output.data *= mask

    def backprop(d_output: Ragged) -> List[Doc]:
        if mask is not None:
            d_output.data *= mask
        model.inc_grad("W", model.ops.gemm(cast(Floats2d, d_output.data), V, trans1=True))
        return []

    return output, backprop


def init(init_W: Callable, model: Model, X: Optional[List[Doc]] = None, Y: Optional[Ragged] = None) -> Model:
    nM = model.maybe_get_dim("nM")
    nO = model.maybe_get_dim("nO")
    if X is not None and len(X):
        vocab = X[0].vocab
        if vocab.vectors.shape[0] and not _mimick_only(X):
            nM = vocab.vectors.shape[1]
        else:  # no table (or Mimick-only): Mimick's width
            component = component_for(vocab)
            width = X[0].user_data.get(MIMICK_WIDTH_KEY)
            if width is None and component is not None:
                width = component.model.width
            nM = width if width is not None else nM
    if Y is not None:
        nO = Y.data.shape[1]
    if nM is None:
        raise ValueError(
            f"{LAYER_NAME}: cannot infer nM, the input width: the pipeline has no vectors and no "
            f"mimick_vectors component with a model (initialize it before the tok2vec)")
    if nO is None:
        raise ValueError(f"{LAYER_NAME}: cannot infer nO, the output width")
    model.set_dim("nM", nM)
    model.set_dim("nO", nO)
    model.set_param("W", init_W(model.ops, (nO, nM)))
    return model
