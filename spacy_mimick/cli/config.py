"""``spacy_mimick init-config``: a ``spacy train`` config for the tagger, as ``spacy init config``
writes one for spaCy's own components."""
import sys
from pathlib import Path

import typer
from wasabi import msg

from ..atomic import atomic_file
from ..tagger.recipes import RECIPES, VARIANTS, config_text
from .app import app
from .user_errors import UserError, user_errors


@app.command("init-config", short_help="Write a spacy train config for the tagger")
@user_errors
def init_config_cli(
    output_file: Path = typer.Argument(..., help="Where to write the config ('-' for stdout)", allow_dash=True),
    variant: str = typer.Option("both", "--variant", help=f"The paper's variant: {', '.join(VARIANTS)}"),
    recipe: str = typer.Option("default", "--recipe",
                               help="default (MimickTagger.v3, the low-resource recipe), paper "
                                    "(MimickTagger.v1 and the paper's training settings) or typos (the "
                                    "default trained on misspelled copies, spelling backoff on)"),
) -> None:
    """Write a `spacy train` config for the joint UPOS + attribute tagger to OUTPUT_FILE.

    Train it with `python -m spacy train OUTPUT_FILE --paths.train TRAIN.conllu --paths.dev
    DEV.conllu --paths.vectors VECTORS_DIR [--paths.mimick_model MIMICK_DIR]`; the comments at
    its top say what each path is.
    """
    if variant not in VARIANTS:
        raise UserError(f"--variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    if recipe not in RECIPES:
        raise UserError(f"--recipe {recipe!r}: expected one of {', '.join(RECIPES)}")
    text = config_text(variant, recipe)
    if str(output_file) == "-":
        sys.stdout.write(text)
        return
    with atomic_file(output_file, "w", encoding="utf8") as out:
        out.write(text)
    msg.good(f"Wrote the {variant} tagger's config ({recipe} recipe) to {output_file}")
