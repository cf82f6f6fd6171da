"""The glibc mmap-threshold fix that keeps long CPU trainings from growing without bound.

Each check runs in a fresh interpreter: the setting is process-wide and cannot be undone.
The probe frees an 18 MiB block (which, by default, raises glibc's mmap threshold to 18 MiB)
and then allocates 4 MiB: with the threshold fixed the 4 MiB block is mmapped (and will go back
to the system when freed); with glibc's default it comes from the heap.
"""
import os
import subprocess
import sys

import pytest

from conftest import REPO

PROBE = """
import ctypes
libc = ctypes.CDLL("libc.so.6")
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]

def mmapped_after_churn():
    libc.free(libc.malloc(18 << 20))
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(4 << 20)
    mmapped = libc.mallinfo2().hblkhd - before >= (4 << 20)
    libc.free(block)
    return mmapped
"""

TRAIN_ONE_STEP = """
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam
from spacy_mimick.ud.corpus import read_conllu
nlp = spacy.blank("en")
nlp.add_pipe("mimick_tagger", config={"model": {"@architectures": "spacy_mimick.MimickTagger.v1"}})
refs = list(read_conllu(%r, nlp.vocab, limit=20))
examples = [Example(Doc(nlp.vocab, words=[t.text for t in r]), r) for r in refs]
optimizer = Adam(0.001)
nlp.initialize(lambda: examples, sgd=optimizer)
import spacy_mimick.malloc
print("before update:", spacy_mimick.malloc._applied)
nlp.update(examples, sgd=optimizer)
print("after update:", spacy_mimick.malloc._applied)
"""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
    reason="the fix is specific to glibc; elsewhere fix_mmap_threshold returns False",
)


def _run(code: str, **env: str) -> str:
    full_env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    full_env.pop("SPACY_MIMICK_MMAP_THRESHOLD", None)
    full_env.update(env)
    result = subprocess.run(
        [sys.executable, "-c", PROBE + code], env=full_env, capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_glibc_default_moves_large_blocks_to_the_heap():
    # The behaviour being fixed: after an 18 MiB block is freed, 4 MiB blocks are not mmapped.
    assert _run("print(mmapped_after_churn())\n").split() == ["False"]


def test_fix_applies_once_and_keeps_large_blocks_mmapped():
    code = (
        "from spacy_mimick.malloc import fix_mmap_threshold\n"
        "print(fix_mmap_threshold(), fix_mmap_threshold(), mmapped_after_churn(), mmapped_after_churn())\n"
    )
    assert _run(code).split() == ["True", "True", "True", "True"]


def test_zero_leaves_glibc_alone():
    code = "from spacy_mimick.malloc import fix_mmap_threshold\nprint(fix_mmap_threshold(), mmapped_after_churn())\n"
    assert _run(code, SPACY_MIMICK_MMAP_THRESHOLD="0").split() == ["False", "False"]


def test_bad_setting_is_refused():
    code = "from spacy_mimick.malloc import fix_mmap_threshold\nfix_mmap_threshold()\n"
    full_env = dict(os.environ, SPACY_MIMICK_MMAP_THRESHOLD="lots")
    result = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True, cwd=REPO)
    assert result.returncode != 0
    assert "SPACY_MIMICK_MMAP_THRESHOLD must be a number of bytes" in result.stderr


def test_tagger_update_fixes_the_threshold(shared_data):
    from conftest import EWT

    out = _run(TRAIN_ONE_STEP % str(EWT / "en_ewt-ud-train.conllu"))
    assert "before update: None" in out
    assert "after update: True" in out
