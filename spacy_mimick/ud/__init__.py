"""Universal Dependencies data: reading CoNLL-U into spaCy, scoring, significance.

CoNLL-U files to ``DocBin`` corpora and the ``spacy_mimick.ConllCorpus`` readers
(``corpus``), the paper's metrics (UPOS accuracy, attribute micro-F1, OOV accuracy) as a spaCy
scorer (``scorer``), scores on raw text with a pipeline's own tokens aligned to the gold words as
in the CoNLL 2018 shared task (``aligned``) and the tests of significance between two systems
(``significance``), and misspelled words for testing and training taggers on text with typos
(``typos``: ``spacy_mimick.typo_augmenter.v1``).
"""
