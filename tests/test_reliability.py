"""Bad input and faults: every case ends in a clear message, and nothing the user has is lost. Each scenario below builds its small input, runs it as a user would (the CLI through
typer's runner, or the Python API) and returns what the user sees; the test checks the exit
code and the message. docs/reliability.md is generated from the same table
(``python tests/test_reliability.py`` rewrites it) and a test checks it is up to date.
"""
import gzip
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.vectors import Vectors
from typer.testing import CliRunner

import spacy_mimick
from spacy_mimick.vectors import mimick_trainer
from spacy_mimick.cli import app
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick
from spacy_mimick.vectors.vectors_io import WordVectors, read_vectors, write_vectors_text

REPO = Path(__file__).resolve().parents[1]
PACKAGE_ROOT = Path(spacy_mimick.__file__).resolve().parents[1]  # the code under test

DOC = REPO / "docs" / "reliability.md"
DIM = 8
NGRAM = {"@architectures": "spacy_mimick.MimickNgram.v1", "min_ngram_count": 1}


# --- small data ---------------------------------------------------------------------------------

def table(n: int = 300, dim: int = DIM, seed: int = 0) -> WordVectors:
    rng = numpy.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    words = list(dict.fromkeys("".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(n * 2)))[:n]
    return WordVectors(words=words, matrix=rng.normal(size=(len(words), dim)).astype("float32"), source="test")


def vectors_file(tmp: Path, name: str = "v.txt", **kw) -> Path:
    t = table(**kw)
    path = tmp / name
    write_vectors_text(path, t.words, t.matrix, header=False)
    return path


_MODELS: Dict[int, MimickModel] = {}


def model(dim: int = DIM) -> MimickModel:
    if dim not in _MODELS:
        _MODELS[dim] = train_mimick(table(dim=dim), NGRAM, TrainConfig(max_epochs=1, dev_fraction=0.1),
                                    progress=False, log=lambda m: None).model
    return _MODELS[dim]


def model_dir(tmp: Path, name: str = "model", dim: int = DIM) -> Path:
    path = tmp / name
    model(dim).to_disk(path)
    return path


CONLLU = textwrap.dedent("""\
    # sent_id = 1
    # text = The cat sat
    1\tThe\tthe\tDET\t_\tDefinite=Def\t2\tdet\t_\t_
    2\tcat\tcat\tNOUN\t_\tNumber=Sing\t3\tnsubj\t_\t_
    3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_

    # sent_id = 2
    1\tDogs\tdog\tNOUN\t_\tNumber=Plur\t2\tnsubj\t_\t_
    2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_

    """)


def conllu_file(tmp: Path, text: str = CONLLU, name: str = "x.conllu", data: Optional[bytes] = None) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if data is not None else text.encode("utf8"))
    return path


@Language.factory("reliability_test_tagger", assigns=["token.pos"], default_config={"fail_after": -1})
def make_test_tagger(nlp, name, fail_after: int):
    calls = [0]

    def tag(doc):
        calls[0] += 1
        if calls[0] == fail_after:
            raise KeyboardInterrupt  # Ctrl-C in the middle of a run
        for token in doc:
            token.pos_ = "NOUN"
        return doc

    return tag


def pipeline_dir(tmp: Path, component: Optional[str] = "reliability_test_tagger", **config) -> Path:
    nlp = spacy.blank("en")
    if component:
        nlp.add_pipe(component, config=config)
    path = tmp / f"pipeline-{component}-{config.get('fail_after', '')}"
    nlp.to_disk(path)
    return path


def cli(*args) -> str:
    """What the user sees: output (stdout and stderr) and the exit code, as ``... [exit N]``."""
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    return f"{result.output} [exit {result.exit_code}]"


def api_error(call: Callable) -> str:
    try:
        call()
    except Exception as err:  # noqa: BLE001 - the message is what is checked
        return f"{type(err).__name__}: {err}"
    return "no error"


def nlp_with_mimick(vectors: Optional[WordVectors] = None, **cfg) -> Language:
    t = vectors or table()
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=t.matrix.copy(), keys=t.words)
    pipe = nlp.add_pipe("mimick_vectors", config=cfg)
    pipe.set_model(model(t.dim))
    return nlp


# --- scenarios ----------------------------------------------------------------------------------

@dataclass
class Scenario:
    id: str
    area: str  # one of AREAS
    input: str
    command: str
    sees: str  # a fragment of what the user sees (checked against the real output)
    exit: str  # the exit code, "-" for the Python API
    run: Callable[[Path], str]


AREAS = ("security", "data loss", "signals", "debris and concurrency", "bad values", "options", "memory",
         "clear errors", "silent changes", "consistency")
SCENARIOS: List[Scenario] = []


def scenario(id, area, input, command, sees, exit="1"):
    def register(run):
        SCENARIOS.append(Scenario(id, area, input, command, sees, exit, run))
        return run

    return register


# Data loss

@scenario("tag-same-file", "data loss", "same file as input and output", "tag PIPELINE x.conllu x.conllu",
          "is the input file: refusing to write over it")
def _(tmp):
    path = conllu_file(tmp)
    out = cli("tag", pipeline_dir(tmp), path, path)
    assert path.read_text(encoding="utf8") == CONLLU
    return out


@scenario("train-huge-rows", "bad values", "a vectors row of huge finite values (1e30)", "train v.txt OUT",
          "1 row(s) have values too large to train on")
def _(tmp):
    path = vectors_file(tmp)
    lines = path.read_text().splitlines()
    word = lines[2].split()[0]
    lines[2] = word + " 1e30" * DIM
    path.write_text("\n".join(lines) + "\n")
    out = cli("train", path, tmp / "out", "--quiet", "--max-epochs", 1)
    assert f"{word!r} (row 3)" in out and not (tmp / "out").exists()
    return out


@scenario("train-diverges", "bad values", "a loss that becomes NaN/inf during training", "train_mimick(...)",
          "the training loss is not finite in epoch 1 (training diverged; nothing was saved)", exit="-")
def _(tmp):
    original = mimick_trainer.objective
    mimick_trainer.objective = lambda *a, **k: original(*a, **k) * float("inf")
    try:
        return api_error(lambda: train_mimick(table(), NGRAM, TrainConfig(max_epochs=1), progress=False))
    finally:
        mimick_trainer.objective = original


@scenario("nan-weights", "bad values", "a model whose weights hold NaN", "MimickModel.to_disk / from_disk",
          "the weights hold NaN or infinite values", exit="-")
def _(tmp):
    path = model_dir(tmp)
    bad = MimickModel.from_disk(path)
    with torch.no_grad():
        next(bad.module.parameters()).fill_(float("nan"))
    refused = api_error(lambda: bad.to_disk(tmp / "nan"))
    assert "refusing to save" in refused and not (tmp / "nan").exists()
    (path / "model.pt").write_bytes(bad._weights_bytes())
    return api_error(lambda: MimickModel.from_disk(path))


@scenario("train-out-is-file", "data loss", "OUT is an existing file", "train v.txt OUT",
          "exists and is not a directory")
