"""``python -m spacy_mimick`` / ``spacy-mimick``: the command-line interface."""
from ._cli_app import app
from . import cli_add, cli_mimick, cli_original, cli_ud  # noqa: F401  (they register their commands on app)


def main() -> None:
    app()
