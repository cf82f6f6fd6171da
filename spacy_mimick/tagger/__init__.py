"""The joint tagger: UPOS and every morphological attribute, each with its own head.

The torch network (``pytorch_tagger_model``: word and character BiLSTMs, the paper's No-Char,
Mimick, char->tag and Both), its thinc architectures (``tagger_model``:
``spacy_mimick.MimickTagger.v1`` the paper's, ``.v3`` the default, ``.v5`` v3 with scaled
vectors), the trainable ``mimick_tagger`` component (``tagger_component``), the training
configs of each variant and recipe (``recipes``, templates in ``configs/``), the callback that
trains part of a sourced tagger (``freezing``), the epoch-based
learning-rate schedule of the default recipe (``schedules``) and the names of earlier saved
configs mapped to spaCy's own layers (``legacy_layers``).
"""