def _(tmp):
    (tmp / "out").write_text("keep me")
    out = cli("train", vectors_file(tmp), tmp / "out", "--quiet")
    assert (tmp / "out").read_text() == "keep me" and "words x" not in out  # refused before reading
    return out


@scenario("train-out-not-model", "data loss", "OUT is a non-empty directory that is not a Mimick model",
          "train v.txt OUT", "not empty and not a Mimick model (it holds notes.txt); refusing to replace it")
def _(tmp):
    (tmp / "out").mkdir()
    (tmp / "out" / "notes.txt").write_text("keep me")
    out = cli("train", vectors_file(tmp), tmp / "out", "--quiet")
    assert (tmp / "out" / "notes.txt").read_text() == "keep me"
    return out


@scenario("train-out-model", "data loss", "OUT holds a Mimick model", "train v.txt OUT",
          "holds a Mimick model: it will be replaced when training ends", exit="0")
def _(tmp):
    model_dir(tmp, "out")
    out = cli("train", vectors_file(tmp), tmp / "out", "--quiet", "--max-epochs", 1)
    refused = cli("train", vectors_file(tmp), tmp / "out", "--quiet", "--no-overwrite")
    assert "pass --overwrite to replace it" in refused and refused.endswith("[exit 1]")
    return out


@scenario("save-fails-midway", "data loss", "the disk fills up while a model is saved over a good one (ulimit -f)",
          "MimickModel.to_disk(OUT)", "File too large; the previous model loads unchanged", exit="-")
def _(tmp):
    path = model_dir(tmp, "out")
    before = {p.name: p.read_bytes() for p in path.iterdir()}
    code = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {str(PACKAGE_ROOT)!r})
        from spacy_mimick.vectors.mimick_model import MimickModel
        m = MimickModel.from_disk({str(path)!r})
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        try:
            m.to_disk({str(path)!r})
        except OSError as err:
            print(err.strerror)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    assert {p.name: p.read_bytes() for p in path.iterdir()} == before
    assert sorted(p.name for p in tmp.iterdir()) == ["out"]  # no temporary directory left
    MimickModel.from_disk(path)
    return result.stdout.strip() + "; the previous model loads unchanged"


@scenario("train-lr-nan", "options", "--lr nan", "train v.txt OUT --lr nan",
          "bad training option: learning_rate must be a finite number > 0, got nan")
def _(tmp):
    return cli("train", vectors_file(tmp), tmp / "out", "--lr", "nan")


@scenario("train-max-epochs-0", "options", "--max-epochs 0", "train v.txt OUT --max-epochs 0",
          "max_epochs must be a whole number >= 1, got 0")
def _(tmp):
    return cli("train", vectors_file(tmp), tmp / "out", "--max-epochs", 0)


@scenario("train-batch-size-0", "options", "--batch-size 0", "train v.txt OUT --batch-size 0",
          "batch_size must be a whole number >= 1, got 0")
def _(tmp):
    return cli("train", vectors_file(tmp), tmp / "out", "--batch-size", 0)


@scenario("train-cosine-huge", "bad values", "--loss cosine on rows of huge values", "train v.txt OUT --loss cosine",
          "have values too large to train on")
def _(tmp):
    path = vectors_file(tmp)
    with path.open("a") as f:
        f.write("enormous" + " 3e19" * DIM + "\n")
    out = cli("train", path, tmp / "out", "--loss", "cosine", "--quiet")
    assert not (tmp / "out").exists()
    return out


@scenario("train-sigint", "signals", "Ctrl-C (SIGINT) in the second epoch", "train v.txt OUT",
          "Interrupted: saved the best epoch so far (epoch 1", exit="130")
def _(tmp):
    original = mimick_trainer.tqdm

    def interrupting(batches, desc="", **kw):
        if desc == "epoch 2":
            raise KeyboardInterrupt
        return original(batches, desc=desc, **kw)

    mimick_trainer.tqdm = interrupting
    try:
        out = cli("train", vectors_file(tmp), tmp / "out", "--quiet", "--max-epochs", 5)
    finally:
        mimick_trainer.tqdm = original
    assert MimickModel.from_disk(tmp / "out").meta["best_epoch"] == 1
    return out


@scenario("convert-same-name", "data loss", "two inputs with the same file name", "convert a/x.conllu b/x.conllu -o OUT",
          "would both be written to")
def _(tmp):
    out = cli("convert", conllu_file(tmp, name="a/x.conllu"), conllu_file(tmp, name="b/x.conllu"),
              "-o", tmp / "out")
    assert not (tmp / "out").exists() or not any((tmp / "out").iterdir())
    return out


@scenario("tag-interrupted", "signals", "Ctrl-C while tagging, over an existing output", "tag PIPELINE x.conllu y.conllu",
          "not written (a file already there is unchanged)", exit="130")
def _(tmp):
    output = tmp / "y.conllu"
    output.write_text("previous output")
    out = cli("tag", pipeline_dir(tmp, fail_after=2), conllu_file(tmp), output)
    assert output.read_text() == "previous output"
    assert sorted(p.name for p in tmp.iterdir() if p.is_file()) == ["x.conllu", "y.conllu"]
    return out


# Memory

def _owner(array: numpy.ndarray) -> numpy.ndarray:
    """The array that owns ``array``'s memory."""
    while isinstance(array.base, numpy.ndarray):
        array = array.base
    return array


@scenario("cache-memory", "memory", "20,000 distinct OOV words streamed with cache_size=100", "nlp.pipe(texts)",
          "the cache holds 100 vectors of 32 bytes, each its own array", exit="-")
def _(tmp):
    nlp = nlp_with_mimick(cache_size=100, lowercase_backoff=False)
    words = [f"zq{i}x" for i in range(20000)]
    texts = [" ".join(words[i : i + 50]) for i in range(0, len(words), 50)]
    for doc in nlp.pipe(texts, batch_size=20):
        pass
    vectors = list(nlp.vocab.vectors._cache.values())
    bases = {id(b): b for b in (_owner(v) for v in vectors)}
    # Views would keep each batch's whole prediction matrix (1,000 x 8 float32) alive.
    assert sum(b.nbytes for b in bases.values()) == len(vectors) * 4 * DIM
    assert all(not v.flags.writeable for v in vectors)
    return f"the cache holds {len(vectors)} vectors of {vectors[0].nbytes} bytes, each its own array"


# Clear errors

@scenario("gz-truncated", "clear errors", "a truncated .gz vectors file", "train v.txt.gz OUT",
          "the compressed data ends early")
