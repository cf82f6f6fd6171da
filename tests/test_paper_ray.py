"""paper.py's grid on Ray (scripts/project/paper_ray.py): the plan's dependencies, and a tiny
grid (2 treebanks x 2 seeds, No-Char, 2 epochs) run by the sequential driver and on a local
Ray of 2 CPUs giving the same metrics files, a rerun redoing only what is missing, and a failed
command stopping only what needs it.

Tagger training is seeded and runs on one torch thread (OMP_NUM_THREADS=1, torch_threads.py)
in its own process either way, so the predictions are bit-identical; the metrics JSON differs
only in the evaluation's timings (eval_seconds, words_per_second).
"""
import json
import multiprocessing
import sys
from pathlib import Path

import pytest
import ray
import srsly

from test_project import SCRIPTS, TREEBANK, make_project, paper_data

sys.path.insert(0, str(SCRIPTS))
import paper as paper_script  # noqa: E402
import paper_ray  # noqa: E402
import steps as steps_script  # noqa: E402

TINY = "UD_Tiny-Test"
GRID = ["--recipe", "paper", "--sizes", "500", "--seeds", "0,1", "--variants", "nochar", "--epochs", "2", "--low-epochs", "2",
        "--var", "vectors_limit=2000"]
TIMINGS = {"eval_seconds", "words_per_second"}


def test_plan_lists_each_step_after_those_it_reads(tmp_path):
    """Every step comes after the steps it depends on (the sequential order is a valid order
    for Ray), and the dependencies are the files each command reads."""
    data = paper_data(tmp_path)
    args = paper_script.parse_args(["--data-dir", str(data), "--sizes", "500,0", "--seeds", "0,1",
                                    "--project-dir", str(make_project(tmp_path)), "--dry-run"])
    steps = paper_script.plan(args)
    position = {step.key: i for i, step in enumerate(steps)}
    assert len(position) == len(steps)  # keys are unique
    assert all(position[key] < position[step.key] for step in steps for key in step.after)
    after = {step.key: set(step.after) for step in steps}
    unit = f"{TREEBANK}_lowres/n500.s1"  # the default recipe's runs' folder
    assert after[f"{TREEBANK}/convert"] == after[f"{TREEBANK}/train-mimick"] == {f"{TREEBANK}/data"}
    assert after[f"{unit}/subsample"] == {f"{TREEBANK}/data"}
    # Taggers without Mimick need not wait for the Mimick model.
    assert after[f"{unit}/train-tagger-nochar"] == {f"{unit}/subsample", f"{TREEBANK}/init-vectors"}
    assert after[f"{unit}/train-tagger-both"] == {f"{unit}/subsample", f"{TREEBANK}/init-vectors",
                                                  f"{TREEBANK}/train-mimick"}
    trained = {f"{unit}/train-tagger-{v}" for v in ("nochar", "mimick", "chartag", "both", "spacy")}
    assert after[f"{unit}/evaluate"] == {f"{TREEBANK}/convert", f"{unit}/subsample"} | trained
    assert after[f"{unit}/significance"] == after[f"{unit}/significance-spacy-both"] == {f"{unit}/evaluate"}
    assert {step.command for step in steps if step.key.startswith((f"{TINY}/", f"{TINY}_lowres/"))} == {
        "data", "convert", "init-vectors", "subsample", "train-tagger-nochar", "train-tagger-chartag",
        "train-tagger-spacy", "evaluate"}
    with pytest.raises(SystemExit, match="CPUs only"):
        paper_script.parse_args(["--data-dir", str(data), "--ray", "--gpu-id", "0"])
    assert paper_script.parse_args(["--data-dir", str(data), "--ray-address", "auto"]).ray


def _remember(project: Path, writer: int) -> None:
    runner = steps_script.Runner(project)
    for i in range(30):
        runner.remember(f"{writer}-{i}", "state")


def test_lock_entries_written_at_once_are_all_kept(tmp_path):
    """Four processes adding entries to the lock file at the same time (as Ray tasks and
    parallel drivers do) lose none of them."""
    fork = multiprocessing.get_context("fork")
    writers = [fork.Process(target=_remember, args=(tmp_path, writer)) for writer in range(4)]
    for process in writers:
        process.start()
    for process in writers:
        process.join()
    assert [process.exitcode for process in writers] == [0, 0, 0, 0]
    lock = json.loads((tmp_path / "training" / ".paper-lock.json").read_text())
    assert sorted(lock) == sorted(f"{writer}-{i}" for writer in range(4) for i in range(30))


def _load_project(project: Path, start, failures) -> None:
    start.wait()
    try:
        steps_script.Runner(project).project_command("data", {"data_dir": "x", "treebank": "UD_X"})
    except Exception as err:  # the race lost: reported to the test
        failures.put(f"{type(err).__name__}: {err}")


def test_tasks_loading_a_fresh_project_at_once_all_succeed(tmp_path):
    """Eight processes loading project.yml of a fresh folder at the same moment (Ray tasks do):
    none fails creating the project's directories (weasel's own loader raced on them)."""
    project = make_project(tmp_path)
    fork = multiprocessing.get_context("fork")
    start, failures = fork.Event(), fork.Queue()
    loaders = [fork.Process(target=_load_project, args=(project, start, failures)) for _ in range(8)]
    for process in loaders:
        process.start()
    start.set()
    for process in loaders:
        process.join()
    assert [process.exitcode for process in loaders] == [0] * 8
    assert failures.empty(), failures.get()
    directories = srsly.read_yaml(project / "project.yml")["directories"]
    assert all((project / subdir).is_dir() for subdir in directories)


