"""``spacy_mimick import-original``: convert a released original MIMICK model into a model
directory that ``predict``, ``mimick_vectors`` and ``MimickModel.from_disk`` load."""
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from .app import app
from ..atomic import folder_lock, terminate_as_interrupt
from ..vectors.mimick_model import MimickModelError
from ..vectors.original_release import OriginalReleaseError, load_original_release, max_reference_diff
from .user_errors import fail, user_errors

MODEL_FILES = ("config.json", "features.json", "model.pt")


def is_mimick_model_dir(path: Path) -> bool:
    """Whether ``path`` holds a saved Mimick model and nothing else (so it may be replaced)."""
    names = {p.name for p in path.iterdir()}
    return names == set(MODEL_FILES)


def write_model_atomically(model, output_dir: Path) -> None:
    """Save through ``MimickModel.to_disk`` (``atomic.atomic_directory``: a temporary folder
    beside ``output_dir`` renamed into place, a lock on the folder, debris of killed saves
    removed), so a failed or interrupted run (a full disk, Ctrl-C, SIGTERM) leaves the old
    directory or the new one, never half of one, and no temporary folder.

    Refuses a non-empty ``output_dir`` that is not a Mimick model directory (checked under the
    lock, so another process cannot fill it in between).
    """
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(output_dir.parent):
        if output_dir.exists():
            if not output_dir.is_dir():
                raise MimickModelError(f"{output_dir}: exists and is not a folder")
            if any(output_dir.iterdir()) and not is_mimick_model_dir(output_dir):
                raise MimickModelError(
                    f"{output_dir}: not empty and not a Mimick model directory (expected only "
                    f"{', '.join(MODEL_FILES)}); refusing to overwrite it")
        model.to_disk(output_dir)


@app.command("import-original", short_help="Convert a released original MIMICK model")
@user_errors
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
        # SIGTERM (kill, a scheduler's stop) is handled as Ctrl-C: OUTPUT_DIR is as it was.
        with terminate_as_interrupt():
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
    except KeyboardInterrupt:
        fail(f"interrupted: {output_dir} not written (a model already there is unchanged)", 130)
    chars = len(model.features["chars"].chars)
    msg.good(f"Converted {source.name} ({model.meta.get('lang')}, {chars} characters, "
             f"{model.width}d) -> {output_dir}")