def _(tmp):
    data = gzip.compress(vectors_file(tmp).read_bytes())
    (tmp / "v.txt.gz").write_bytes(data[: len(data) // 2])
    return cli("train", tmp / "v.txt.gz", tmp / "out", "--quiet")


@scenario("gz-corrupt", "clear errors", "a corrupt .gz vectors file", "train v.txt.gz OUT",
          "the compressed data is corrupt")
def _(tmp):
    data = bytearray(gzip.compress(vectors_file(tmp).read_bytes()))
    data[len(data) // 2 : len(data) // 2 + 40] = b"\xff" * 40
    (tmp / "v.txt.gz").write_bytes(bytes(data))
    return cli("train", tmp / "v.txt.gz", tmp / "out", "--quiet")


NAVEC = REPO.parent / "shared" / "data" / "embeddings" / "navec_news_v1_1B_250K_300d_100q.tar"


def navec_archive(tmp: Path, vocab=lambda b: b, pq=lambda b: b) -> Path:
    """The navec archive with its members changed by ``vocab`` / ``pq`` (None: a folder instead)."""
    import io
    import tarfile

    with tarfile.open(NAVEC) as tar:
        members = {name: tar.extractfile(name).read() for name in ("vocab.bin", "pq.bin")}
    path = tmp / "navec.tar"
    with tarfile.open(path, "w") as tar:
        for name, change in (("vocab.bin", vocab), ("pq.bin", pq)):
            data = change(members[name])
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@scenario("navec-truncated", "clear errors", "a navec archive cut short (the first 10 MB of 26)", "train x.tar OUT",
          "navec.tar: the archive ends early or is corrupt (unexpected end of data; truncated download or copy?)")
def _(tmp):
    (tmp / "navec.tar").write_bytes(NAVEC.read_bytes()[:10_000_000])
    return cli("train", tmp / "navec.tar", tmp / "out", "--quiet")


@scenario("navec-short-pq", "clear errors", "a navec archive whose pq.bin holds 10 bytes", "train x.tar OUT",
          "navec.tar:pq.bin: holds 10 byte(s), expected a 16-byte header")
def _(tmp):
    return cli("train", navec_archive(tmp, pq=lambda b: b[:10]), tmp / "out", "--quiet")


@scenario("navec-short-counts", "clear errors", "a navec vocab.bin cut inside its word counts", "train x.tar OUT",
          "navec.tar:vocab.bin: ends after 1,000 of the 250,002 word counts it announces")
def _(tmp):
    def cut(data):
        return gzip.compress(gzip.decompress(data)[: 4 + 4 * 1000 + 1])

    return cli("train", navec_archive(tmp, vocab=cut), tmp / "out", "--quiet")


@scenario("navec-member-folder", "clear errors", "a navec archive whose pq.bin is a folder", "train x.tar OUT",
          "navec.tar: pq.bin in the archive is not a file")
def _(tmp):
    return cli("train", navec_archive(tmp, pq=lambda b: None), tmp / "out", "--quiet")


@scenario("cache-nan", "clear errors", "NaN written into the vectors cache of a clean vectors file",
          "train v.txt OUT", "the vectors cache CACHE is damaged (its arrays do not match the checksum they were "
          "written with): ignoring it, reading v.txt again and replacing it", exit="0")
def _(tmp):
    from spacy_mimick.vectors import vectors_cache

    source = vectors_file(tmp)
    previous = os.environ.get(vectors_cache.ENV_VAR)
    os.environ[vectors_cache.ENV_VAR] = str(tmp / "cache")
    try:
        assert "[exit 0]" in cli("train", source, tmp / "out", "--quiet", "--max-epochs", 1)
        (cached,) = (tmp / "cache").iterdir()
        with numpy.load(cached) as data:
            arrays = {name: data[name].copy() for name in data.files}
        arrays["matrix"][3, 5] = numpy.nan  # the cache file damaged, its header intact
        with cached.open("wb") as f:
            numpy.savez(f, **arrays)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = cli("train", source, tmp / "out", "--quiet", "--max-epochs", 1)
        with numpy.load(cached) as data:  # replaced by a clean read of the source
            assert numpy.isfinite(data["matrix"]).all()
    finally:
        if previous is None:
            del os.environ[vectors_cache.ENV_VAR]
        else:
            os.environ[vectors_cache.ENV_VAR] = previous
    (warning,) = [str(w.message) for w in caught if "vectors cache" in str(w.message)]
    assert str(cached) in warning and "not finite" not in out and "too large" not in out, out
    return warning.replace(str(cached), "CACHE").replace(str(source), "v.txt") + "\n" + out


LATIN1 = CONLLU.replace("cat", "caf\u00e9").encode("latin-1")


@scenario("convert-non-utf8", "clear errors", "a Latin-1 CoNLL-U file", "convert x.conllu",
          "x.conllu:2: byte(s) b'\\xe9' at column 17 are not UTF-8")
def _(tmp):
    return cli("convert", conllu_file(tmp, data=LATIN1), "-o", tmp)


@scenario("tag-non-utf8", "clear errors", "a Latin-1 CoNLL-U file", "tag PIPELINE x.conllu y.conllu",
          "x.conllu:2: byte(s) b'\\xe9' at column 17 are not UTF-8")
def _(tmp):
    return cli("tag", pipeline_dir(tmp), conllu_file(tmp, data=LATIN1), tmp / "y.conllu")


LATIN1_WORDS = "cat\ncaf\u00e9\n".encode("latin-1")


@scenario("predict-words-non-utf8", "clear errors", "a Latin-1 --words-file", "predict MODEL --words-file w.txt",
          "w.txt:2: byte(s) b'\\xe9' at column 4 (byte 7 of the file) are not UTF-8")
def _(tmp):
    (tmp / "w.txt").write_bytes(LATIN1_WORDS)
    return cli("predict", model_dir(tmp), "--words-file", tmp / "w.txt")


@scenario("neighbors-words-non-utf8", "clear errors", "a Latin-1 --words-file", "neighbors MODEL v.txt --words-file w.txt",
          "w.txt:2: byte(s) b'\\xe9' at column 4 (byte 7 of the file) are not UTF-8")
def _(tmp):
    (tmp / "w.txt").write_bytes(LATIN1_WORDS)
    return cli("neighbors", model_dir(tmp), vectors_file(tmp), "--words-file", tmp / "w.txt")


@scenario("conllu-cycle", "clear errors", "HEADs forming a cycle", "convert x.conllu",
          "x.conllu:3: HEAD cycle through words 1 -> 2 -> 1")
def _(tmp):
    text = CONLLU.replace("2\tcat\tcat\tNOUN\t_\tNumber=Sing\t3", "2\tcat\tcat\tNOUN\t_\tNumber=Sing\t1")
    return cli("convert", conllu_file(tmp, text), "-o", tmp)


@scenario("conllu-self-head", "clear errors", "a word that is its own HEAD", "convert x.conllu",
          "x.conllu:4: HEAD of word 2 is the word itself")
def _(tmp):
    text = CONLLU.replace("2\tcat\tcat\tNOUN\t_\tNumber=Sing\t3", "2\tcat\tcat\tNOUN\t_\tNumber=Sing\t2")
    return cli("convert", conllu_file(tmp, text), "-o", tmp)


@scenario("conllu-tabs-line", "clear errors", "a tabs-only line inside a sentence", "convert x.conllu",
          "x.conllu:4: a line of only whitespace")
def _(tmp):
    text = CONLLU.replace("det\t_\t_\n", "det\t_\t_\n\t\t\n", 1)
    return cli("convert", conllu_file(tmp, text), "-o", tmp)


for _kind, _text in (("empty", ""), ("comments-only", "# just a comment\n# another\n"), ("blank-only", "\n\n\n")):
    scenario(f"convert-{_kind}", "clear errors", f"an {_kind} CoNLL-U file" if _kind == "empty" else f"a {_kind} CoNLL-U file",
             "convert x.conllu", "x.conllu: no sentences")(
        lambda tmp, _text=_text: cli("convert", conllu_file(tmp, _text), "-o", tmp))


@scenario("tag-empty", "clear errors", "an empty CoNLL-U file", "tag PIPELINE x.conllu y.conllu", "x.conllu: no sentences")
def _(tmp):
    out = cli("tag", pipeline_dir(tmp), conllu_file(tmp, ""), tmp / "y.conllu")
    assert not (tmp / "y.conllu").exists()
    return out


@scenario("tag-no-tagger", "clear errors", "a pipeline without a tagger", "tag PIPELINE x.conllu y.conllu",
          "has no component that predicts UPOS or FEATS")
def _(tmp):
    return cli("tag", pipeline_dir(tmp, component=None), conllu_file(tmp), tmp / "y.conllu")


for _command in ("neighbors", "extend", "similarity"):
    def _dims(tmp, command=_command):
        vectors, model = vectors_file(tmp, dim=12), model_dir(tmp)
        pairs = tmp / "pairs.txt"
        pairs.write_text("cat dog 5\nfoo bar 1\n")
        args = {"neighbors": (model, vectors, "flatfish"),
                "extend": (model, vectors, tmp / "out.vec", "--all-rows"),
                "similarity": (pairs, vectors, "--model", model)}[command]
        return cli(command, *args)

    scenario(f"{_command}-width", "clear errors", "an 8-d model with 12-d vectors", f"{_command} MODEL v.txt ...",
             "predicts 8-dimensional vectors but")(_dims)


@scenario("similarity-all-oov", "clear errors", "a similarity file whose pairs are all OOV", "similarity pairs.txt v.txt",
          "none of the 2 pairs of", exit="0")
def _(tmp):
    pairs = tmp / "pairs.txt"
    pairs.write_text("qqqq zzzz 5\nxxxx yyyy 1\n")
    return cli("similarity", pairs, vectors_file(tmp))


@scenario("model-no-ngrams", "clear errors", "features.json without ngrams", "predict MODEL word",
          "features.json: missing 'ngrams'")
def _(tmp):
    path = model_dir(tmp)
    (path / "features.json").write_text("{}")
    return cli("predict", path, "word")


@scenario("model-no-architecture", "clear errors", "config.json without architecture", "predict MODEL word",
          "config.json: missing 'architecture'")
def _(tmp):
    path = model_dir(tmp)
    (path / "config.json").write_text('{"format_version": 1, "width": 8}')
    return cli("predict", path, "word")


@scenario("model-missing", "clear errors", "a model directory that does not exist", "predict MODEL word",
          "not a Mimick model directory")
def _(tmp):
    return cli("predict", tmp / "nothing", "word")


@scenario("vectors-bom", "silent changes", "a UTF-8 BOM before the first word", "read_vectors(v.txt)",
          "first word 'the'", exit="-")
def _(tmp):
    (tmp / "v.txt").write_bytes(b"\xef\xbb\xbfthe 1 2\ncat 3 4\n")
    return f"first word {read_vectors(tmp / 'v.txt').words[0]!r}"


@scenario("vectors-invisible", "silent changes", "rows for '\\u200b' and '\\xa0'", "read_vectors(v.txt)",
          "skipped 2 row(s) whose word has no visible character", exit="-")
def _(tmp):
    (tmp / "v.txt").write_text("the 1 2\n\u200b 3 4\n\xa0 5 6\nx\u200by 7 8\n", encoding="utf8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        words = read_vectors(tmp / "v.txt").words
    assert words == ["the", "x\u200by"]
    return str(caught[0].message)


@scenario("whitespace-token", "consistency", "a whitespace token (`is_space`)", "nlp('a  b')[1].has_vector",
          "False, as in spaCy", exit="-")
def _(tmp):
    doc = nlp_with_mimick()("zqx  \n zqy")
    spaces = [t for t in doc if t.is_space]
    assert spaces and all(not t.has_vector and not t.vector.any() for t in spaces)
    assert all(t.has_vector for t in doc if not t.is_space)
    return f"{spaces[0].has_vector}, as in spaCy"


@scenario("edit-oov-vector", "consistency", "editing an OOV token.vector in place", "doc[0].vector[:] = 0",
          "ValueError: assignment destination is read-only", exit="-")
def _(tmp):
    nlp = nlp_with_mimick()
    before = nlp("zqxw")[0].vector.copy()

    def edit():
        nlp("zqxw")[0].vector[:] = 0

    seen = api_error(edit)
    numpy.testing.assert_array_equal(nlp("zqxw")[0].vector, before)
    return seen


# Model files, full disks, signals and concurrent saves

EWT_TRAIN = REPO.parent / "shared" / "data" / "ud" / "UD_English-EWT" / "en_ewt-ud-train.conllu"


def tagger_pipeline(tmp: Path) -> Path:
    """A small saved mimick_tagger pipeline (no vectors), initialized on 20 EWT sentences."""
    from spacy.training import Example
    from spacy_mimick.ud.corpus import read_conllu

    nlp = spacy.blank("en")
    nlp.add_pipe("mimick_tagger", config={"model": {"@architectures": "spacy_mimick.MimickTagger.v1",
                                                    "hidden_width": 8, "char_embed": 0}})
    refs = list(read_conllu(EWT_TRAIN, nlp.vocab, limit=20))
    nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=[t.text for t in r]), r) for r in refs])
    path = tmp / "tagger"
    nlp.to_disk(path)
    return path


