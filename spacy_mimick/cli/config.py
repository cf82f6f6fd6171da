"""``spacy_mimick init-config``: a ``spacy train`` config for the tagger, as ``spacy init config``
writes one for spaCy's own components."""
import sys
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..atomic import atomic_file
from ..tagger.recipes import RECIPES, VARIANTS, config_text, tagger_config
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
    source: Optional[Path] = typer.Option(
        None, "--source", help="With --recipe typos: continue the tagger of this trained pipeline "
        "(a folder such as a model-best, or an installed package's name) on misspelled text instead "
        "of training one from scratch (only its word and character encoders train where the variant "
        "has characters); its vectors table, Mimick model and language come along"),
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
    if source is not None:
        source = resolve_source(source)
        check_source(source, variant, recipe)
    text = config_text(variant, recipe, None if source is None else str(source))
    if str(output_file) == "-":
        sys.stdout.write(text)
        return
    with atomic_file(output_file, "w", encoding="utf8") as out:
        out.write(text)
    msg.good(f"Wrote the {variant} tagger's config ({recipe} recipe"
             + (f", continuing {source}" if source is not None else "") + f") to {output_file}")


def resolve_source(source: Path) -> Path:
    """A pipeline folder as given, or an installed pipeline package's data folder (the one
    ``spacy.load(NAME)`` reads) for a package name."""
    import spacy

    if source.exists() or not spacy.util.is_package(str(source)):
        return source
    package = spacy.util.get_package_path(str(source))
    meta = spacy.util.get_model_meta(package)
    return package / f"{meta['lang']}_{meta['name']}-{meta['version']}"


def check_source(source: Path, variant: str, recipe: str) -> None:
    """A pipeline folder whose tagger (and, for a variant with Mimick's vectors, its Mimick model)
    the fine-tuning config can read, or a UserError saying what is missing."""
    from confection import Config

    if recipe != "typos":
        raise UserError(f"--source continues a trained tagger with the typos recipe; got --recipe {recipe!r}")
    if not (source / "config.cfg").is_file():
        raise UserError(f"--source {source}: expected a trained pipeline's folder with a config.cfg, "
                        "or the name of an installed pipeline package")
    if not (source / "mimick_tagger").is_dir():
        raise UserError(f"--source {source}: the pipeline has no mimick_tagger component to continue")
    try:
        pipeline = list(Config().from_disk(source / "config.cfg", interpolate=False)["nlp"]["pipeline"])
    except Exception as err:  # a config that confection cannot read, or without [nlp] pipeline
        raise UserError(f"--source {source}: cannot read [nlp] pipeline from its config.cfg ({err})") from err
    expected = list(tagger_config(variant)["nlp"]["pipeline"])
    if pipeline != expected:
        fitting = [v for v in VARIANTS if list(tagger_config(v)["nlp"]["pipeline"]) == pipeline]
        raise UserError(f"--source {source}: its pipeline is {pipeline}, the {variant} variant's "
                        f"{expected}; give --variant " + (" or ".join(fitting) or "of a mimick_tagger pipeline"))
    if "mimick_vectors" in pipeline and not (source / "vocab" / "mimick").is_dir():
        raise UserError(f"--source {source}: no Mimick model in vocab/mimick; the {variant} variant reads one")
