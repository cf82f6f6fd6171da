"""The spaCy project (project.yml) and its scripts (scripts/project/): validation, the first
commands on the embedded data with weasel's rerun skipping, and the report and plots from
synthetic metrics."""
import gzip
import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
import srsly

from conftest import REPO

SCRIPTS = REPO / "scripts" / "project"
sys.path.insert(0, str(SCRIPTS))

import data as data_script  # noqa: E402
import init_vectors as init_vectors_script  # noqa: E402
import paper as paper_script  # noqa: E402
import plots as plots_script  # noqa: E402
import report as report_script  # noqa: E402

TREEBANK = "UD_English-EWT"


def load_config(project_dir: Path, **variables):
    """project.yml with weasel's variable overrides (weasel creates the project's directories:
    hence always a copy of the project, never the repository)."""
    from weasel.util import load_project_config

    return load_project_config(project_dir, overrides={f"vars.{k}": v for k, v in variables.items()})


def make_project(tmp_path: Path) -> Path:
    """A copy of the project (project.yml, scripts, configs) reading the repository's assets."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "project.yml", project / "project.yml")
    shutil.copytree(SCRIPTS, project / "scripts" / "project", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "configs", project / "configs")
    (project / "assets").symlink_to(REPO / "assets", target_is_directory=True)
    return project


def project_run(project: Path, command: str, *variables: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", command, str(project), *variables],
        capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


# -- project.yml ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def project_copy(tmp_path_factory) -> Path:
    return make_project(tmp_path_factory.mktemp("project"))


def test_project_yml_validates_and_documents(project_copy):
    from weasel.schemas import ProjectConfigSchema, validate

    raw = srsly.read_yaml(REPO / "project.yml")
    assert validate(ProjectConfigSchema, raw) == []
    config = load_config(project_copy)
    commands = {cmd["name"]: cmd for cmd in config["commands"]}
    for name in ("data", "convert", "subsample", "init-vectors", "train-mimick", "extend-vectors",
                 "train-tagger-nochar", "train-tagger-mimick", "train-tagger-chartag", "train-tagger-both",
                 "evaluate", "significance", "rare-word", "report", "plots", "curves", "paper-runs", "package"):
        assert name in commands, name
    assert set(config["workflows"]) >= {"all", "paper"}
    for steps in config["workflows"].values():
        assert all(step in commands for step in steps)
    # Every script and config a command calls is in the repository.
    for cmd in config["commands"]:
        for line in cmd["script"]:
            for token in line.split():
                if token.startswith(("scripts/", "configs/")):
                    assert (REPO / token).exists(), f"{cmd['name']}: {token} is missing"
    # The default reads the embedded data and needs no download; data_dir overrides it.
    assert config["vars"]["data_dir"] == "assets"
    script = commands["data"]["script"][0]
    assert script.startswith("python scripts/project/data.py assets UD_English-EWT en_ewt")
    shared = {c["name"]: c for c in load_config(project_copy, data_dir="../shared/data", n_tokens=0)["commands"]}
    assert "../shared/data" in shared["data"]["script"][0]
    assert "training/UD_English-EWT/n0.s0/mimick/model-best" in shared["train-tagger-mimick"]["outputs"]
    # Assets: the UD treebanks from GitHub (pinned, with checksums) and Polyglot, in assets/full.
    assets = raw["assets"]
    ud = [a for a in assets if "UniversalDependencies" in a.get("url", "")]
    assert ud and all(a["dest"].startswith("assets/full/ud/") and len(a["checksum"]) == 32 for a in ud)
    assert any("polyglot" in a.get("url", "") for a in assets)
    assert not any(a["dest"].startswith("assets/UD_") for a in assets)  # never overwrites the embedded data
    # `spacy project document` renders it.
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "document", str(project_copy)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "`train-tagger-mimick`" in result.stdout and "`paper`" in result.stdout


def test_training_commands_match_the_configs(project_copy):
    """The tagger commands pass exactly the [paths] the configs define."""
    config = load_config(project_copy)
    for cmd in config["commands"]:
        if not cmd["name"].startswith("train-tagger-"):
            continue
        variant = cmd["name"][len("train-tagger-"):]
        cfg = spacy.util.load_config(REPO / "configs" / f"tagger_{variant}.cfg", interpolate=False)
        passed = {t.split(".", 1)[1] for t in cmd["script"][0].split() if t.startswith("--paths.")}
        assert passed <= set(cfg["paths"]), (variant, passed)
        assert {"train", "dev", "vectors"} <= passed
        assert ("mimick_model" in passed) == (variant in ("mimick", "both"))


def test_scripts_help():
    """Every script the project calls answers --help (in-process; one through a real process)."""
    for script in sorted(SCRIPTS.glob("*.py")):
        module = __import__(script.stem)
        with pytest.raises(SystemExit) as exit_info:
            module.main(["--help"])
        assert exit_info.value.code == 0, script.name
    result = subprocess.run([sys.executable, str(SCRIPTS / "evaluate.py"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "usage" in result.stdout


# -- data.py ------------------------------------------------------------------------------------

def test_data_finds_both_layouts_and_licenses(tmp_path):
    assets = REPO / "assets"
    assert data_script.find_treebank(assets, TREEBANK) == assets / TREEBANK
    nested = tmp_path / "data"
    (nested / "ud").mkdir(parents=True)
    (nested / "ud" / TREEBANK).symlink_to(assets / TREEBANK, target_is_directory=True)
    assert data_script.find_treebank(nested, TREEBANK) == nested / "ud" / TREEBANK
    assert data_script.list_treebanks(nested) == [(nested / "ud" / TREEBANK, "en_ewt")]
    assert data_script.find_vectors(assets, "en") == str(assets / "glove.6B.50d.top20k.txt.gz")
    assert data_script.find_vectors(assets, "tr") is None
    assert data_script.find_vectors(assets, "en", "none") is None
    assert data_script.detect_license((assets / TREEBANK / "LICENSE.txt").read_text()) == "CC BY-SA 4.0"
    assert data_script.detect_license("licensed under CreativeCommons BY-NC-SA 3.0\nhttp://...") == "CC BY-NC-SA 3.0"
    assert data_script.detect_license("Lesser General Public License For Linguistic Resources") == "LGPL-LR"


def test_data_keeps_polyglot_unk_and_handles_no_vectors(tmp_path):
    """Polyglot's <UNK> row survives into the text file (No-Char uses it); a language without
    vectors gets a `0 0` file, and init_vectors then saves a blank pipeline."""
    words = ["<UNK>", "<S>", "</S>", "<PAD>", "the", "of"]
    matrix = numpy.arange(len(words) * 4, dtype="float32").reshape(len(words), 4)
    pkl = tmp_path / "polyglot.pkl"
    pkl.write_bytes(pickle.dumps((words, matrix), protocol=2))
    out = tmp_path / "vectors.vec.gz"
    shape = data_script.write_vectors(str(pkl), "auto", 0, out)
    assert shape == {"rows": 3, "dim": 4, "unk": True}
    with gzip.open(out, "rt") as f:
        lines = f.read().splitlines()
    assert lines[0] == "3 4" and lines[-1].split()[0] == "<UNK>"
    assert [float(x) for x in lines[-1].split()[1:]] == matrix[0].tolist()

    empty = tmp_path / "none.vec.gz"
    assert data_script.write_vectors(None, "auto", 0, empty)["rows"] == 0
    init_vectors_script.main(["en", str(empty), str(tmp_path / "blank")])
    nlp = spacy.load(tmp_path / "blank")
    assert nlp.vocab.vectors.shape[0] == 0


# -- the first commands through `spacy project run`, and rerun skipping ---------------------------

def test_project_run_first_commands_and_rerun_skips(tmp_path):
    project = make_project(tmp_path)
    small = ("--vars.vectors_limit", "2000", "--vars.n_tokens", "1000")
    commands = ("data", "convert", "subsample", "init-vectors")
    for command in commands:
        out = project_run(project, command, *small)
        assert "nothing changed" not in out, out
    corpus = project / "corpus" / TREEBANK
    for name in ("raw/train.conllu", "raw/dev.conllu", "raw/test.conllu", "train.spacy", "dev.spacy",
                 "test.spacy", "train.n1000.s0.conllu", "train.n1000.s0.spacy", "sources.json"):
        assert (corpus / name).exists(), name
    sources = json.loads((corpus / "sources.json").read_text())
    assert sources["treebank_license"] == "CC BY-SA 4.0"
    assert sources["vectors"]["rows"] == 2000 and sources["vectors"]["license"] == "PDDL-1.0"
    nlp = spacy.load(corpus / "vectors")
    assert nlp.vocab.vectors.shape == (2000, 50) and nlp.vocab.vectors.name == "en_glove.6B.50d.top20k"
    train = list(spacy.tokens.DocBin().from_disk(corpus / "train.n1000.s0.spacy").get_docs(nlp.vocab))
    assert 1000 <= sum(len(d) for d in train) < 1000 + max(len(d) for d in train)
    # The CoNLL-U sample holds the same sentences, in the same order, as the DocBin.
    from spacy_mimick.ud import read_conllu

    assert [d.text for d in read_conllu(corpus / "train.n1000.s0.conllu", nlp.vocab)] == [d.text for d in train]
    # Rerunning skips every finished command ...
    mtime = (corpus / "train.spacy").stat().st_mtime
    for command in commands:
        assert f"Skipping '{command}': nothing changed" in project_run(project, command, *small)
    assert (corpus / "train.spacy").stat().st_mtime == mtime
    # ... but not one whose variables changed: another seed is another subsample.
    out = project_run(project, "subsample", *small, "--vars.seed", "1")
    assert "nothing changed" not in out and (corpus / "train.n1000.s1.conllu").exists()


# -- paper.py -----------------------------------------------------------------------------------

def test_paper_driver_plans_the_runs(tmp_path, project_copy, capsys):
    """Dry run over a data folder: all variants where there are vectors, tagging-only runs
    (No-Char with random embeddings, char->tag) where there are none; budgets not smaller than
    the treebank skipped; the full data once."""
    data = tmp_path / "data"
    (data / "ud").mkdir(parents=True)
    (data / "embeddings").mkdir()
    (data / "ud" / TREEBANK).symlink_to(REPO / "assets" / TREEBANK, target_is_directory=True)
    (data / "embeddings" / "glove.6B.50d.top100k.txt.gz").symlink_to(REPO / "assets" / "glove.6B.50d.top20k.txt.gz")
    tiny = data / "ud" / "UD_Tiny-Test"
    tiny.mkdir()
    sentence = "1\tHello\thello\tINTJ\t_\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n"
    for split in ("train", "dev", "test"):
        (tiny / f"qq_tiny-ud-{split}.conllu").write_text(sentence * 300)
    paper_script.main(["--data-dir", str(data), "--sizes", "500,1000,0", "--seeds", "0,1", "--dry-run",
                       "--var", "mimick_epochs=7", "--project-dir", str(project_copy)])
    lines = [l for l in capsys.readouterr().out.splitlines() if "project run" in l]

    def runs(command, treebank):
        return [l for l in lines if f"project run {command} " in l and f"--vars.treebank {treebank} " in l]

    assert len(runs("train-mimick", TREEBANK)) == 1 and not runs("train-mimick", "UD_Tiny-Test")
    assert len(runs("train-tagger-both", TREEBANK)) == 5  # 2 budgets x 2 seeds + full data once
    assert not runs("train-tagger-mimick", "UD_Tiny-Test") and not runs("train-tagger-both", "UD_Tiny-Test")
    tiny_nochar = runs("train-tagger-nochar", "UD_Tiny-Test")
    assert len(tiny_nochar) == 3  # 600 tokens: budget 1000 skipped
    assert all("--vars.vectors none" in l and "--vars.lang xx" in l for l in tiny_nochar)  # no spaCy "qq"
    assert len(runs("significance", TREEBANK)) == 3 and not runs("significance", "UD_Tiny-Test")
    assert any("--vars.n_tokens 500 --vars.seed 0 --vars.epochs 80" in l for l in runs("train-tagger-nochar", TREEBANK))
    assert any("--vars.n_tokens 0 --vars.seed 0 --vars.epochs 40" in l for l in runs("train-tagger-nochar", TREEBANK))
    assert all("--vars.mimick_epochs 7" in l for l in lines)  # --var reaches every command
    with pytest.raises(SystemExit, match="NAME=VALUE"):
        paper_script.main(["--data-dir", str(data), "--dry-run", "--var", "mimick_epochs",
                           "--project-dir", str(project_copy)])


def test_paper_runner_merges_a_lock_shared_by_two_drivers(tmp_path):
    """Two drivers over different treebanks share training/.paper-lock.json: neither loses the
    other's entries."""
    project = make_project(tmp_path)
    first, second = paper_script.Runner(project), paper_script.Runner(project)
    first.run("data", {"vectors_limit": 1000})
    second.run("data", {"vectors_limit": 500})
    lock = json.loads((project / "training" / ".paper-lock.json").read_text())
    assert len(lock) == 2