class _RunsCode:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@scenario("tagger-pickle", "security", "a saved mimick_tagger whose torch state is a pickle that runs a command, "
          "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1", "tag PIPELINE x.conllu y.conllu",
          "the saved weights hold something other than tensors, refusing to load them")
def _(tmp):
    import io
    import srsly

    path = tagger_pipeline(tmp)
    # Pipelines saved before the tagger read its weights itself hold the same bytes: they load.
    assert spacy.load(path).get_pipe("mimick_tagger").labels
    weights = path / "mimick_tagger" / "model"
    msg = srsly.msgpack_loads(weights.read_bytes())
    marker = tmp / "ran"
    payload = io.BytesIO()
    torch.save(_RunsCode(marker), payload)
    shims = [i for i, node in enumerate(msg["shims"]) if node]
    shim = srsly.msgpack_loads(msg["shims"][shims[0]][0])
    shim["state"] = payload.getvalue()
    msg["shims"][shims[0]][0] = srsly.msgpack_dumps(shim)
    weights.write_bytes(srsly.msgpack_dumps(msg))
    previous = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        out = cli("tag", path, conllu_file(tmp), tmp / "y.conllu")
    finally:
        if previous is None:
            del os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"]
        else:
            os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = previous
    assert not marker.exists(), "the pickle's command ran"
    return out


