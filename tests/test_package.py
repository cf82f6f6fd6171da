"""A packaged pipeline, end to end: train a tiny Mimick tagger pipeline through the project's
commands, package it with `spacy package`, install it into a fresh virtual environment with the
documented line (`pip install --find-links packages/dist <name>`, here with `--no-index`: no
index serves spacy-mimick, which comes from its own wheel in packages/dist), and load it there
by name: it tags POS and morphology and gives OOV words Mimick vectors."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest
import spacy
from spacy.training.initialize import convert_vectors

from conftest import REPO

SCRIPTS = REPO / "scripts" / "project"
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(REPO / "scripts"))

import check_package  # noqa: E402
import check_release  # noqa: E402
import data as data_script  # noqa: E402
import subsample as subsample_script  # noqa: E402

TREEBANK = "UD_English-EWT"
N_TOKENS = 1500
PACKAGE = "en_mimick_ud_ewt"


# One torch thread in the subprocesses too (conftest sets it in-process): on 2 busy cores,
# torch's default of a thread per core makes the LSTMs 100x slower. Unbuffered output, so that
# a captured `spacy project run` reads in the order a terminal shows: weasel prints each
# "Running command" line through a buffered pipe, and without PYTHONUNBUFFERED it came after
# the command's own output, so the package step's last line was weasel's echo, not ours.
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
VENV_ENV = {k: v for k, v in ENV.items() if k != "PYTHONPATH"}


def run(args, **kwargs) -> str:
    kwargs.setdefault("env", ENV)
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def truncate_conllu(path: Path, n_sentences: int) -> None:
    blocks, _ = subsample_script.sentence_blocks(path)
    path.write_text("".join(blocks[:n_sentences]), encoding="utf8")


def stage_tiny_project(tmp_path: Path) -> Path:
    """A project copy whose corpus/ and models/ hold what `data` ... `train-mimick` would make,
    cut small: 3,000 GloVe rows, a 1,500-token training set, 60 dev and 80 test sentences,
    a Mimick model trained for one epoch."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "project.yml", project / "project.yml")
    shutil.copytree(SCRIPTS, project / "scripts" / "project", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "configs", project / "configs")
    # The tagger commands depend on the package's config templates (their init-config input).
    (project / "spacy_mimick").symlink_to(REPO / "spacy_mimick", target_is_directory=True)
    corpus = project / "corpus" / TREEBANK
    data_script.main([str(REPO / "assets"), TREEBANK, "en_ewt", str(corpus), "--lang", "en",
                      "--vectors-limit", "3000"])
    truncate_conllu(corpus / "raw" / "dev.conllu", 60)
    truncate_conllu(corpus / "raw" / "test.conllu", 80)
    from spacy_mimick.ud.corpus import conllu_to_docbin

    conllu_to_docbin(corpus / "raw" / "test.conllu", "en").to_disk(corpus / "test.spacy")
    stem = corpus / f"train.n{N_TOKENS}.s0"
    subsample_script.main([str(corpus / "raw" / "train.conllu"), f"{stem}.conllu", "--docbin", f"{stem}.spacy",
                           "--n-tokens", str(N_TOKENS), "--lang", "en"])
    nlp = spacy.blank("en")  # what `spacy init vectors` does
    convert_vectors(nlp, corpus / "vectors.vec.gz", truncate=0, prune=-1, mode="default", name="en_glove_test")
    nlp.to_disk(corpus / "vectors")
    from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick
    from spacy_mimick.vectors.vectors_io import read_vectors

    result = train_mimick(read_vectors(corpus / "vectors.vec.gz"), {"@architectures": "spacy_mimick.Mimick.v1"},
                          TrainConfig(max_epochs=1, batch_size=64), progress=False)
    result.model.to_disk(project / "models" / TREEBANK / "mimick")
    return project


