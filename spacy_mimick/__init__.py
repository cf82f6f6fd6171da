"""spacy-mimick: MIMICK out-of-vocabulary word vectors for spaCy."""
__version__ = "0.1.0"