def ewt_slice(tmp: Path, n_sentences: int, name: str = "ewt.conllu") -> Path:
    """The first ``n_sentences`` sentences of EWT's training file."""
    text = EWT_TRAIN.read_text(encoding="utf8")
    path = tmp / name
    path.write_text("\n\n".join(text.split("\n\n")[:n_sentences]) + "\n\n", encoding="utf8")
    return path


def run_limited(args: List[str], file_size_limit: int) -> subprocess.CompletedProcess:
    """Run ``python -m spacy_mimick ARGS`` in a process whose files may not grow past
    ``file_size_limit`` bytes (``ulimit -f``): every write past it fails as on a full disk."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run([sys.executable, "-m", "spacy_mimick", *map(str, args)], capture_output=True,
                          text=True, preexec_fn=limit, cwd=PACKAGE_ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})


def seen(result: subprocess.CompletedProcess) -> str:
    return f"{result.stdout}{result.stderr} [exit {result.returncode}]"


@scenario("convert-full-disk", "data loss", "the disk fills up while convert writes over a good .spacy (ulimit -f)",
          "convert x.conllu -o OUT", "could not write the output: File too large (nothing was replaced")
def _(tmp):
    source = ewt_slice(tmp, 200, "x.conllu")
    out_dir = tmp / "out"
    assert "[exit 0]" in cli("convert", source, "-o", out_dir)
    good = (out_dir / "x.spacy").read_bytes()
    source.write_text(source.read_text(encoding="utf8") * 3, encoding="utf8")  # a bigger output
    result = run_limited(["convert", source, "-o", out_dir], len(good) + 100)
    assert (out_dir / "x.spacy").read_bytes() == good  # the previous output, whole
    assert sorted(p.name for p in out_dir.iterdir()) == ["x.spacy"]  # no temporary file left
    assert len(list(DocBin().from_disk(out_dir / "x.spacy").get_docs(spacy.blank("xx").vocab))) == 200
    return seen(result)


@scenario("extend-same-file", "data loss", "the same vectors file as input and output", "extend MODEL v.txt v.txt",
          "is the input file")
def _(tmp):
    path = vectors_file(tmp)
    before = path.read_bytes()
    out = cli("extend", model_dir(tmp), path, path, "--all-rows")
    assert path.read_bytes() == before
    return out


@scenario("predict-same-file", "data loss", "the words file as the output", "predict MODEL --words-file w.txt -o w.txt",
          "is the input file")
def _(tmp):
    path = tmp / "w.txt"
    path.write_text("cat\ndog\n")
    out = cli("predict", model_dir(tmp), "--words-file", path, "-o", path)
    assert path.read_text() == "cat\ndog\n"
    return out


@scenario("extend-full-disk", "data loss", "the disk fills up while extend writes over an existing output (ulimit -f)",
          "extend MODEL v.txt out.txt", "could not write the output: File too large")
def _(tmp):
    source = vectors_file(tmp, n=2000)
    output = tmp / "out.txt"
    output.write_text("previous output\n")
    result = run_limited(["extend", model_dir(tmp), source, output, "--all-rows"], 20000)
    assert output.read_text() == "previous output\n"
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".")) == []  # no debris
    return seen(result)


@scenario("tag-full-disk", "data loss", "the disk fills up while tag writes (ulimit -f)", "tag PIPELINE x.conllu y.conllu",
          "could not write the output: File too large")
def _(tmp):
    source = ewt_slice(tmp, 300, "x.conllu")
    output = tmp / "y.conllu"
    output.write_text("previous output")
    result = run_limited(["tag", tagger_pipeline(tmp), source, output], 20000)
    assert output.read_text() == "previous output"
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".")) == []  # no temporary file left
    return seen(result)


@scenario("extend-whitespace-word", "clear errors", "a vocabulary word holding a space", "predict MODEL 'New York' -o out.txt",
          "word 'New York' (index 0) contains whitespace")
def _(tmp):
    out = cli("predict", model_dir(tmp), "New York", "-o", tmp / "out.txt")
    assert not (tmp / "out.txt").exists() and not [p for p in tmp.iterdir() if p.name.startswith(".")]
    return out


@scenario("predict-whitespace-word", "silent changes", "a word holding a space, printed", "predict MODEL cat 'New York'",
          "word 'New York' (index 1) contains whitespace, which word2vec text cannot hold: a reader "
          "splits the line there")
def _(tmp):
    out = cli("predict", model_dir(tmp), "cat", "New York")
    assert "cat " not in out  # refused before anything is printed
    return out


@scenario("tag-missing-folder", "clear errors", "an output folder that does not exist", "tag PIPELINE x.conllu no/y.conllu",
          "is not an existing folder: cannot write")
def _(tmp):
    out = cli("tag", pipeline_dir(tmp), conllu_file(tmp), tmp / "no" / "y.conllu")
    assert ".tmp" not in out
    return out


@scenario("save-stale-debris", "debris and concurrency", "temporary folders of earlier saves that were killed midway, and a kill "
          "between the two renames", "MimickModel.to_disk(OUT)", "cleaned up; the moved-aside model was put back",
          exit="-")
def _(tmp):
    path = model_dir(tmp, "out")
    (tmp / ".out.tmp-abc").mkdir()
    (tmp / ".out.tmp-abc" / "model.pt").write_bytes(b"partial")
    (tmp / ".out.old-def").mkdir()
    os.replace(path, tmp / ".out.old-def" / "model")  # killed after moving the old model aside
    previous = MimickModel.from_disk(tmp / ".out.old-def" / "model")
    MimickModel.from_disk(model_dir(tmp, "other")).to_disk(tmp / "other")  # another name: untouched
    assert (tmp / ".out.tmp-abc").exists()
    previous.to_disk(path)
    assert sorted(p.name for p in tmp.iterdir()) == ["other", "out"]
    MimickModel.from_disk(path)
    return "cleaned up; the moved-aside model was put back"


@scenario("save-race", "debris and concurrency", "two processes saving the same OUT in a loop, a third loading it "
          "in a loop", "MimickModel.to_disk(OUT), MimickModel.from_disk(OUT)",
          "all finish; every load sees a whole model; no temporary folder left", exit="-")
def _(tmp):
    path = model_dir(tmp, "out")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(PACKAGE_ROOT)!r})
        from spacy_mimick.vectors.mimick_model import MimickModel
        m = MimickModel.from_disk({str(path)!r})
        for _ in range(30):
            if sys.argv[1] == "save":
                m.to_disk({str(path)!r})
            else:
                MimickModel.from_disk({str(path)!r})
    """)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", code, role], stderr=subprocess.PIPE, text=True, env=env)
             for role in ("save", "save", "load")]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert sorted(p.name for p in tmp.iterdir()) == ["out"]
    MimickModel.from_disk(path)
    return "all finish; every load sees a whole model; no temporary folder left"


@scenario("feats-twice", "silent changes", "FEATS naming a feature twice (Case=Nom|Case=Acc)", "convert x.conllu",
          "FEATS names Case twice in 'Case=Acc|Case=Nom': expected each feature once")