CHECK = textwrap.dedent("""
    import json, sys
    import numpy, spacy, spacy_mimick, {package}
    nlp = spacy.load("{package}")
    doc = nlp("The flatfish were hurtling toward Vercellotti , and the dogs barked .")
    oov = doc[1]  # "flatfish": not among the pipeline's 3,000 vectors
    expected = nlp.get_pipe("mimick_vectors").predict_words(["flatfish"])[0]
    print(json.dumps({{
        "package_file": {package}.__file__,
        "spacy_mimick_file": spacy_mimick.__file__,
        "prefix": sys.prefix,
        "pipeline": nlp.pipe_names,
        "pos": [t.pos_ for t in doc],
        "morph": [str(t.morph) for t in doc],
        "oov_in_table": bool(nlp.vocab.vectors.find(key=oov.orth) >= 0),
        "oov_has_vector": oov.has_vector,
        "oov_is_mimick": bool(numpy.allclose(oov.vector, expected, atol=1e-5)),
        "oov_norm": float(numpy.linalg.norm(oov.vector)),
        "meta": nlp.meta,
        "license_files": sorted(p.name for p in nlp.path.glob("LICENSE*")),
    }}))
""")


def test_package_installs_and_tags_in_a_fresh_venv(tmp_path):
    project = stage_tiny_project(tmp_path)
    # The project's own commands from here on: ~18 steps per epoch (batches of 100), a dev
    # evaluation every 10.
    variables = ["--vars.n_tokens", str(N_TOKENS), "--vars.epochs", "8", "--vars.eval_frequency", "10"]
    run([sys.executable, "-m", "spacy", "project", "run", "train-tagger-mimick", project, *variables])
    run([sys.executable, "-m", "spacy", "project", "run", "evaluate", project, *variables])
    # The project's default recipe (lowres): runs and metrics under <treebank>_lowres.
    metrics = json.loads((project / "metrics" / f"{TREEBANK}_lowres" / f"n{N_TOKENS}.s0" / "mimick.json").read_text())
    assert metrics["n_train_tokens"] >= N_TOKENS and metrics["scores"]["pos_acc"] > 0.3
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "package", str(project), *variables],
                            capture_output=True, text=True, env=ENV)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # No warnings a user cannot act on: spaCy's about the `build` package, setuptools' about a
    # missing LICENSE, `python -m build`'s or `setup.py sdist`'s log.
    for noise in ("build", "no files found matching", "warn", "Warn", "running sdist", "deprecated"):
        assert noise not in output.replace("build_package.py", ""), (noise, output)
    sdist = project / "packages" / f"{PACKAGE}-0.1.0" / "dist" / f"{PACKAGE}-0.1.0.tar.gz"
    assert sdist.exists()
    assert output.rstrip().endswith(f"install: pip install --find-links packages/dist {PACKAGE}")
    # packages/dist: the pipeline's sdist and wheel, and spacy-mimick's own wheel.
    dist = project / "packages" / "dist"
    names = sorted(p.name for p in dist.iterdir())
    assert f"{PACKAGE}-0.1.0.tar.gz" in names and f"{PACKAGE}-0.1.0-py3-none-any.whl" in names, names
    assert any(n.startswith("spacy_mimick-") and n.endswith(".whl") for n in names), names
    # LICENSE (the treebank's license, with its text) and LICENSES_SOURCES in the sdist's root and
    # beside the pipeline's data.
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
        root = f"{PACKAGE}-0.1.0"
        for folder in (root, f"{root}/{PACKAGE}/{root}"):
            assert {f"{folder}/LICENSE", f"{folder}/LICENSES_SOURCES"} <= names, sorted(names)
        license_text = tar.extractfile(f"{root}/LICENSE").read().decode("utf8")
        sources_text = tar.extractfile(f"{root}/LICENSES_SOURCES").read().decode("utf8")
    assert license_text.startswith(f"{PACKAGE}-0.1.0: a spaCy pipeline trained with spacy-mimick.")
    assert "License: CC BY-SA 4.0" in license_text
    assert "Attribution-ShareAlike 4.0 International" in license_text  # assets/UD_English-EWT/LICENSE.txt
    assert "License: PDDL-1.0" in sources_text and "Universal Dependencies English EWT" in sources_text
    meta = json.loads((project / "packages" / f"{PACKAGE}-0.1.0" / "meta.json").read_text())
    assert meta["license"] == "CC BY-SA 4.0"
    # A version range, not a path or a pin: the same package installs from an index.
    assert [r for r in meta["requirements"] if r.startswith("spacy-mimick")] == ["spacy-mimick>=0.1.0,<0.2.0"]
    # spaCy's keys, and the card: the embedded slice makes a demo, said in the description, the
    # notes and so the README that spaCy's package generates from them.
    assert meta["performance"]["morph_micro_f"] == meta["performance"]["attr_micro_f"]
    assert "morph_acc" in meta["performance"] and "oov_train_pos_acc" in meta["performance"]
    assert meta["description"].startswith("DEMO:") and "DEMO:" in meta["notes"]
    assert "python -m spacy project run all" in meta["notes"] and "CC BY-SA 4.0" in meta["notes"]
    readme = (project / "packages" / f"{PACKAGE}-0.1.0" / "README.md").read_text()
    assert "DEMO:" in readme and "this package" in readme and "### Licenses" in readme
    # Scored on the test set's raw text too (EWT has `# text`): what a user should expect.
    assert 0 < meta["performance"]["raw_upos_f"] <= meta["performance"]["raw_words_f"] <= 1
    assert "### Raw text" in readme and "words F1 " in readme
    # Rebuilt with a new card (as once spaCy's baseline has run), the README is the new card's;
    # setuptools' build folder of the first build, where a file of the pipeline is now a folder
    # (as the Chinese tokenizer became), does not break the wheel.
    meta_path = project / "packages" / "en_mimick_ud_ewt.meta.json"
    card = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**card, "notes": card["notes"] + "\n\nRebuilt card."}))
    built_meta = project / "packages" / f"{PACKAGE}-0.1.0" / "build" / "lib" / PACKAGE / f"{PACKAGE}-0.1.0" / "meta.json"
    built_meta.unlink()  # the wheel's build of the first package: a file there
    (built_meta / "stale").mkdir(parents=True)
    run([sys.executable, SCRIPTS / "build_package.py", project / "training" / f"{TREEBANK}_lowres" / f"n{N_TOKENS}.s0"
         / "mimick" / "model-best", project / "packages", "--meta", meta_path, "--sources",
         project / "corpus" / TREEBANK / "sources.json", "--dist", project / "packages" / "dist"], cwd=project)
    assert "Rebuilt card." in (project / "packages" / f"{PACKAGE}-0.1.0" / "README.md").read_text()
    meta_path.write_text(json.dumps(card))
    assert {"Universal Dependencies English EWT"} <= {s["name"] for s in meta["sources"]}
    assert abs(meta["performance"]["pos_acc"] - metrics["scores"]["pos_acc"]) < 1e-9

    # A fresh venv that sees the running Python's spacy/torch (no download; from a venv too) but
    # installs spacy-mimick (from the repository) and the pipeline itself; no network (--no-index).
    venv = tmp_path / "venv"
    # A venv that sees this Python's spaCy, torch and pip but not spacy-mimick (nor the pipeline),
    # as a user's venv with spaCy installed: pip must take both from packages/dist.
    python = check_release.venv_without_spacy_mimick(tmp_path, hide=(PACKAGE,))
    # spacy-mimick is not importable there before the install (it is not in the index either).
    missing = subprocess.run([python, "-c", "import spacy, torch; import spacy_mimick"], capture_output=True,
                             text=True, env=VENV_ENV, cwd=tmp_path)
    assert missing.returncode != 0 and "spacy_mimick" in missing.stderr, missing.stderr
    # The documented install line, offline.
    check_release.install_offline(python, dist, PACKAGE, tmp_path, VENV_ENV)
    workdir = tmp_path / "elsewhere"  # not the repository: nothing importable by accident
    workdir.mkdir()
    # Without PYTHONPATH: only what the venv holds can be imported (not a checkout on the path).
    out = run([python, "-c", CHECK.format(package=PACKAGE)], cwd=workdir, env=VENV_ENV)
    result = json.loads(out.strip().splitlines()[-1])
    site = str(venv.resolve())
    assert result["prefix"] == str(venv) or Path(result["prefix"]).resolve() == venv.resolve()
    assert result["package_file"].startswith(site) and result["spacy_mimick_file"].startswith(site)
    assert result["pipeline"] == ["mimick_vectors", "mimick_tagger"]
    assert result["pos"][-1] == "PUNCT" and len(set(result["pos"])) >= 3, result["pos"]
    assert any(result["morph"]), result["morph"]
    assert not result["oov_in_table"] and result["oov_has_vector"] and result["oov_is_mimick"]
    assert result["oov_norm"] > 0
    assert result["meta"]["name"] == "mimick_ud_ewt" and result["meta"]["lang"] == "en"
    assert result["license_files"] == ["LICENSE", "LICENSES_SOURCES"]  # installed with the pipeline
    # check_release.py, which the docs' package checks come from: the same install in a venv of
    # its own, the pipeline and spacy_mimick imported from there, a Markdown block per package.
    block = check_release.check(dist, PACKAGE, "The flatfish were hurtling .")
    assert block.startswith(f"#### `{PACKAGE}` 0.1.0 (license CC BY-SA 4.0)")
    assert f"--find-links {dist} {PACKAGE}" in block
    # spacy-mimick's wheel beside the pipeline is pure Python (its C extension, which only Mimick's
    # trainer uses, is left out), so the folder installs on any platform.
    assert "spacy_mimick-0.1.0-py3-none-any.whl" in block
    assert "| flatfish | " in block and block.rstrip().splitlines()[-1].startswith("| . | PUNCT |")


