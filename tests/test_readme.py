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
    # The neighbours the README shows: the default lookup finds `crossing` for `corssing` (the
    # gated spelling backoff), Mimick's vector alone does not.
    default, alone = [line.split("|")[3] for line in outputs[0].splitlines() if line.startswith("| corssing |")]
    assert "crossing" in [n.split("(")[0].strip() for n in default.split(",")][:5], outputs[0]
    assert "crossing" not in alone and "thrown" in alone, outputs[0]
    python_out = outputs[1]
    assert "lawnmowr True" in python_out and "'mimick_vectors'" in python_out
    predicted = (clean_copy / "models" / "predicted.conllu").read_text(encoding="utf8").splitlines()
    gold = (clean_copy / "assets" / "UD_English-EWT" / "en_ewt-ud-test.conllu").read_text(encoding="utf8").splitlines()
    assert len(predicted) == len(gold)
    assert "POS" in outputs[2]
    assert outputs[3].strip().splitlines()[-1].startswith("['mimick_vectors'")


# ---------------------------------------------------------------------------------------------
# Every path the README names is true, and the docs' links lead somewhere.

# Folders of the checkout whose paths the README may name: each must exist (a glob must match).
REPO_ROOTS = ("spacy_mimick", "configs", "docs", "benchmarks", "scripts", "tests", "assets")
# Folders that only the project's runs fill: a path there must be an output of the `all` workflow.
OUTPUT_ROOTS = ("metrics", "training", "packages")
PATH_RE = re.compile(r"(?<![\w./-])((?:%s)/[^\s`'\"()\[\]|,;:]*)" % "|".join(REPO_ROOTS + OUTPUT_ROOTS))


def readme_paths():
    """(path, kind) for every repository path the README names, anchors and trailing dots cut."""
    text = (ROOT / "README.md").read_text(encoding="utf8")
    found = set()
    for match in PATH_RE.finditer(text):
        path = match.group(1).split("#")[0].rstrip(".")
        if not path or any(c in path for c in "<>{}$"):
            continue  # a placeholder, not a path
        found.add(path)
    return sorted(found)


def test_readme_names_paths_of_the_checkout_that_exist():
    paths = [p for p in readme_paths() if p.split("/")[0] in REPO_ROOTS]
    assert len(paths) > 20  # the code map names the files
    missing = [p for p in paths if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())]
    assert not missing, f"README names paths that do not exist: {missing}"


def all_workflow_outputs():
    """The outputs of the `all` workflow's commands as project.yml declares them, its vars filled in.

    `plots` declares none: scripts/project/plots.py writes one `<metrics folder>.png` per run set
    into its --output-dir, and the `all` run's set is `${vars.treebank}${vars.recipe}`, so that
    file is added here from the command's own script.
    """
    import srsly

    project = srsly.read_yaml(ROOT / "project.yml")
    variables = project.get("vars", {})

    def fill(value: str) -> str:
        for _ in range(10):  # variables may name variables (tagger_configs: ${vars.recipe})
            filled = re.sub(r"\$\{vars\.(\w+)\}", lambda m: str(variables[m.group(1)]), value)
            if filled == value:
                return filled
            value = filled
        raise AssertionError(f"unresolved variables in {value!r}")

    commands = {command["name"]: command for command in project["commands"]}
    outputs = set()
    for name in project["workflows"]["all"]:
        command = commands[name]
        outputs.update(fill(out).rstrip("/") for out in command.get("outputs", []) + command.get("outputs_no_cache", []))
        if name == "plots":
            (script,) = command["script"]
            output_dir = re.search(r"--output-dir\s+(\S+)", script).group(1)
            outputs.add(fill(f"{output_dir}/${{vars.treebank}}${{vars.recipe}}.png"))
    return outputs


def test_readme_names_outputs_that_the_all_workflow_makes():
    outputs = all_workflow_outputs()
    assert "metrics/report.md" in outputs
    named = [p.rstrip("/") for p in readme_paths() if p.split("/")[0] in OUTPUT_ROOTS]
    assert named, "the README names the outputs of `all`"
    # a declared output, a folder that holds one, or a file inside an output folder
    wrong = [p for p in named if not any(p == out or out.startswith(p + "/") or p.startswith(out + "/") for out in outputs)]
    assert not wrong, f"README names outputs that `all` does not make: {wrong} (declared: {sorted(outputs)})"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set:
    found, seen, in_code = set(), {}, False
    for line in path.read_text(encoding="utf8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{1,6} ", line):
            base = slug(line.lstrip("#"))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_links_of_the_readme_and_the_docs_lead_somewhere():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    broken = []
    for page in pages:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf8"), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_docs_hold_no_placeholders():
    """A page published with a stand-in for a result it was waiting for ('PLACEHOLDER', 'TODO',
    'TBD', 'XXX' as words) says something that is not true yet."""
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    found = [f"{page.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
             for page in pages for number, line in enumerate(page.read_text(encoding="utf8").splitlines(), 1)
             if re.search(r"\b(PLACEHOLDER|TODO|TBD|XXX)\b|_PLACEHOLDER\b", line)]
    assert not found, "placeholders in the docs:\n" + "\n".join(found)