def _(tmp):
    return cli("convert", conllu_file(tmp, CONLLU.replace("Number=Sing", "Case=Acc|Case=Nom")), "-o", tmp / "out")


@scenario("train-sigterm", "signals", "SIGTERM (kill) after the first epoch", "train v.txt OUT",
          "Interrupted: saved the best epoch so far", exit="130")
def _(tmp):
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "spacy_mimick", "train", str(vectors_file(tmp, n=3000)),
                             str(tmp / "out"), "--quiet", "--max-epochs", "500", "--patience", "500"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=PACKAGE_ROOT,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.lstrip().startswith("epoch") and "dev loss" in line:
            proc.send_signal(signal.SIGTERM)
            break
    rest, _ = proc.communicate(timeout=120)
    assert MimickModel.from_disk(tmp / "out").meta["best_epoch"] >= 1
    return "".join(lines) + rest + f" [exit {proc.returncode}]"


@scenario("import-original-bomb", "security", "a small .tar.gz whose .bin unpacks to 70 MB", "import-original x.tar.gz OUT",
          "more than the 67,108,864 a released model file can hold; refusing to read it")
def _(tmp):
    import io
    import tarfile

    archive = tmp / "en-lstm-est.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        for name, size in (("models/en-lstm-est.bin", 70 * 1024 * 1024), ("models/en-lstm-est.c2i", 10)):
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    out = cli("import-original", archive, tmp / "out")
    assert not (tmp / "out").exists()
    return out


def spawn(args: List, cwd: Path, code: Optional[str] = None) -> subprocess.Popen:
    """``python -m spacy_mimick ARGS`` (or ``python -c CODE ARGS``) as a real process in ``cwd``
    running the code under test, stdout and stderr together."""
    path = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))
    start = ["-c", code] if code is not None else ["-m", "spacy_mimick"]
    return subprocess.Popen([sys.executable, *start, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=cwd,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path})


def wait_for(pattern: str, folder: Path, proc: subprocess.Popen) -> None:
    """Until a file matching ``pattern`` appears in ``folder`` (the process must still run)."""
    import time

    while not list(folder.glob(pattern)):
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.005)


@scenario("tag-sigterm", "signals", "SIGTERM (kill) while tag writes over an existing output",
          "tag PIPELINE x.conllu y.conllu", "error: interrupted: y.conllu not written (a file already there is "
          "unchanged)", exit="130")
def _(tmp):
    import signal

    pipeline, source = tagger_pipeline(tmp), ewt_slice(tmp, 1500, "x.conllu")
    output = tmp / "y.conllu"
    output.write_text("previous output")
    proc = spawn(["tag", pipeline, source, output.name], cwd=tmp)
    wait_for(".y.conllu.*.tmp", tmp, proc)  # tagging and writing
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=120)[0]
    assert output.read_text() == "previous output"
    assert not [p for p in tmp.iterdir() if p.name.startswith(".")]  # no temporary file left
    assert len(out.strip().splitlines()) == 1, out
    return f"{out} [exit {proc.returncode}]"


GLOVE = REPO.parent / "shared" / "data" / "embeddings" / "glove.6B.50d.top100k.txt.gz"


def glove_pipeline(tmp: Path, rows: int = 300) -> Path:
    """A spaCy pipeline whose vectors are GloVe 50d's first ``rows`` rows (what ``spacy init
    vectors`` makes), and a 50-d Mimick model for it."""
    import itertools

    from spacy.training.initialize import convert_vectors

    text = tmp / "glove.txt"
    with gzip.open(GLOVE, "rt", encoding="utf8") as f:
        text.write_text("".join(itertools.islice(f, rows)), encoding="utf8")
    nlp = spacy.blank("en")
    convert_vectors(nlp, text, truncate=0, prune=-1)
    nlp.to_disk(tmp / "pipeline")
    model_dir(tmp, "mimick", dim=50)
    return tmp / "pipeline"


@scenario("add-full-disk", "data loss", "the disk fills up while add saves the pipeline (ulimit -f)",
          "add PIPELINE OUT --model MODEL", "could not write the pipeline (File too large); nothing was written there")
def _(tmp):
    pipeline = glove_pipeline(tmp)
    result = run_limited(["add", pipeline, tmp / "out", "--model", tmp / "mimick", "--quiet"], 20000)
    assert not (tmp / "out").exists() and not [p for p in tmp.iterdir() if p.name.startswith(".")]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    return seen(result)


# In a real process: Language.to_disk writes everything into add's temporary folder, says so
# and waits, so that the signal comes at the worst point (all written, nothing renamed yet).
SLOW_SAVE = textwrap.dedent("""
    import sys, time
    from spacy.language import Language
    from spacy_mimick.cli import app

    to_disk = Language.to_disk

    def waiting(self, path, **kw):
        to_disk(self, path, **kw)
        print("written", flush=True)
        time.sleep(120)

    Language.to_disk = waiting
    app(sys.argv[1:], prog_name="spacy_mimick")
""")


@scenario("add-sigterm", "signals", "SIGTERM (kill) when add has written the whole pipeline but not yet moved it "
          "into place", "add PIPELINE OUT --model MODEL", "error: interrupted: out not written (nothing was "
          "left there)", exit="130")
def _(tmp):
    import signal

    glove_pipeline(tmp)
    proc = spawn(["add", "pipeline", "out", "--model", "mimick", "--quiet"], cwd=tmp, code=SLOW_SAVE)
    lines = []
    for line in proc.stdout:
        if line.strip() == "written":
            assert [p.name for p in tmp.glob(".out.tmp-*/vocab")], list(tmp.iterdir())  # all there
            proc.send_signal(signal.SIGTERM)
            break
        lines.append(line)
    out = "".join(lines) + proc.communicate(timeout=120)[0]
    assert not (tmp / "out").exists() and not [p for p in tmp.iterdir() if p.name.startswith(".")]
    assert len(out.strip().splitlines()) == 1, out
    return f"{out} [exit {proc.returncode}]"


RELEASE = REPO.parent / "shared" / "data" / "original_mimick"

# In a real process: the model's weights are serialized after its two JSON files are written into
# the temporary folder; here that says so and waits, so that the signal comes in mid-save.
SLOW_WEIGHTS = textwrap.dedent("""
    import sys, time
    from spacy_mimick.cli import app
    from spacy_mimick.vectors.mimick_model import MimickModel

    weights = MimickModel._weights_bytes

    def waiting(self):
        data = weights(self)
        print("writing", flush=True)
        time.sleep(120)
        return data

    MimickModel._weights_bytes = waiting
    app(sys.argv[1:], prog_name="spacy_mimick")
""")


@scenario("import-original-sigterm", "signals", "SIGTERM (kill) while import-original saves over a model",
          "import-original x.tar.gz OUT", "error: interrupted: out not written (a model already there is "
          "unchanged)", exit="130")