def test_paper_runner_remembers_each_variable_set(tmp_path, capsys):
    """The driver skips a command done with the same variables, dependencies and outputs, and
    runs it again when any of them changed."""
    project = make_project(tmp_path)
    variables = {"vectors_limit": 1000}
    paper_script.Runner(project).run("data", variables)
    assert (project / "training" / ".paper-lock.json").exists()
    capsys.readouterr()
    paper_script.Runner(project).run("data", variables)  # a new runner reads the lock back
    assert "skip data" in capsys.readouterr().out
    dry = paper_script.Runner(project, dry_run=True)
    dry.run("data", {"vectors_limit": 500})  # other variables: another run
    assert "project run data" in capsys.readouterr().out
    (project / "corpus" / TREEBANK / "sources.json").write_text("{}")  # a changed output
    dry.run("data", variables)
    assert "project run data" in capsys.readouterr().out


# -- report.py and plots.py on synthetic metrics ----------------------------------------------------

def write_run(root, treebank, lang, n, seed, variant, pos, attr, oov_pos, n_train, oov_vec=100, n_test=1000):
    folder = root / treebank / f"n{n}.s{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "treebank": treebank, "lang": lang, "variant": variant, "n_tokens": n, "seed": seed,
        "n_train_tokens": n_train, "n_test_tokens": n_test,
        "scores": {"pos_acc": pos, "attr_micro_f": attr, "oov_train_pos_acc": oov_pos,
                   "n_tokens": n_test, "oov_vec_n_tokens": oov_vec},
    }
    (folder / f"{variant}.json").write_text(json.dumps(record))


