"""Shared test fixtures: the real data beside the checkout (../shared/data)."""
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
GLOVE = SHARED_DATA / "embeddings" / "glove.6B.50d.top100k.txt.gz"
NAVEC = SHARED_DATA / "embeddings" / "navec_news_v1_1B_250K_300d_100q.tar"
UD = SHARED_DATA / "ud"
EWT = UD / "UD_English-EWT"
RARE_WORD = SHARED_DATA / "similarity" / "en" / "rw.txt"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        raise RuntimeError(f"real test data not found at {SHARED_DATA}")
    return SHARED_DATA