def _(tmp):
    import signal

    before = {p.name: p.read_bytes() for p in model_dir(tmp, "out").iterdir()}
    proc = spawn(["import-original", RELEASE / "tr-lstm-est.tar.gz", "out"], cwd=tmp, code=SLOW_WEIGHTS)
    lines = []
    for line in proc.stdout:
        if line.strip() == "writing":
            assert list(tmp.glob(".out.tmp-*")), list(tmp.iterdir())  # mid-save
            proc.send_signal(signal.SIGTERM)
            break
        lines.append(line)
    out = "".join(lines) + proc.communicate(timeout=120)[0]
    assert {p.name: p.read_bytes() for p in (tmp / "out").iterdir()} == before
    assert sorted(p.name for p in tmp.iterdir()) == ["out"]  # no temporary folder left
    assert len(out.strip().splitlines()) == 1, out
    return f"{out} [exit {proc.returncode}]"


@scenario("spacy-train-no-mimick-model", "clear errors", "a config with mimick_vectors, no --paths.mimick_model",
          "init-config tagger_mimick.cfg --variant mimick; spacy train tagger_mimick.cfg ...", "[mimick_vectors] has no Mimick model: set "
          "--paths.mimick_model DIR on the spacy train command line, or "
          "[initialize.components.mimick_vectors] model_path in the config")
