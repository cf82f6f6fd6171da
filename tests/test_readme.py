"""The README's Quick start runs as written, as a newcomer would run it.

Every fenced ``bash`` and ``python`` block between "## Quick start" and the next "## " heading
runs, in order, in a clean copy of the repository's tracked files (no models/, corpus/,
training/ from earlier runs), with this interpreter's environment first on PATH (what an
activated virtual environment gives). The ``ini`` block must be a valid config fragment of the
components it names. The set-up commands are what CI itself runs (.ci/run).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from thinc.api import Config

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def quick_start_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf8")
    start = text.index("\n## Quick start\n")
    end = text.index("\n## ", start + 1)
    return FENCE.findall(text[start:end])


def test_quick_start_has_the_blocks_a_newcomer_runs():
    kinds = [kind for kind, _ in quick_start_blocks()]
    assert kinds.count("bash") >= 3 and kinds.count("python") == 1 and kinds.count("ini") == 1


def test_config_fragment_is_valid():
    (ini,) = [body for kind, body in quick_start_blocks() if kind == "ini"]
    # the fragment leaves out the parent sections a full config has
    config = Config().from_str("[components]\n[initialize]\n[initialize.components]\n" + ini, interpolate=False)
    nlp = spacy.blank("en")
    for name, settings in config["components"].items():
        factory_meta = nlp.get_factory_meta(settings["factory"])
        unknown = set(settings) - {"factory"} - set(factory_meta.default_config)
        assert not unknown, f"README config: {name} has no settings {unknown}"
    for name, settings in config["initialize"]["components"].items():
        assert name in config["components"] and settings


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("fresh_clone")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode("utf8").split("\0")):
        src = ROOT / rel
        if src.is_file():
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    return out


def test_quick_start_runs_as_written(clean_copy):
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    outputs = []
    for kind, body in quick_start_blocks():
        if kind == "bash":
            cmd = ["bash", "-euo", "pipefail", "-c", body]
        elif kind == "python":
            cmd = [sys.executable, "-c", body]
        else:
            continue
        result = subprocess.run(cmd, cwd=clean_copy, env=env, capture_output=True, text=True)
        assert result.returncode == 0, f"README block failed:\n{body}\n--- stderr ---\n{result.stderr[-3000:]}"
        outputs.append(result.stdout)
    # What the blocks promise: an OOV word with a vector, a saved pipeline with the component,
    # a tagged file with every input line kept, scores printed, fr pipeline with Mimick first.
    python_out = outputs[1]
    assert "lawnmowr True" in python_out and "'mimick_vectors'" in python_out
    predicted = (clean_copy / "models" / "predicted.conllu").read_text(encoding="utf8").splitlines()
    gold = (clean_copy / "assets" / "UD_English-EWT" / "en_ewt-ud-test.conllu").read_text(encoding="utf8").splitlines()
    assert len(predicted) == len(gold)
    assert "POS" in outputs[2]
    assert outputs[3].strip().splitlines()[-1].startswith("['mimick_vectors'")
