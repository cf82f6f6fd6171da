"""``python -m spacy_mimick`` / ``spacy-mimick``: the command-line interface.

One typer application (``app``); each module adds its commands to it: ``mimick`` (train,
predict, neighbors, extend, similarity), ``config`` (init-config), ``add`` (Mimick for an
installed pipeline), ``ud`` (CoNLL-U conversion, tag), ``original`` (import a model of the
original release). ``user_errors`` turns bad input into one line on stderr; ``options`` holds
the options several commands share.
"""
from . import add, config, mimick, original, ud  # noqa: F401  (they register their commands on app)
from .app import app


def main() -> None:
    app()