def write_sig(root, treebank, n, seed, a, b, pos_delta, pos_p, attr_delta, attr_p, oov_p):
    folder = root / treebank / f"n{n}.s{seed}"
    (folder / f"sig-{a}-{b}.json").write_text(json.dumps({
        "a": a, "b": b, "pos_acc_delta": pos_delta, "pos_p_value": pos_p,
        "attr_micro_f_delta": attr_delta, "attr_p_value": attr_p,
        "oov_train": {"pos_acc_delta": 0.0, "pos_p_value": oov_p},
    }))


@pytest.fixture()
def synthetic_metrics(tmp_path):
    root = tmp_path / "metrics"
    scores = {  # variant: (pos, attr, oov pos)
        "nochar": (0.8000, 0.7000, 0.5000), "mimick": (0.8250, 0.7100, 0.6000),
        "chartag": (0.8400, 0.7500, 0.6500), "both": (0.8350, 0.7600, 0.6400),
    }
    for n, n_train in ((5000, 5010), (10000, 10020), (0, 33000)):
        for seed in ((0, 1, 2) if n else (0,)):
            for variant, (pos, attr, oov) in scores.items():
                bump = 0.01 * seed + (0.02 if n == 0 else 0.0)
                write_run(root, TREEBANK, "en", n, seed, variant, pos + bump, attr + bump, oov + bump, n_train + seed)
        # Mimick vs No-Char: POS significant, attributes not; Both vs char->tag: POS significantly
        # worse, attributes significantly better.
        write_sig(root, TREEBANK, n, 0, "nochar", "mimick", 0.025, 1e-5, 0.01, 0.2, 1e-4)
        write_sig(root, TREEBANK, n, 0, "chartag", "both", -0.005, 1e-3, 0.01, 1e-3, 0.5)
    # A tagging-only language: two variants at full data, no attributes.
    write_run(root, "UD_Vietnamese-VTB", "xx", 0, 0, "nochar", 0.85, None, 0.4, 20000)
    write_run(root, "UD_Vietnamese-VTB", "xx", 0, 0, "chartag", 0.87, None, 0.5, 20000)
    (root / TREEBANK / "rare_word.json").write_text(json.dumps({
        "rare_word": True, "treebank": TREEBANK, "pairs_file": "rw.txt", "n_pairs": 2034, "n_in_vocab_pairs": 1500,
        "vectors": {"name": "glove", "rows": 100000, "dim": 50},
        "systems": [{"name": "vectors", "all": 20.0, "in_vocab": 35.0, "covered": 1500},
                    {"name": "vectors + mimick", "all": 30.5, "in_vocab": 35.0, "covered": 2034},
                    {"name": "mimick", "all": 18.25, "in_vocab": 19.0, "covered": 2034}],
    }))
    return root