def metrics(project: Path):
    """Every metrics file: the JSON records without their timings, the predictions as bytes."""
    files = {}
    for path in sorted((project / "metrics").rglob("*")):
        if path.suffix == ".json":
            files[str(path.relative_to(project))] = {k: v for k, v in json.loads(path.read_text()).items()
                                                     if k not in TIMINGS}
        elif path.is_file():
            files[str(path.relative_to(project))] = path.read_bytes()
    return files


@pytest.fixture(scope="module")
def local_ray():
    paper_ray.connect(num_cpus=2)
    yield
    ray.shutdown()


def test_grid_on_ray_matches_the_sequential_driver(tmp_path, local_ray, monkeypatch, capsys):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    data = paper_data(tmp_path)
    sequential, on_ray = make_project(tmp_path / "sequential"), make_project(tmp_path / "ray")
    paper_script.main(["--data-dir", str(data), "--project-dir", str(sequential), *GRID])
    assert "[paper] done: 18 command(s) run" in capsys.readouterr().out
    paper_script.main(["--data-dir", str(data), "--project-dir", str(on_ray), "--ray", *GRID])
    out = capsys.readouterr().out
    assert "[paper] done: 18 command(s) run, 0 skipped (done before), 0 failed" in out
    expected = metrics(sequential)
    # 2 treebanks x 2 seeds: No-Char's scores (JSON) and predictions (DocBin).
    assert len(expected) == 8 and expected[f"metrics/{TINY}/n500.s1/nochar.json"]["seed"] == 1
    assert metrics(on_ray) == expected
    # The lock files: an entry for every command with outputs (all but the 4 evaluates), none
    # lost by the tasks writing them at once; weasel's project.lock readable.
    locks = [json.loads((p / "training" / ".paper-lock.json").read_text()) for p in (sequential, on_ray)]
    assert len(locks[1]) == 14 and set(locks[1]) == set(locks[0])
    assert set(srsly.read_yaml(on_ray / "project.lock")) == {
        "data", "convert", "init-vectors", "subsample", "train-tagger-nochar", "evaluate"}
    log = on_ray / "training" / ".paper-logs" / TINY / "n500.s1" / "train-tagger-nochar.log"
    assert "-m spacy train configs/tagger_nochar.paper.cfg" in log.read_text()

    # Resuming: a lost model is trained again, evaluate runs (it skips up-to-date variants
    # itself), everything else is skipped.
    other = on_ray / "training" / TREEBANK / "n500.s0" / "nochar" / "model-best" / "meta.json"
    mtime = other.stat().st_mtime
    model = on_ray / "training" / TINY / "n500.s1" / "nochar" / "model-best"
    for path in sorted(model.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    model.rmdir()
    results = paper_ray.run(paper_script.plan(paper_script.parse_args(
        ["--data-dir", str(data), "--project-dir", str(on_ray), *GRID])), on_ray)
    assert sorted(key for key, r in results.items() if r["ran"]) == [
        f"{TREEBANK}/n500.s0/evaluate", f"{TREEBANK}/n500.s1/evaluate",
        f"{TINY}/n500.s0/evaluate", f"{TINY}/n500.s1/evaluate", f"{TINY}/n500.s1/train-tagger-nochar"]
    assert "5 command(s) run, 13 skipped" in capsys.readouterr().out
    assert model.is_dir() and other.stat().st_mtime == mtime
    assert metrics(on_ray) == expected


def test_a_failed_command_stops_what_needs_it(tmp_path, local_ray, capsys):
    """The failure is reported with its log; the steps that need it do not run, the others do."""
    project = make_project(tmp_path)
    data = paper_data(tmp_path)
    base = {"data_dir": str(data), "lang": "xx", "prefix": "qq_tiny", "vectors": "none"}
    steps = [
        steps_script.Step("missing/data", "data", {**base, "treebank": "UD_Missing"}),
        steps_script.Step("missing/convert", "convert", {**base, "treebank": "UD_Missing"}, ("missing/data",)),
        steps_script.Step(f"{TINY}/data", "data", {**base, "treebank": TINY}),
    ]
    with pytest.raises(SystemExit, match="missing/data: StepError") as error:
        paper_ray.run(steps, project)
    log = project / "training" / ".paper-logs" / "missing" / "data.log"
    assert str(log) in str(error.value) and "UD_Missing" in log.read_text()
    out = capsys.readouterr().out
    assert "1 command(s) run, 0 skipped (done before), 1 failed, 1 not run" in out
    assert (project / "corpus" / TINY / "raw" / "train.conllu").exists()
    assert not (project / "training" / ".paper-logs" / "missing" / "convert.log").exists()


def test_a_command_reruns_once_a_file_it_reads_when_present_appears(tmp_path):
    """A step's ``reads`` (files a command reads only when they exist, such as spaCy's baseline
    that a package's card quotes) count in its state: the command reruns when one appears or
    changes, and is skipped otherwise."""
    srsly.write_yaml(tmp_path / "project.yml", {"commands": [{
        "name": "card", "outputs": ["card.txt"],
        "script": [f"{sys.executable} -c \"import pathlib; p = pathlib.Path('baseline.txt'); "
                   "pathlib.Path('card.txt').write_text(p.read_text() if p.exists() else 'no baseline')\""]}]})
    runs = []
    for baseline in (None, None, "spaCy 88.59", "spaCy 88.59", "spaCy 88.60"):
        if baseline is not None:
            (tmp_path / "baseline.txt").write_text(baseline)
        runner = steps_script.Runner(tmp_path, out=open(tmp_path / "runner.out", "a"))
        runs.append(runner.run("card", {}, reads=["baseline.txt"]))
        assert (tmp_path / "card.txt").read_text() == (baseline or "no baseline")
    assert runs == [True, False, True, False, True]