def _(tmp):
    from spacy_mimick.tagger.recipes import config_text

    pipeline, corpus = glove_pipeline(tmp), ewt_slice(tmp, 20)
    (tmp / "tagger_mimick.cfg").write_text(config_text("mimick"), encoding="utf8")
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", tmp / "tagger_mimick.cfg", "--paths.train", corpus,
         "--paths.dev", corpus, "--paths.vectors", pipeline], capture_output=True, text=True, cwd=tmp,
        env={**os.environ, "OMP_NUM_THREADS": "1",
             "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))})
    return seen(result)


@scenario("train-one-row", "clear errors", "a vectors file of one row", "train v.txt OUT",
          "v.txt: 1 word vector read; expected at least 2 rows to train Mimick")
def _(tmp):
    (tmp / "v.txt").write_text("cat 0.1 0.2 0.3\n")
    out = cli("train", tmp / "v.txt", tmp / "out", "--quiet", "--no-cache")
    assert not (tmp / "out").exists()
    return out


@scenario("train-full-disk", "data loss", "the disk fills up while train saves over a model (ulimit -f)",
          "train v.txt OUT", "could not write the model to out: File too large; the previous model there is unchanged")
def _(tmp):
    before = {p.name: p.read_bytes() for p in model_dir(tmp, "out").iterdir()}
    vectors_file(tmp)
    import resource

    result = subprocess.run(
        [sys.executable, "-m", "spacy_mimick", "train", "v.txt", "out", "--quiet", "--max-epochs", "1", "--no-cache"],
        capture_output=True, text=True, cwd=tmp,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (5000, 5000)),
        env={**os.environ, "OMP_NUM_THREADS": "1",
             "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))})
    assert {p.name: p.read_bytes() for p in (tmp / "out").iterdir()} == before
    assert sorted(p.name for p in tmp.iterdir()) == ["out", "v.txt"]  # no temporary folder left
    lines = result.stderr.splitlines()  # the epoch's log line, then the error
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], result.stderr
    return seen(result)


@scenario("train-two-runs", "debris and concurrency", "two train runs into one OUT: one saves while the other "
          "trains; the other then saves (here stopped by SIGTERM, which saves its best epoch)", "train v.txt OUT",
          "out: replaced the model another run saved there after this one started (best epoch 1, dev loss",
          exit="130")
def _(tmp):
    import signal

    vectors_file(tmp, n=3000)
    later = spawn(["train", "v.txt", "out", "--quiet", "--max-epochs", 500, "--patience", 500], cwd=tmp)
    lines = []
    for line in later.stdout:  # its first epoch: it looked at OUT long before
        lines.append(line)
        if line.lstrip().startswith("epoch") and "dev loss" in line:
            break
    first = spawn(["train", "v.txt", "out", "--quiet", "--max-epochs", 1, "--seed", 1], cwd=tmp)
    first_out = first.communicate(timeout=300)[0]
    assert first.returncode == 0 and "Saved Mimick model to out" in first_out and "replaced" not in first_out
    assert MimickModel.from_disk(tmp / "out").meta["train_config"]["seed"] == 1
    later.send_signal(signal.SIGTERM)
    out = "".join(lines) + later.communicate(timeout=120)[0]
    assert MimickModel.from_disk(tmp / "out").meta["train_config"]["seed"] == 0  # the later save's
    assert sorted(p.name for p in tmp.iterdir()) == ["out", "v.txt"]
    return f"{out} [exit {later.returncode}]"


@scenario("tag-crlf", "silent changes", "a CoNLL-U file with CRLF line endings", "tag PIPELINE x.conllu y.conllu",
          "tagged 2 sentences, 5 words", exit="0")
def _(tmp):
    source = conllu_file(tmp, data=CONLLU.replace("\n", "\r\n").encode("utf8"))
    out = cli("tag", pipeline_dir(tmp), source, tmp / "y.conllu")
    written = (tmp / "y.conllu").read_bytes()
    assert written.count(b"\r\n") == written.count(b"\n") == CONLLU.count("\n")  # every line keeps CRLF
    assert b"\tNOUN\t" in written
    return out


@scenario("convert-multiword-only", "clear errors", "a CoNLL-U file of multiword-token lines only", "convert x.conllu",
          "holds only comments, blank lines, multiword-token ranges or empty nodes")
def _(tmp):
    return cli("convert", conllu_file(tmp, "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n\n"), "-o", tmp / "out")


# Errors and consistency of the core readers and the component

@scenario("ragged-rows", "clear errors", "a row with too few values", "train v.txt OUT", "found 7 values, expected 8")
def _(tmp):
    path = vectors_file(tmp)
    lines = path.read_text().splitlines()
    lines[5] = lines[5].rsplit(" ", 1)[0]
    path.write_text("\n".join(lines) + "\n")
    return cli("train", path, tmp / "out", "--quiet")


@scenario("nan-rows", "bad values", "a row with nan or inf", "train v.txt OUT", "value nan is not finite")
def _(tmp):
    path = vectors_file(tmp)
    lines = path.read_text().splitlines()
    lines[5] = lines[5].rsplit(" ", 1)[0] + " nan"
    path.write_text("\n".join(lines) + "\n")
    return cli("train", path, tmp / "out", "--quiet")


@scenario("duplicates", "clear errors", "a word on two rows", "train v.txt OUT", "duplicate word, first read at line 1")
def _(tmp):
    path = vectors_file(tmp)
    lines = path.read_text().splitlines()
    lines[5] = lines[0].split(" ", 1)[0] + " " + lines[5].split(" ", 1)[1]
    path.write_text("\n".join(lines) + "\n")
    return cli("train", path, tmp / "out", "--quiet")


@scenario("truncated-model", "clear errors", "a truncated model.pt", "predict MODEL word",
          "the weights could not be loaded (truncated or corrupt file?)")
def _(tmp):
    path = model_dir(tmp)
    data = (path / "model.pt").read_bytes()
    (path / "model.pt").write_bytes(data[: len(data) // 2])
    return cli("predict", path, "word")


@scenario("pipeline-width", "clear errors", "an 8-d model in a pipeline with 12-d vectors", "mimick.set_model(model)",
          "the Mimick model predicts 8-dimensional vectors but the pipeline's vectors are 12-dimensional", exit="-")
def _(tmp):
    nlp = nlp_with_mimick(table(dim=12))
    return api_error(lambda: nlp.get_pipe("mimick_vectors").set_model(model()))


def _oov_vectors(docs) -> List[numpy.ndarray]:
    return [numpy.array(t.vector) for doc in docs for t in doc]


@scenario("docbin", "consistency", "docs through DocBin", "DocBin(docs=docs).get_docs(nlp.vocab)",
          "same vectors", exit="-")
def _(tmp):
    nlp = nlp_with_mimick()
    docs = list(nlp.pipe(["zqxw cat", "zqyy"]))
    loaded = list(DocBin(docs=docs).get_docs(nlp.vocab))
    ok = all(numpy.array_equal(a, b) for a, b in zip(_oov_vectors(docs), _oov_vectors(loaded)))
    return "same vectors" if ok else "different vectors"


@scenario("pickle", "consistency", "pickled docs", "pickle.loads(pickle.dumps(doc))", "same vectors", exit="-")
def _(tmp):
    nlp = nlp_with_mimick()
    docs = list(nlp.pipe(["zqxw cat", "zqyy"]))
    loaded = [pickle.loads(pickle.dumps(d)) for d in docs]
    ok = all(numpy.array_equal(a, b) for a, b in zip(_oov_vectors(docs), _oov_vectors(loaded)))
    return "same vectors" if ok else "different vectors"


@scenario("n-process", "consistency", "nlp.pipe(n_process=2)", "nlp.pipe(texts, n_process=2)", "same vectors", exit="-")
def _(tmp):
    nlp = nlp_with_mimick()
    texts = ["zqxw cat", "zqyy", "qqqz zqxw"] * 4
    one = list(nlp.pipe(texts))
    two = list(nlp.pipe(texts, n_process=2, batch_size=2))
    ok = all(numpy.array_equal(a, b) for a, b in zip(_oov_vectors(one), _oov_vectors(two)))
    return "same vectors" if ok else "different vectors"


@scenario("determinism", "consistency", "the same words twice, in another order", "model.predict(words)",
          "same vectors", exit="-")
def _(tmp):
    m = model()
    words = ["zqxw", "cat", "flatfish", "a"]
    first = m.predict(words)
    again = m.predict(words[::-1])[::-1]
    return "same vectors" if numpy.array_equal(first, again) else "different vectors"


# --- tests --------------------------------------------------------------------------------------

def _normalized(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("case", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(case: Scenario, tmp_path):
    seen = case.run(tmp_path)
    assert "Traceback" not in seen, seen
    assert _normalized(case.sees) in _normalized(seen), seen
    if case.exit != "-":
        assert seen.endswith(f"[exit {case.exit}]"), seen


def render() -> str:
    lines = [
        "# Reliability: bad input and faults",
        "",
        "What the user sees for each bad input or fault. Generated from the scenarios of",
        "`tests/test_reliability.py`, which run each case (the CLI as a user runs it, or the Python",
        "API) and check the message and exit code below against the real behaviour;",
        "`python tests/test_reliability.py` rewrites this file and a test checks it is up to date.",
        "CLI errors are one line, `error: ...`, naming the file, line or word and what was expected,",
        "with exit code 1 and no traceback (`spacy_mimick/cli/user_errors.py`). \"-\": Python API.",
        "",
        "Policies: files are never written in place: every output goes through",
        "`spacy_mimick/atomic.py` (a temporary file or folder beside the target, renamed at the",
        "end, removed on any error, full disk, Ctrl-C or SIGTERM), so a failed or interrupted run",
        "leaves what was there and no debris. Saves of one model folder take a lock and clean up",
        "what killed saves left; loads take the lock shared, so they never see a save halfway.",
        "`train` checks its options and OUT before reading the vectors;",
        "it replaces a Mimick model in OUT (saying so; `--no-overwrite` refuses instead) but never a",
        "directory holding anything else. Ctrl-C or SIGTERM after the first epoch saves the best",
        "epoch so far (exit 130). No code runs from a model file. Whitespace tokens get no vector,",
        "as in spaCy; punctuation-only tokens are words like others (vector tables have rows for",
        "punctuation), so OOV ones get Mimick's vector.",
        "",
        "| area | input | command | what the user sees (excerpt) | exit |",
        "|---|---|---|---|---|",
    ]
    for s in sorted(SCENARIOS, key=lambda s: AREAS.index(s.area)):  # stable: file order within an area
        sees = s.sees.replace("|", "\\|")
        lines.append(f"| {s.area} | {s.input} | `{s.command}` | {sees} | {s.exit} |")
    lines += [
        "",
        "Memory: `python benchmarks/oov_memory.py --model MODEL` streams 200,000 distinct OOV words",
        "through `mimick_vectors` (cache_size 5,000) and prints the RSS as it goes.",
        "",
    ]
    return "\n".join(lines)


def test_reliability_doc_is_up_to_date():
    assert DOC.read_text(encoding="utf8") == render(), "run: python tests/test_reliability.py"


def test_every_area_has_scenarios():
    assert [s.area for s in SCENARIOS if s.area not in AREAS] == []
    assert [a for a in AREAS if not any(s.area == a for s in SCENARIOS)] == []
    ids = [s.id for s in SCENARIOS]
    assert len(ids) == len(set(ids))


def test_folder_lock_shared_readers_exclusive_writers(tmp_path, monkeypatch):
    """Readers share the folder lock with each other, a writer waits for them (another thread:
    flock locks belong to open files, so they conflict within a process too); a filesystem
    without flock lets readers through and stops writers."""
    import fcntl
    import threading

    from spacy_mimick.atomic import folder_lock

    events = []
    with folder_lock(tmp_path, shared=True):
        with folder_lock(tmp_path, shared=True):  # re-entrant in this thread
            pass
        other_reader = threading.Thread(target=lambda: folder_lock_and_note(tmp_path, True, events))
        other_reader.start()
        other_reader.join(timeout=30)
        assert events == ["shared"]  # a second reader got in while this one reads
        writer = threading.Thread(target=lambda: folder_lock_and_note(tmp_path, False, events))
        writer.start()
        writer.join(timeout=0.5)
        assert writer.is_alive() and events == ["shared"]  # the writer waits for the reader
    writer.join(timeout=30)
    assert events == ["shared", "exclusive"]

    def no_flock(fd, operation):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    with folder_lock(tmp_path, shared=True):
        events.append("read without a lock")
    with pytest.raises(OSError, match="No locks available"):
        with folder_lock(tmp_path):
            pass
    assert events[-1] == "read without a lock"


def folder_lock_and_note(folder: Path, shared: bool, events: List[str]) -> None:
    from spacy_mimick.atomic import folder_lock

    with folder_lock(folder, shared=shared):
        events.append("shared" if shared else "exclusive")


if __name__ == "__main__":
    DOC.write_text(render(), encoding="utf8")
    print(f"wrote {DOC}")
