"""Names that configs saved by spacy-mimick 0.1 may hold, mapped to spaCy's own layers.

Pipelines saved then embed with ``spacy_mimick.MultiHashEmbed.v1`` (and three others), spaCy's
architectures with a Mimick-aware static vectors layer. spaCy's own ``StaticVectors`` now reads
Mimick's vectors through the vocab (``MimickVectors``), so these are spaCy's architectures again:
the same structure and weights, so such pipelines load and predict as before. New configs name
spaCy's: ``spacy.MultiHashEmbed.v2``, ``spacy.CharacterEmbed.v2``, ``spacy.HashEmbedCNN.v2``,
``spacy.StaticVectors.v2``.
"""
import warnings
from typing import Callable, List, Optional, Union

from spacy.ml.models.tok2vec import CharacterEmbed, MultiHashEmbed, build_hash_embed_cnn_tok2vec
from spacy.ml.staticvectors import StaticVectors
from spacy.util import registry
from thinc.initializers import glorot_uniform_init

_warned = False


def _note(old: str, new: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"{old} is now spaCy's own {new} (same weights; Mimick's vectors come from the "
                      f"vocab): replace the name in the pipeline's config.cfg to silence this")


@registry.architectures("spacy_mimick.MultiHashEmbed.v1")
def mimick_multi_hash_embed(width: int, attrs: List[Union[str, int]], rows: List[int],
                            include_static_vectors: bool = True):
    _note("spacy_mimick.MultiHashEmbed.v1", "spacy.MultiHashEmbed.v2")
    return MultiHashEmbed(width, attrs, rows, include_static_vectors)


@registry.architectures("spacy_mimick.CharacterEmbed.v1")
def mimick_character_embed(width: int, rows: int, nM: int, nC: int, include_static_vectors: bool = True,
                           feature: Union[int, str] = "LOWER"):
    _note("spacy_mimick.CharacterEmbed.v1", "spacy.CharacterEmbed.v2")
    return CharacterEmbed(width, rows, nM, nC, include_static_vectors, feature)


@registry.architectures("spacy_mimick.HashEmbedCNN.v1")
def mimick_hash_embed_cnn(width: int, depth: int, embed_size: int, window_size: int, maxout_pieces: int,
                          subword_features: bool, pretrained_vectors: Optional[bool]):
    _note("spacy_mimick.HashEmbedCNN.v1", "spacy.HashEmbedCNN.v2")
    return build_hash_embed_cnn_tok2vec(
        width=width, depth=depth, embed_size=embed_size, window_size=window_size,
        maxout_pieces=maxout_pieces, subword_features=subword_features, pretrained_vectors=pretrained_vectors)


@registry.architectures("spacy_mimick.MimickStaticVectors.v1")
def mimick_static_vectors(nO: Optional[int] = None, nM: Optional[int] = None, *, dropout: Optional[float] = None,
                          init_W: Callable = glorot_uniform_init, key_attr: str = "ORTH"):
    _note("spacy_mimick.MimickStaticVectors.v1", "spacy.StaticVectors.v2")
    return StaticVectors(nO, nM, dropout=dropout, init_W=init_W, key_attr=key_attr)
