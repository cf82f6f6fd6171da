"""The typer application behind ``python -m spacy_mimick`` (commands live in cli_*.py)."""
import typer

app = typer.Typer(
    name="spacy-mimick",
    help="MIMICK: word vectors for out-of-vocabulary words, predicted from their spelling.",
    no_args_is_help=True,
    add_completion=False,
)
