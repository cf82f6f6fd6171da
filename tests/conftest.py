"""Shared test fixtures: the real data beside the checkout (../shared/data)."""
import shutil
import sysconfig
from pathlib import Path

import pytest
import torch

# Test models are tiny: one thread avoids oversubscribing the 2 CI cores.
torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
GLOVE = SHARED_DATA / "embeddings" / "glove.6B.50d.top100k.txt.gz"
NAVEC = SHARED_DATA / "embeddings" / "navec_news_v1_1B_250K_300d_100q.tar"
UD = SHARED_DATA / "ud"
EWT = UD / "UD_English-EWT"
RARE_WORD = SHARED_DATA / "similarity" / "en" / "rw.txt"


def first_sentences(path: Path, n: int) -> str:
    """The first ``n`` sentences of a CoNLL-U file, as CoNLL-U text."""
    return "\n\n".join(path.read_text(encoding="utf8").split("\n\n")[:n]) + "\n\n"


@pytest.fixture(scope="session", autouse=True)
def vectors_cache_dir(tmp_path_factory):
    """`train` caches parsed vectors (--cache): tests write that cache to a temporary directory,
    never to the user's ~/.cache."""
    import os

    path = tmp_path_factory.mktemp("vectors_cache")
    old = os.environ.get("SPACY_MIMICK_CACHE")
    os.environ["SPACY_MIMICK_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["SPACY_MIMICK_CACHE"]
    else:
        os.environ["SPACY_MIMICK_CACHE"] = old


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        raise RuntimeError(f"real test data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def glove_small():
    """The first 3,000 rows of the real GloVe 50d table."""
    from spacy_mimick.vectors.vectors_io import read_vectors

    return read_vectors(GLOVE, limit=3000)


@pytest.fixture(scope="session")
def tiny_mimick(glove_small, tmp_path_factory):
    """A paper-architecture Mimick model trained briefly on 3,000 GloVe words, saved to disk."""
    from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick

    result = train_mimick(
        glove_small, {"@architectures": "spacy_mimick.Mimick.v1"},
        TrainConfig(max_epochs=3, batch_size=64, dev_fraction=0.05), progress=False,
    )
    path = tmp_path_factory.mktemp("mimick") / "model"
    result.model.to_disk(path)
    return path


@pytest.fixture()
def nlp_glove(glove_small):
    """A blank English pipeline whose static vectors are the 3,000 GloVe rows."""
    import spacy
    from spacy.vectors import Vectors

    nlp = spacy.blank("en")
    for word in glove_small.words:  # as `spacy init vectors` does: the table's words are strings
        nlp.vocab.strings.add(word)
    nlp.vocab.vectors = Vectors(
        strings=nlp.vocab.strings, data=glove_small.matrix.copy(), keys=glove_small.words
    )
    return nlp


def can_build_extensions() -> bool:
    """Whether `pip install` here could compile a C extension: Python's C compiler and headers."""
    compiler = (sysconfig.get_config_var("CC") or "").split()
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return bool(compiler) and shutil.which(compiler[0]) is not None and headers.exists()
