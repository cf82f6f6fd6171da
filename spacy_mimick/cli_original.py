"""``spacy_mimick import-original``: convert a released original MIMICK model into a model
directory that ``predict``, ``mimick_vectors`` and ``MimickModel.from_disk`` load."""
import shutil
import tempfile
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ._cli_app import app
from .mimick_model import MimickModelError
from .original_release import OriginalReleaseError, load_original_release, max_reference_diff

MODEL_FILES = ("config.json", "features.json", "model.pt")


def is_mimick_model_dir(path: Path) -> bool:
    """Whether ``path`` holds a saved Mimick model and nothing else (so it may be replaced)."""
    names = {p.name for p in path.iterdir()}
    return names == set(MODEL_FILES)


def write_model_atomically(model, output_dir: Path) -> None:
    """Write into a temporary folder beside ``output_dir``, then rename it into place, so an
    interrupted run leaves either the old directory or the new one, never half of one.

    Refuses a non-empty ``output_dir`` that is not a Mimick model directory.
    """
    if output_dir.exists():
        if not output_dir.is_dir():
            raise MimickModelError(f"{output_dir}: exists and is not a folder")
        if any(output_dir.iterdir()) and not is_mimick_model_dir(output_dir):
            raise MimickModelError(
                f"{output_dir}: not empty and not a Mimick model directory (expected only "
                f"{', '.join(MODEL_FILES)}); refusing to overwrite it")
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    # The model is written to a fresh folder inside a private temporary one (mkdtemp's 0700
    # mode would otherwise be the model directory's).
    work = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.tmp-", dir=output_dir.parent))
    new, old = work / "new", work / "old"
    try:
        model.to_disk(new)
        if output_dir.exists():
            output_dir.rename(old)
        new.rename(output_dir)
    except BaseException:
        if old.exists() and not output_dir.exists():
            old.rename(output_dir)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


@app.command("import-original", short_help="Convert a released original MIMICK model")
def import_original_cli(
    source: Path = typer.Argument(..., help="A released <lang>-lstm-est.tar.gz, its unpacked .bin/.c2i, or their folder"),
    output_dir: Path = typer.Argument(..., help="Directory for the converted Mimick model"),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language code (default: from the file name)"),
    check_reference: Optional[Path] = typer.Option(
        None, "--check-reference", exists=True, dir_okay=False,
        help="reference/<lang>.json of vectors predicted by the original code: fail if any differs by more than --tolerance"),
    tolerance: float = typer.Option(1e-4, "--tolerance", help="Largest absolute difference --check-reference accepts"),
) -> None:
    """Convert an original MIMICK release model (DyNet, Polyglot 64d, GPL-3.0) into OUTPUT_DIR.

    The result loads with `python -m spacy_mimick predict OUTPUT_DIR ...` and
    `mimick_vectors.initialize(model_path=OUTPUT_DIR)`. See docs/original_release.md.
    """
    try:
        model = load_original_release(source, lang=lang)
        if check_reference is not None:
            n_words, diff = max_reference_diff(model, check_reference)
            line = f"{check_reference}: {n_words} words, max abs diff {diff:.3g}"
            if not diff <= tolerance:
                msg.fail(f"{line} > {tolerance:g}")
                raise typer.Exit(1)
            msg.good(line)
        write_model_atomically(model, output_dir)
    except (OriginalReleaseError, MimickModelError) as err:
        msg.fail(str(err))
        raise typer.Exit(1)
    chars = len(model.features["chars"].chars)
    msg.good(f"Converted {source.name} ({model.meta.get('lang')}, {chars} characters, "
             f"{model.width}d) -> {output_dir}")
