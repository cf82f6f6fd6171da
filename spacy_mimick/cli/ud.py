"""``spacy_mimick convert``: CoNLL-U -> .spacy DocBin with UD's gold words; ``spacy_mimick tag``:
CoNLL-U in, the same file with predicted UPOS and FEATS out.

Unlike ``spacy convert`` it keeps the syntactic words of multiword tokens, skips empty nodes,
and can draw the paper's seeded low-resource subsample (``--n-tokens``).
"""
from pathlib import Path
from typing import List

import typer

from .app import app
from .options import set_threads, threads_option
from ..atomic import terminate_as_interrupt, write_bytes_atomic
from .user_errors import UserError, fail, user_errors


def no_sentences(path: Path) -> UserError:
    return UserError(f"{path}: no sentences (the file is empty or holds only comments, blank "
                     f"lines, multiword-token ranges or empty nodes; expected word lines with whole-number IDs)")



@app.command("convert", short_help="CoNLL-U -> .spacy with UD's words, optionally subsampled")
@user_errors
def convert_cli(
    input_paths: List[Path] = typer.Argument(..., exists=True, dir_okay=False, help="CoNLL-U file(s)"),
    output_dir: Path = typer.Option(Path("."), "--output-dir", "-o", file_okay=False, help="Output folder"),
    lang: str = typer.Option("xx", "--lang", "-l", help="Language code of the vocab (spacy.blank)"),
    n_tokens: int = typer.Option(0, "--n-tokens", "-n", help="Subsample to at least this many tokens (0: all)"),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the subsample"),
) -> None:
    """Convert each of INPUT_PATHS to OUTPUT_DIR/<name>.spacy (<name>.n<N>.s<SEED>.spacy when
    subsampled with --n-tokens N --seed SEED)."""
    import spacy  # imported by the commands that use it: `train` starts without spaCy
    from spacy.tokens import DocBin

    from ..ud.corpus import ConlluFormatError, ConlluStats, read_conllu, subsample_by_tokens

    name_of = {path: path.stem + (f".n{n_tokens}.s{seed}" if n_tokens > 0 else "") for path in input_paths}
    first: dict = {}
    for path, name in name_of.items():
        if name in first and first[name] != path:
            raise UserError(f"{first[name]} and {path} would both be written to "
                            f"{output_dir / (name + '.spacy')}: convert them in separate runs "
                            f"with different --output-dir")
        first.setdefault(name, path)
    vocab = spacy.blank(lang).vocab
    output_dir.mkdir(parents=True, exist_ok=True)
    for path in dict.fromkeys(input_paths):
        stats = ConlluStats()
        try:
            docs = list(read_conllu(path, vocab, stats=stats))
        except ConlluFormatError as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1)
        if not docs:
            raise no_sentences(path)
        typer.echo(
            f"{path}: {stats.sentences} sentences, {stats.tokens} tokens, "
            f"{stats.multiword_ranges} multiword ranges, {stats.empty_nodes} empty nodes skipped"
        )
        name = name_of[path]
        if n_tokens > 0:
            docs = subsample_by_tokens(docs, n_tokens, seed)
            typer.echo(f"  subsample (>= {n_tokens} tokens, seed {seed}): "
                       f"{len(docs)} sentences, {sum(len(doc) for doc in docs)} tokens")
        output = output_dir / f"{name}.spacy"
        # Never in place: on a full disk or a signal an existing output stays whole.
        write_bytes_atomic(output, DocBin(docs=docs, store_user_data=True).to_bytes())
        typer.echo(f"  -> {output}")


@app.command("tag", short_help="Write a CoNLL-U file's predicted UPOS and FEATS")
@user_errors
def tag_cli(
    pipeline: str = typer.Argument(..., help="Trained pipeline (package name or directory)"),
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="CoNLL-U file to tag"),
    output_path: Path = typer.Argument(..., dir_okay=False, help="CoNLL-U file to write"),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Sentences per nlp.pipe batch"),
    threads: int = threads_option(),
) -> None:
    """Tag INPUT_PATH's gold words with PIPELINE and write OUTPUT_PATH: the same file with the
    predicted UPOS and FEATS (FEATS sorted as UD requires) and everything else unchanged, ready
    for UD's evaluation script."""
    from ..ud.corpus import ConlluFormatError, tag_conllu
    from ..vectors.add_mimick import load_pipeline

    if batch_size < 1:
        raise UserError(f"--batch-size must be >= 1, got {batch_size}")
    set_threads(threads)
    if output_path.exists() and output_path.samefile(input_path):
        raise UserError(f"{output_path} is the input file: refusing to write over it (expected "
                        f"another output path; the output is the input with predicted UPOS and FEATS)")
    try:
        # SIGTERM (kill, a scheduler's stop) is handled as Ctrl-C, whenever it comes: the
        # temporary output is removed and the line below is printed.
        with terminate_as_interrupt():
            nlp = load_pipeline(pipeline)  # a missing pipeline is a user error, not a traceback
            taggers = [name for name in nlp.pipe_names
                       if {"token.pos", "token.morph"} & set(nlp.get_pipe_meta(name).assigns)]
            if not taggers:
                raise UserError(f"the pipeline {pipeline} has no component that predicts UPOS or FEATS "
                                f"(components: {', '.join(nlp.pipe_names) or 'none'}; expected a tagger, "
                                f"e.g. mimick_tagger)")
            stats = tag_conllu(nlp, input_path, output_path, batch_size=batch_size)
    except ConlluFormatError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1)
    except KeyboardInterrupt:
        fail(f"interrupted: {output_path} not written (a file already there is unchanged)", 130)
    typer.echo(f"{input_path}: tagged {stats.sentences} sentences, {stats.tokens} words -> {output_path}")