def table(text, heading):
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_report_tables(synthetic_metrics):
    report_script.main([str(synthetic_metrics), "--output", str(synthetic_metrics / "report.md")])
    text = (synthetic_metrics / "report.md").read_text()
    pos = table(text, "## 1. POS tagging accuracy")
    assert pos[0].count("(5,000)") == 4 and "N_train (full)" in pos[0] and "(10,000)" not in pos[0]
    en = next(line for line in pos if line.startswith("| en (English-EWT)"))
    # seed 0 values; Mimick bold (significant gain), Both italic (significant loss).
    assert en == ("| en (English-EWT) | 80.00 | **82.50** | 84.00 | *83.50* | 33,000 | 82.00 | **84.50** | 86.00 "
                  "| *85.50* |")
    vi = next(line for line in pos if "Vietnamese-VTB" in line)
    assert vi == "| Vietnamese-VTB | — | — | — | — | 20,000 | 85.00 | — | 87.00 | — |"
    attr = table(text, "## 2. Morphosyntactic attributes")
    en = next(line for line in attr if line.startswith("| en (English-EWT)"))
    assert "| 71.00 |" in en and "**76.00**" in en  # Mimick not significant, Both significant gain
    assert next(line for line in attr if "Vietnamese" in line).count("—") == 8
    gains = table(text, "## 3. Gain in POS accuracy")
    assert gains[2] == "| en (English-EWT) | 10.0% | **2.50** | **-0.50** | **10.00** | -1.00 |"
    assert len(gains) == 3  # the Vietnamese runs have no Mimick/Both: no row
    rare = table(text, "## 4. Stanford Rare Word")
    assert "| glove + Mimick (OOV words) | 50 | 100,000 | 35.0 | 30.5 | 2034 |" in rare
    assert "| Mimick | 50 | 0 | 19.0 | 18.2 | 2034 |" in rare or "| Mimick | 50 | 0 | 19.0 | 18.3 | 2034 |" in rare
    runs = table(text, "## 5. All runs")
    assert "| en (English-EWT) | 5,000 | Mimick | 3 | 5,011 | 83.50 ± 1.00 | 72.00 ± 1.00 | 61.00 ± 1.00 | 10.0% |" in runs


