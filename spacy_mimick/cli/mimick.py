"""CLI commands for Mimick models: train, predict, neighbors, extend, similarity."""
import errno
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy
import typer
from wasabi import msg

from .app import app
from .options import PAPER_SETUP, set_threads, threads_option, with_train_default
from ..devices import torch_device
from ..vectors.mimick_model import MimickModel, check_model_output, is_model_dir
from ..vectors.mimick_trainer import DEFAULT_ARCH, LOSSES, PAPER_ARCH, PAPER_CONFIG, TrainConfig, train_mimick
from ..vectors.similarity import evaluate_similarity, read_similarity_pairs
from ..vectors.spelling import DEFAULT_WEIGHT, SpellingBackoff, for_word_vectors
from ..atomic import folder_lock, terminate_as_interrupt
from .user_errors import UserError, fail, user_errors
from ..vectors.vectors_io import WordVectors, read_vectors, write_vectors_text


def check_width(model: MimickModel, model_dir: Path, table: WordVectors) -> None:
    """Refuse a model trained on vectors of another width than ``table``'s."""
    if model.width != table.dim:
        raise UserError(
            f"the Mimick model {model_dir} predicts {model.width}-dimensional vectors but "
            f"{table.source} has {table.dim}-dimensional ones: use a model trained on these vectors"
        )


def arch_config(arch: str, overrides: Dict[str, str]) -> Dict:
    """``--arch NAME`` plus ``--model.SETTING VALUE`` overrides (spaCy's CLI override syntax)."""
    config: Dict = {"@architectures": arch}
    for key, value in overrides.items():
        if not key.startswith("model."):
            raise typer.BadParameter(f"unknown option --{key}: architecture settings are --model.NAME VALUE")
        config[key[len("model."):]] = value
    return config


def config_overrides(args: List[str]) -> Dict:
    """spaCy's ``--section.key value`` overrides (``spacy.cli._util.parse_config_overrides``);
    spaCy is imported only when there are some, so ``train`` starts without it."""
    if not args:
        return {}
    from spacy.cli._util import parse_config_overrides

    return parse_config_overrides(args)


