"""The command line: python -m spacy_mimick train / predict / neighbors / extend / similarity."""
import gzip
import subprocess
import sys

import numpy
from typer.testing import CliRunner

from conftest import EWT, GLOVE, RARE_WORD
from spacy_mimick.cli import app
from spacy_mimick.cli.mimick import read_words_file
from spacy_mimick.vectors.vectors_io import read_vectors

runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def small_glove(tmp_path, n=2000):
    path = tmp_path / "glove.txt.gz"
    with gzip.open(GLOVE, "rt") as src, gzip.open(path, "wt") as out:
        for i, line in zip(range(n), src):
            out.write(line)
    return path


def test_train_predict_neighbors(tmp_path):
    vectors = small_glove(tmp_path)
    model = tmp_path / "model"
    invoke("train", vectors, model, "--max-epochs", 2, "--quiet")
    assert (model / "model.pt").exists()
    paper = tmp_path / "paper"
    invoke("train", vectors, paper, "--paper", "--max-epochs", 1, "--quiet", "--model.hidden", 20)
    from spacy_mimick.vectors.mimick_model import MimickModel

    loaded = MimickModel.from_disk(paper)
    assert loaded.arch_config == {"@architectures": "spacy_mimick.Mimick.v1", "hidden": 20}
    assert loaded.meta["train_config"]["typo_prob"] == 0.0
    assert MimickModel.from_disk(model).arch_config["@architectures"] == "spacy_mimick.MimickNgram.v1"
    out = invoke("predict", model, "flatfish", "corssing")
    lines = out.strip().splitlines()
    assert [l.split()[0] for l in lines] == ["flatfish", "corssing"]
    assert all(len(l.split()) == 51 for l in lines)
    table = invoke("neighbors", model, vectors, "lawnmower", "-k", 3)
    assert "| lawnmower | no |" in table and table.count("(") >= 3


def test_extend_covers_conllu_vocabulary(tmp_path, tiny_mimick):
    vectors = small_glove(tmp_path)
    out = tmp_path / "extended.vec"
    conllu = EWT / "en_ewt-ud-dev.conllu"
    invoke("extend", tiny_mimick, vectors, out, "--conllu", conllu)
    extended = read_vectors(out)
    table = read_vectors(vectors)
    import spacy
    from spacy_mimick.ud.corpus import read_conllu

    words = {t.text for d in read_conllu(conllu, spacy.blank("en").vocab) for t in d}
    assert set(extended.words) == words
    for word in ("the", "of"):
        numpy.testing.assert_allclose(extended.get(word), table.get(word), atol=1e-6)


def test_extend_without_a_table_predicts_every_row(tmp_path, tiny_mimick):
    """A language with only a Mimick model (vectors ``none``): every word's row is Mimick's."""
    words = tmp_path / "words.txt"
    words.write_text("flatfish\ncorssing\nthe\n", encoding="utf8")
    out = tmp_path / "mimick_only.vec"
    invoke("extend", tiny_mimick, "none", out, "--words-file", words)
    extended = read_vectors(out)
    assert extended.words == ["flatfish", "corssing", "the"]
    from spacy_mimick.vectors.mimick_model import MimickModel

    expected = MimickModel.from_disk(tiny_mimick).predict(extended.words)
    numpy.testing.assert_allclose(extended.matrix, expected, atol=1e-5)
    failed = runner.invoke(app, ["extend", str(tiny_mimick), "none", str(tmp_path / "x.vec"), "--all-rows"])
    assert failed.exit_code != 0 and "give the words to cover" in failed.output
    assert not (tmp_path / "x.vec").exists()


def test_similarity_table(tmp_path, tiny_mimick):
    vectors = small_glove(tmp_path)
    out = invoke("similarity", RARE_WORD, vectors, "--model", tiny_mimick)
    assert "all pairs (N=2034)" in out
    rows = {l.split("|")[1].strip(): l for l in out.splitlines() if l.startswith("| ")}
    assert {"vectors", "vectors + mimick", "mimick"} <= set(rows)


def test_module_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "spacy_mimick", "--help"], capture_output=True, text=True, check=True)
    for command in ("train", "predict", "neighbors", "extend", "similarity", "convert"):
        assert command in out.stdout


def test_words_file_is_utf8_without_bom_or_blank_lines(tmp_path):
    """--words-file of predict / neighbors / extend (a non-UTF-8 file: tests/test_reliability.py)."""
    path = tmp_path / "words.txt"
    path.write_bytes("\ufeffcat\n\n  dog \r\ncaf\u00e9\n".encode("utf8"))
    assert read_words_file(path) == ["cat", "dog", "caf\u00e9"]