def test_report_settings_and_gains_fallback(synthetic_metrics):
    results = report_script.load_results(synthetic_metrics)
    assert results.settings(TREEBANK) == [5000, 10000, 0]
    text = report_script.render(results, settings=[10000], gains_n_tokens=2000)
    pos = table(text, "## 1. POS tagging accuracy")
    assert pos[0].count("(10,000)") == 4 and "full" not in pos[0]
    assert "| en (English-EWT) (N=5,000) |" in table(text, "## 3. Gain")[2]
    # A treebank smaller than the budget uses its full data, as the paper did for Tamil and Kazakh.
    assert report_script.pick_gains_setting(results, TREEBANK, 50000) == 0


def test_plots_learning_curves(synthetic_metrics, tmp_path):
    out = tmp_path / "curves"
    plots_script.main([str(synthetic_metrics), "--output-dir", str(out)])
    png = out / f"{TREEBANK}.png"
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert width > 800 and height > 300
    assert (out / "UD_Vietnamese-VTB.png").exists()
    results = report_script.load_results(synthetic_metrics)
    points = plots_script.curve_points(results, TREEBANK, "mimick", "pos_acc")
    assert [round(p[0]) for p in points] == [5011, 10021, 33000]  # mean training tokens
    assert [round(p[1], 2) for p in points] == [83.5, 83.5, 84.5]  # mean over 3 seeds, x 100
    assert [round(p[2], 2) for p in points] == [1.0, 1.0, 0.0]  # std over seeds
    assert [p[3] for p in points] == [3, 3, 1]