def test_check_release_refuses_what_is_not_there(tmp_path, capsys):
    """check_release.py: a missing folder or package, or an odd argument count, is one error line."""
    with pytest.raises(SystemExit, match="no such folder"):
        check_release.main([str(tmp_path / "nope"), PACKAGE, "Hello ."])
    with pytest.raises(SystemExit, match=f"no package {PACKAGE}"):
        check_release.main([str(tmp_path), PACKAGE, "Hello ."])
    with pytest.raises(SystemExit, match="NAME TEXT pairs"):
        check_release.main([str(tmp_path), PACKAGE])


def _tiny_sdist(tmp_path: Path) -> Path:
    """An sdist of a one-module package, ``tiny_pkg``."""
    import tarfile

    src = tmp_path / "tiny_pkg-0.1"
    src.mkdir()
    (src / "setup.py").write_text("from setuptools import setup\nsetup(name='tiny_pkg', version='0.1', py_modules=['tiny_pkg'])\n")
    (src / "tiny_pkg.py").write_text("OK = True\n")
    (src / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: tiny_pkg\nVersion: 0.1\n")
    sdist = tmp_path / "tiny_pkg-0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src, arcname=src.name)
    return sdist


def test_fresh_venv_from_inside_a_users_venv(tmp_path):
    """Run from a user's venv, the fresh venv sees that venv's packages (not the base
    interpreter's): here the user's venv has a package the base Python lacks."""
    user_venv = tmp_path / "user-venv"
    run([sys.executable, "-m", "venv", "--without-pip", user_venv])
    user_python = user_venv / "bin" / "python"
    purelib = Path(run([user_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    # What `pip install` put into the user's venv: this interpreter's packages, and one of its own.
    here = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (purelib / "_installed.pth").write_text("\n".join(here) + "\n")
    (purelib / "only_in_user_venv.py").write_text("OK = True\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / "scripts")!r})
        import check_package
        from pathlib import Path
        python = check_package.install_in_fresh_venv(Path({str(_tiny_sdist(tmp_path))!r}), Path({str(tmp_path / "work")!r}))
        print(check_package.run([python, "-c", "import only_in_user_venv, spacy, tiny_pkg, spacy_mimick, sys; "
                                 "print(spacy_mimick.__file__, sys.prefix)"]))
    """)
    (tmp_path / "work").mkdir()
    out = run([user_python, "-c", script], cwd=tmp_path, env=VENV_ENV)  # only what the venvs hold
    module_file, prefix = out.strip().splitlines()[-1].split()
    assert module_file.startswith(prefix) and prefix == str(tmp_path / "work" / "venv")


def test_failed_commands_show_their_output():
    """pip's own error message, not only its exit code, when an install fails."""
    with pytest.raises(Exception) as err:
        check_package.run([sys.executable, "-m", "pip", "install", "--no-index", "no-such-package-xyz"])
    assert "no-such-package-xyz" in str(err.value) and "No matching distribution" in str(err.value)