@app.command(
    "train", short_help="Train a Mimick model on pretrained word vectors",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
@user_errors
def train_cli(
    ctx: typer.Context,
    vectors_path: str = typer.Argument(..., help="Pretrained vectors (text/.gz/.bin/polyglot .pkl/navec .tar/spaCy dir)"),
    output_dir: Path = typer.Argument(..., help="Directory for the trained Mimick model"),
    fmt: str = typer.Option(
        "auto", "--format",
        help="Vectors format: auto (from the name and first bytes), text, word2vec-binary, "
             "polyglot, navec or spacy"),
    paper: bool = typer.Option(
        False, "--paper",
        help=f"Train {PAPER_SETUP}"),
    arch: Optional[str] = typer.Option(
        None, "--arch",
        help=f"Registered Mimick architecture [default: {DEFAULT_ARCH['@architectures']}; "
             f"--paper: {PAPER_ARCH['@architectures']}]"),
    limit: int = typer.Option(0, "--limit", help="Use only the first N rows of the vectors (0: all)"),
    max_epochs: Optional[int] = typer.Option(
        None, "--max-epochs", help=with_train_default("Most epochs to train", "max_epochs")),
    batch_size: Optional[int] = typer.Option(
        None, "--batch-size", help=with_train_default("Words per training step", "batch_size")),
    learning_rate: Optional[float] = typer.Option(
        None, "--lr", help=with_train_default("Adam learning rate of dense weights", "learning_rate")),
    sparse_learning_rate: Optional[float] = typer.Option(
        None, "--sparse-lr",
        help=with_train_default("SparseAdam learning rate of n-gram tables", "sparse_learning_rate")),
    patience: Optional[int] = typer.Option(
        None, "--patience",
        help=with_train_default(
            "Stop after this many epochs without a better dev loss (1% of the words held out)", "patience")),
    loss: Optional[str] = typer.Option(
        None, "--loss", help=with_train_default(f"One of {', '.join(LOSSES)}", "loss")),
    normalize_targets: Optional[bool] = typer.Option(
        None, "--normalize-targets/--raw-targets",
        help=with_train_default(
            "Train towards unit-length copies of the vectors, or the vectors as they are",
            "normalize_targets", lambda on: "--normalize-targets" if on else "--raw-targets")),
    freq_weight: Optional[bool] = typer.Option(
        None, "--freq-weight/--no-freq-weight",
        help=with_train_default(
            "Weight each word's loss by log(1 + its count) (counts from the file, else Zipf by rank)",
            "freq_weight", lambda on: "--freq-weight" if on else "--no-freq-weight")),
    typo_prob: Optional[float] = typer.Option(
        None, "--typo-prob", help=with_train_default("Share of words replaced by a one-edit typo", "typo_prob")),
    temperature: Optional[float] = typer.Option(
        None, "--temperature", help=with_train_default("InfoNCE temperature (contrastive losses)", "temperature")),
    negatives: Optional[int] = typer.Option(
        None, "--negatives", help=with_train_default("Random negatives a batch (contrastive losses)", "negatives")),
    contrastive_weight: Optional[float] = typer.Option(
        None, "--contrastive-weight",
        help=with_train_default("Weight of InfoNCE in l2+contrastive", "contrastive_weight")),
    seed: Optional[int] = typer.Option(
        None, "--seed",
        help=with_train_default("Random seed: dev split, initial weights, batch order, typos", "seed")),
    threads: int = threads_option(),
    gpu_id: int = typer.Option(
        -1, "--gpu-id", "-g",
        help="GPU to train on, as in spacy train (-1: the CPU). Needs a CUDA build of torch"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars"),
    cache: bool = typer.Option(
        True, "--cache/--no-cache",
        help="Keep text/word2vec-binary vectors parsed once as a binary file in $SPACY_MIMICK_CACHE "
             "(default ~/.cache/spacy_mimick) and read that next time; redone when the file changes"),
    overwrite: bool = typer.Option(
        True, "--overwrite/--no-overwrite",
        help="Replace a Mimick model already in OUTPUT_DIR (said before training; the old model "
             "stays until the new one is written). A directory holding anything else is never replaced"),
):
    """Train a Mimick model that predicts VECTORS_PATH's vectors from spelling.

    Defaults: the best model of docs/oov_vectors.md (character n-gram bag, typo augmentation);
    --paper: the paper's char BiLSTM. Architecture settings are overridden like spaCy configs:
    --model.hidden 100.

    Training uses the fast path (words encoded once, foreach Adam), and text/word2vec-binary
    vectors are cached after their first parse (--no-cache to turn off); --batch-size stays 64
    by default because larger batches reach a worse dev loss in the same epochs
    (docs/speed.md).

    Options and OUTPUT_DIR are checked before the vectors are read. The model is written
    atomically: a failed write (a full disk) leaves OUTPUT_DIR as it was. Ctrl-C or SIGTERM
    after the first epoch saves the best epoch so far (exit code 130). Of two runs saving into
    one OUTPUT_DIR the later save is kept, and says that it replaced the other run's model.
    """
    base_arch = PAPER_ARCH if paper else DEFAULT_ARCH
    config = arch_config(arch or base_arch["@architectures"], config_overrides(ctx.args))
    options = dict(
        max_epochs=max_epochs, batch_size=batch_size, learning_rate=learning_rate,
        sparse_learning_rate=sparse_learning_rate, patience=patience, loss=loss,
        normalize_targets=normalize_targets, freq_weight=freq_weight, typo_prob=typo_prob, seed=seed,
        temperature=temperature, negatives=negatives, contrastive_weight=contrastive_weight,
    )
    set_threads(threads)  # before any torch op runs
    device = torch_device(gpu_id)  # a GPU that is not there: said before the vectors are read
    if limit < 0:
        raise UserError(f"--limit must be >= 0 (0: all rows), got {limit}")
    train_config = replace(PAPER_CONFIG if paper else TrainConfig(),
                           **{k: v for k, v in options.items() if v is not None})
    try:
        train_config.validate()
    except ValueError as err:
        raise UserError(f"bad training option: {err}") from None
    # OUTPUT_DIR is checked now, not after hours of training.
    check_model_output(output_dir)
    if is_model_dir(output_dir) and any(output_dir.iterdir()):
        if not overwrite:
            raise UserError(f"{output_dir} holds a Mimick model; pass --overwrite to replace it")
        msg.warn(f"{output_dir} holds a Mimick model: it will be replaced when training ends "
                 f"(kept if training fails)")
    before = saved_state(output_dir)  # to tell, when saving, whether another run saved there since
    vectors = read_vectors(vectors_path, fmt, limit=limit or None, progress=not quiet, cache=cache)
    if len(vectors) < 2:
        raise UserError(
            f"{vectors_path}: {len(vectors)} word vector read{f' (--limit {limit})' if limit else ''}; expected "
            f"at least 2 rows to train Mimick (a share of the words is held out to measure the dev loss)")
    msg.info(f"{len(vectors):,} words x {vectors.dim} dims from {vectors_path}; "
             f"architecture {config['@architectures']}; training on {device}")
    try:
        with terminate_as_interrupt():  # SIGTERM (kill, a scheduler's stop) is handled as Ctrl-C
            result = train_mimick(vectors, config, train_config, progress=not quiet, device=device)
    except KeyboardInterrupt:
        fail(f"interrupted before the first epoch ended: nothing saved ({output_dir} unchanged)", 130)
    replaced = save_model(result.model, output_dir, before)
    if replaced is not None:
        msg.warn(f"{output_dir}: replaced the model another run saved there after this one started "
                 f"({replaced}); this run's model is the one kept")
    if result.interrupted:
        msg.warn(f"Interrupted: saved the best epoch so far (epoch {result.best_epoch}, dev loss "
                 f"{result.model.meta['dev_loss']:.4f}) to {output_dir}")
        raise typer.Exit(130)
    msg.good(f"Saved Mimick model to {output_dir} (best epoch {result.best_epoch}, "
             f"dev loss {result.model.meta['dev_loss']:.4f})")


def saved_state(path: Path) -> Optional[tuple]:
    """What identifies the model saved in ``path`` (None: none): every save puts a new folder
    in place (atomic_directory), so another save changes its inode and model.pt's stamp."""
    try:
        folder, weights = path.stat(), (path / "model.pt").stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return folder.st_ino, weights.st_mtime_ns, weights.st_size


def _describe_saved(path: Path) -> str:
    try:
        meta = json.loads((path / "config.json").read_text(encoding="utf8"))["meta"]
        return f"best epoch {meta['best_epoch']}, dev loss {meta['dev_loss']:.4f}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a model this run cannot describe"


def save_model(model: MimickModel, output_dir: Path, before: Optional[tuple]) -> Optional[str]:
    """Save ``model`` to ``output_dir``. Under the folder's lock (which saves take too), first
    look whether another run saved a model there since ``before`` was taken: returns a
    description of that model (now replaced), or None. A full disk is one error line."""
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    had_model = False
    try:
        with folder_lock(output_dir.parent):
            now = saved_state(output_dir)
            had_model = now is not None
            replaced = _describe_saved(output_dir) if had_model and now != before else None
            model.to_disk(output_dir)
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        fail(f"could not write the model to {output_dir}: {err.strerror}; "
             f"{'the previous model there is unchanged' if had_model else 'nothing was written there'} "
             f"(this run's model is lost: free some space and train again)")
    return replaced


def read_words_file(path: Path) -> List[str]:
    """The words of a file with one word per line: UTF-8 (a BOM is dropped), surrounding
    whitespace stripped, blank lines skipped. Bytes that are not UTF-8 are reported with their
    line, column and byte offset in the file, like the CoNLL-U reader does."""
    words: List[str] = []
    offset = 0
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise UserError(
                    f"{path}:{line_no}: byte(s) {raw[err.start:err.end]!r} at column {err.start + 1} "
                    f"(byte {offset + err.start} of the file) are not UTF-8 (expected a UTF-8 file "
                    f"with one word per line; convert it with iconv)") from None
            offset += len(raw)
            if line_no == 1 and line.startswith("\ufeff"):
                line = line[1:]
            if line.strip():
                words.append(line.strip())
    return words


def _read_words(words: List[str], words_file: Optional[Path]) -> List[str]:
    out = list(words)
    if words_file is not None:
        out += read_words_file(words_file)
    if not out:
        raise typer.BadParameter("give words as arguments or with --words-file")
    empty = [i + 1 for i, word in enumerate(out) if not word.strip()]
    if empty:
        raise UserError(f"word {empty[0]} is empty or only whitespace (expected words to embed)")
    return out


def _refuse_whitespace(words: List[str]) -> None:
    """The words of a word2vec text output cannot hold whitespace (write_vectors_text's rule)."""
    for i, word in enumerate(words):
        if any(c in word for c in " \t\n\r"):
            raise UserError(
                f"word {word!r} (index {i}) contains whitespace, which word2vec text cannot "
                f"hold: a reader splits the line there (expected words without spaces, tabs or line "
                f"breaks; join a phrase's words yourself, e.g. New_York)")


def _refuse_input_as_output(output: Path, inputs: List[Path]) -> None:
    """Outputs are never written over an input (they are written beside it and renamed)."""
    for path in inputs:
        if output.exists() and path.exists() and output.samefile(path):
            raise UserError(f"{output} is the input file {path}: refusing to write over it "
                            f"(expected another output path)")


SPELLING_HELP = (
    "A word the table lacks that is one edit (delete, insert, substitute, transpose) from a table "
    "word, and that a character model of the table's words takes for a misspelling of it, gets "
    "the most frequent such word's vector blended with Mimick's (docs/oov_vectors.md, 'The typo "
    "gate'); --no-spelling-backoff: Mimick's vector alone")


def spelling_weight_option():
    return typer.Option(DEFAULT_WEIGHT, "--spelling-weight",
                        help="With --spelling-backoff: the table word's share of the blend (1: its vector)")


def spelling_max_rows_option():
    return typer.Option(0, "--spelling-max-rows",
                        help="With --spelling-backoff: candidates among the table's first N rows only (0: all)")


def spelling_backoff(table: WordVectors, weight: float, max_rows: int) -> SpellingBackoff:
    try:
        return for_word_vectors(table, weight=weight, max_rows=max_rows)
    except ValueError as error:
        raise UserError(str(error)) from None


def spelled_predictions(
    model: MimickModel, words: List[str], table: Optional[WordVectors], backoff: Optional[SpellingBackoff],
) -> tuple:
    """(vectors, spelled): Mimick's predictions for ``words``, with the spelling backoff's vector
    for each word ``table`` lacks (after the model's lowercasing) that is one edit from a table
    word; ``spelled[i]``: that table word, or None."""
    predicted = model.predict(words)
    if backoff is None or table is None:
        return predicted, [None] * len(words)
    key = (lambda w: w.lower()) if model.meta.get("lowercase") else (lambda w: w)
    return backoff.apply(words, predicted, in_table=lambda w: table.get(key(w)) is not None)


@app.command("predict", short_help="Print Mimick vectors for words (word2vec text)")
@user_errors
def predict_cli(
    model_dir: Path = typer.Argument(..., help="A trained Mimick model"),
    words: List[str] = typer.Argument(None, help="Words to embed"),
    words_file: Optional[Path] = typer.Option(
        None, "--words-file", help="UTF-8 file of more words, one a line (blank lines skipped)"),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write a word2vec text file (.gz: gzipped) instead of printing"),
    vectors_path: Optional[str] = typer.Option(
        None, "--vectors", help="The table Mimick was trained on, for --spelling-backoff"),
    spelling: Optional[bool] = typer.Option(
        None, "--spelling-backoff/--no-spelling-backoff", help=SPELLING_HELP + "; on when --vectors is given"),
    spelling_weight: float = spelling_weight_option(),
    spelling_max_rows: int = spelling_max_rows_option(),
    threads: int = threads_option(),
):
    """Print (or write) Mimick vectors for words, in word2vec text format.

    A word holding whitespace (New York) is refused, printed or written: a word2vec reader
    splits the line there and reads "York" as the first value. Writing it another way (New_York)
    would print a word that was not asked for, and could be a real word of the table.
    """
    words = _read_words(words or [], words_file)
    _refuse_whitespace(words)
    if spelling and vectors_path is None:
        raise UserError("--spelling-backoff needs --vectors: the table whose words it spells "
                        "(the one the Mimick model was trained on)")
    spelling = vectors_path is not None if spelling is None else spelling
    set_threads(threads)
    model = MimickModel.from_disk(model_dir)
    table = backoff = None
    if spelling:
        table = read_vectors(vectors_path)
        check_width(model, model_dir, table)
        backoff = spelling_backoff(table, spelling_weight, spelling_max_rows)
    vectors, _ = spelled_predictions(model, words, table, backoff)
    if output is not None:
        _refuse_input_as_output(output, [words_file] if words_file is not None else [])
        write_vectors_text(output, words, vectors)
        msg.good(f"Wrote {len(words)} vectors to {output}")
    else:
        for word, vector in zip(words, vectors):
            sys.stdout.write(word + " " + " ".join(f"{x:.6f}" for x in vector) + "\n")


def nearest_neighbors(
    query: numpy.ndarray, table: WordVectors, k: int, exclude: Optional[List[str]] = None
) -> List[List[tuple]]:
    """For each query row, the k most cosine-similar words of ``table`` (excluding the query words)."""
    unit = table.matrix / numpy.maximum(numpy.linalg.norm(table.matrix, axis=1, keepdims=True), 1e-8)
    q = query / numpy.maximum(numpy.linalg.norm(query, axis=1, keepdims=True), 1e-8)
    sims = q @ unit.T
    results = []
    for i, row in enumerate(sims):
        order = numpy.argsort(-row)
        skip = exclude[i] if exclude else None
        picked = [(table.words[j], float(row[j])) for j in order[: k + 1] if table.words[j] != skip]
        results.append(picked[:k])
    return results


@app.command("neighbors", short_help="Nearest in-vocabulary words of Mimick's vectors")
@user_errors
def neighbors_cli(
    model_dir: Path = typer.Argument(..., help="A trained Mimick model"),
    vectors_path: str = typer.Argument(..., help="The in-vocabulary vectors to search"),
    words: List[str] = typer.Argument(None, help="Words (typically OOV) to find neighbours of"),
    words_file: Optional[Path] = typer.Option(
        None, "--words-file", help="UTF-8 file of more words, one a line (blank lines skipped)"),
    k: int = typer.Option(5, "-k", help="Neighbours per word"),
    limit: int = typer.Option(0, "--limit", help="Search only the first N rows (0: all)"),
    spelling: bool = typer.Option(True, "--spelling-backoff/--no-spelling-backoff", help=SPELLING_HELP),
    spelling_weight: float = spelling_weight_option(),
    spelling_max_rows: int = spelling_max_rows_option(),
    threads: int = threads_option(),
):
    """Nearest in-vocabulary words (cosine) of Mimick's vectors for WORDS, as a Markdown table."""
    words = _read_words(words or [], words_file)
    if k < 1 or limit < 0:
        raise UserError(f"-k must be >= 1 and --limit >= 0, got {k} and {limit}")
    set_threads(threads)
    model = MimickModel.from_disk(model_dir)
    table = read_vectors(vectors_path, limit=limit or None)
    check_width(model, model_dir, table)
    backoff = spelling_backoff(table, spelling_weight, spelling_max_rows) if spelling else None
    print(neighbors_table(words, model, table, k, backoff))


def neighbor_rows(
    words: List[str], model: MimickModel, table: WordVectors, k: int, backoff: Optional[SpellingBackoff] = None,
) -> tuple:
    """(lookup keys, spelled, neighbours): per word, the form looked up in ``table``, the table
    word its vector was spelled from (None: Mimick's own), and the ``k`` nearest table words of
    its vector (the word itself excluded)."""
    predicted, spelled = spelled_predictions(model, words, table, backoff)
    lookup = [w.lower() if model.meta.get("lowercase") else w for w in words]
    return lookup, spelled, nearest_neighbors(predicted, table, k, exclude=lookup)


def neighbors_table(
    words: List[str], model: MimickModel, table: WordVectors, k: int, backoff: Optional[SpellingBackoff] = None,
) -> str:
    lookup, spelled, rows = neighbor_rows(words, model, table, k, backoff)
    what = "Mimick's vector" if backoff is None else "its vector: spelling backoff, else Mimick's"
    lines = [f"| word | in vocabulary | nearest neighbours of {what} (cosine) |", "|---|---|---|"]
    for word, key, source, nbrs in zip(words, lookup, spelled, rows):
        known = "yes" if table.get(key) is not None else "no" if source is None else f"no (one edit from {source})"
        lines.append(f"| {word} | {known} | " + ", ".join(f"{w} ({s:.2f})" for w, s in nbrs) + " |")
    return "\n".join(lines)


# ``extend``'s VECTORS_PATH for "no table": every row from Mimick.
NO_TABLE = "none"


@app.command("extend", short_help="Write vectors for a vocabulary, OOV rows from Mimick")
@user_errors
def extend_cli(
    model_dir: Path = typer.Argument(..., help="A trained Mimick model"),
    vectors_path: str = typer.Argument(..., help="The pretrained vectors, or `none` for a language without a "
                                       "table (every row from Mimick, e.g. an original release model)"),
    output: Path = typer.Argument(..., help="Output word2vec text file (.gz for gzip)"),
    conllu: List[Path] = typer.Option([], "--conllu", help="CoNLL-U files whose words must be covered"),
    words_file: Optional[Path] = typer.Option(None, "--words-file", help="UTF-8 file of words to cover, one a line"),
    lowercase_backoff: bool = typer.Option(False, "--lowercase-backoff", help="Use the lowercase form's vector before Mimick"),
    all_rows: bool = typer.Option(False, "--all-rows", help="Keep every row of the input, not only the covered words'"),
    threads: int = threads_option(),
):
    """Write a vectors file covering a vocabulary: known rows kept, OOV rows from Mimick.

    This is how the original release fed the tagger; spaCy users can run `spacy init vectors` on
    the output. Without --all-rows only the words of the given vocabulary are written. With
    `none` for the vectors, every word's row is Mimick's: the table a tagger that is not ours
    (e.g. Stanza's pretrain) can read in a language that has only a Mimick model.
    """
    no_table = vectors_path.lower() == NO_TABLE
    _refuse_input_as_output(output, ([] if no_table else [Path(vectors_path)]) + [*conllu, *([words_file] if words_file else [])])
    set_threads(threads)
    model = MimickModel.from_disk(model_dir)  # a bad model fails before the corpus is read
    vocab: List[str] = _read_words([], words_file) if words_file is not None else []
    if conllu:
        from ..ud.corpus import read_conllu  # imported lazily: only this option needs it
        import spacy

        nlp = spacy.blank("xx")
        for path in conllu:
            vocab.extend(t.text for doc in read_conllu(path, nlp.vocab) for t in doc)
    if no_table and not vocab:
        raise typer.BadParameter("with vectors `none`, give the words to cover: --conllu files or --words-file")
    if not vocab and not all_rows:
        raise typer.BadParameter("give --conllu files, --words-file, or --all-rows")
    if no_table:
        table = WordVectors([], numpy.zeros((0, model.width), dtype="float32"), source=NO_TABLE)
    else:
        table = read_vectors(vectors_path)
    check_width(model, model_dir, table)
    words, matrix, n_oov = extend_vectors(table, model, vocab, all_rows=all_rows,
                                          lowercase_backoff=lowercase_backoff)
    write_vectors_text(output, words, matrix)
    msg.good(f"Wrote {len(words):,} vectors ({n_oov:,} from Mimick) to {output}")


def extend_vectors(
    table: WordVectors, model: MimickModel, vocab: List[str], *, all_rows: bool = False,
    lowercase_backoff: bool = False,
):
    """(words, matrix, n_predicted): ``vocab`` covered, known rows from ``table``."""
    seen = set()
    words: List[str] = []
    for word in (table.words if all_rows else []) + vocab:
        if word not in seen:
            seen.add(word)
            words.append(word)
    matrix = numpy.zeros((len(words), table.dim), dtype="float32")
    oov = []
    for i, word in enumerate(words):
        vector = table.get(word)
        if vector is None and lowercase_backoff:
            vector = table.get(word.lower())
        if vector is None:
            oov.append(i)
        else:
            matrix[i] = vector
    if oov:
        matrix[oov] = model.predict([words[i] for i in oov])
    return words, matrix, len(oov)


def unit_mean(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """The mean of two vectors scaled to unit length (an ensemble of table and Mimick)."""
    return (a / max(numpy.linalg.norm(a), 1e-8) + b / max(numpy.linalg.norm(b), 1e-8)) / 2


def similarity_lookups(
    table: WordVectors, model: Optional[MimickModel], words: List[str], lowercase: bool,
    refine_rare: float = 0.5,
) -> Dict[str, Callable[[str], Optional[numpy.ndarray]]]:
    """Lookups for the similarity table.

    "vectors", "vectors + mimick" (OOV words from Mimick) and "mimick" are the paper's Table 1
    rows. "vectors ⊕ mimick" also changes in-vocabulary words: the mean of the unit table
    vector and the unit Mimick vector (docs/oov_vectors.md: it helps RW, SimLex and MEN).
    "vectors (rarest X refined) + mimick" does that only for the last ``refine_rare`` share of
    the table's rows, which is what ``mimick_vectors`` with ``refine_rare = X`` gives.
    """
    norm = (lambda w: w.lower()) if lowercase else (lambda w: w)
    lookups: Dict[str, Callable] = {"vectors": lambda w: table.get(norm(w))}
    if model is not None:
        keys = sorted({norm(w) for w in words})
        predicted = dict(zip(keys, model.predict(keys)))

        def table_then_mimick(w: str) -> numpy.ndarray:
            known = table.get(norm(w))
            return known if known is not None else predicted[norm(w)]

        def ensemble(w: str) -> numpy.ndarray:
            known = table.get(norm(w))
            return predicted[norm(w)] if known is None else unit_mean(known, predicted[norm(w)])

        from ..vectors.mimick_component import blend_with_table, first_rare_row

        first_rare = first_rare_row(len(table), refine_rare)

        def refined(w: str) -> numpy.ndarray:
            row = table.index.get(norm(w))
            if row is None:
                return predicted[norm(w)]
            return table.matrix[row] if row < first_rare else blend_with_table(table.matrix[row], predicted[norm(w)])

        lookups["vectors + mimick"] = table_then_mimick
        lookups["mimick"] = lambda w: predicted[norm(w)]
        lookups["vectors ⊕ mimick"] = ensemble
        if 0 < refine_rare < 1:
            lookups[f"vectors (rarest {refine_rare:.0%} refined) + mimick"] = refined
    return lookups


@app.command("similarity", short_help="Word-similarity scores with and without Mimick")
@user_errors
def similarity_cli(
    pairs_path: Path = typer.Argument(..., help="Word-similarity file (Rare Word, SimLex, MEN, WS-353, ...)"),
    vectors_path: str = typer.Argument(..., help="Pretrained vectors"),
    model_dir: Optional[Path] = typer.Option(
        None, "--model", help="A trained Mimick model (without it only the \"vectors\" row is scored)"),
    lowercase: bool = typer.Option(True, "--lowercase/--cased", help="Lowercase words before lookup (GloVe is lowercase)"),
    refine_rare: float = typer.Option(0.5, "--refine-rare", help="Share of the table's rarest rows refined in the last row (mimick_vectors' refine_rare)"),
    threads: int = threads_option(),
):
    """Spearman's rho x 100 on a similarity set: vectors alone, vectors + Mimick, Mimick alone."""
    try:
        pairs = read_similarity_pairs(pairs_path)
    except UnicodeDecodeError as err:
        raise UserError(f"{pairs_path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    except ValueError as err:  # its messages name the file and line
        raise UserError(str(err)) from None
    if not 0 <= refine_rare < 1:
        raise UserError(f"--refine-rare must be in [0, 1), got {refine_rare}")
    set_threads(threads)
    model = MimickModel.from_disk(model_dir) if model_dir else None
    table = read_vectors(vectors_path)
    if model is not None:
        check_width(model, model_dir, table)
    words = [w for p in pairs for w in (p.word1, p.word2)]
    in_vocab = [p for p in pairs if all(table.get(w.lower() if lowercase else w) is not None
                                        for w in (p.word1, p.word2))]
    if not in_vocab:
        msg.warn(f"none of the {len(pairs)} pairs of {pairs_path} has both words in {vectors_path}"
                 f"{' (lowercased)' if lowercase else ''}: the in-vocabulary column is empty (nan)"
                 f"{'' if model is not None else ' and every pair scores 0; pass --model'}")
    print(f"| vectors | all pairs (N={len(pairs)}) | in-vocabulary pairs (N={len(in_vocab)}) | pairs covered |")
    print("|---|---|---|---|")
    for name, lookup in similarity_lookups(table, model, words, lowercase, refine_rare).items():
        res_all = evaluate_similarity(pairs, lookup)
        res_in = evaluate_similarity(in_vocab, lookup)
        print(f"| {name} | {res_all.spearman:.1f} | {res_in.spearman:.1f} | {res_all.n_covered} |")
