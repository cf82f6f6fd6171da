"""Run paper.py's grid on Ray: every command of its plan a Ray task, started once the commands
whose outputs it reads are done.

    python scripts/project/paper.py --data-dir ../shared/data --ray                        # this machine's cores
    python scripts/project/paper.py --data-dir ../shared/data --ray-address auto [--ray-cpus 2]   # a cluster
    python scripts/project/paper_ray.py ARGS   # the same as paper.py --ray ARGS

``paper.plan`` gives the steps (``steps.Step``) and their dependencies (a treebank's ``data``
before its ``convert``, ``init-vectors`` and Mimick model; a sample's ``subsample`` before its
trainings; ``evaluate`` after them, the significance tests after ``evaluate``). Each step is a task of
``--ray-cpus`` CPUs (its commands' torch threads), so a cluster runs its CPUs / N commands at
once. A task runs the command with ``steps.Runner``'s skip logic (a command done with the
same script, dependencies and outputs is skipped, so a rerun after an interruption redoes only
what is missing), but executes the command's script itself instead of through
``spacy project run``: weasel rewrites ``project.lock`` without a lock, which concurrent commands
would corrupt, so the task records weasel's entry under a file lock. What a command prints goes
to ``training/.paper-logs/<step>.log``; the driver shows a progress bar over the grid.

Workers run the commands as subprocesses in the project folder, at the driver's path: on a
cluster of several machines the project folder and ``data_dir`` must be at the same path on
every node (a shared file system, or copies), and spacy-mimick installed in each node's Python.
"""
import io
import os
import shlex
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from steps import Runner, Step  # noqa: E402

SCRIPTS_DIR = Path(__file__).resolve().parent
LOG_DIR = Path("training") / ".paper-logs"
# weasel's project.lock is rewritten by every task: they take turns through this file lock.
WEASEL_LOCK = Path("training") / ".project-lock.lock"


class StepError(Exception):
    pass


class TaskRunner(Runner):
    """The runner of one Ray task: runs the command's script lines as weasel would (``python``
    is this Python, the project folder the working directory, each line must succeed), their
    output to ``log``, then records weasel's project.lock entry under :data:`WEASEL_LOCK`."""

    def __init__(self, project_dir: Path, force: bool, log: Path, threads: int) -> None:
        super().__init__(project_dir, force=force, out=io.StringIO())
        self.log = log
        self.threads = threads

    def execute(self, cmd: Dict, args: List[str]) -> None:
        from filelock import FileLock
        from weasel.cli.run import update_lockfile
        from weasel.util import split_command

        name = cmd["name"]
        missing = [dep for dep in cmd.get("deps", []) if not (self.project_dir / dep).exists()]
        if missing:
            raise StepError(f"missing dependencies of {name!r}: {', '.join(missing)}")
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w", encoding="utf8") as log:
            log.write(f"[paper] {shlex.join(args[1:])}\n")
            for line in cmd["script"]:
                argv = split_command(line)
                if argv[:1] in (["python"], ["python3"]):
                    argv[0] = sys.executable
                log.write(f"Running command: {shlex.join(argv)}\n")
                log.flush()
                code = subprocess.run(argv, cwd=self.project_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL).returncode
                if code:
                    raise StepError(f"{shlex.join(argv[:4])} ... exited with status {code}")
        with FileLock(str(self.project_dir / WEASEL_LOCK)):
            update_lockfile(self.project_dir, cmd)


def log_path(project_dir: Path, key: str) -> Path:
    return project_dir / LOG_DIR / f"{key}.log"


def run_step(step: Step, project_dir: str, force: bool, threads: int, *upstream: Dict) -> Dict:
    """The Ray task of one step; ``upstream``: the results of the steps it depends on (Ray starts
    the task once they exist). It does not run when one of them failed."""
    failed = [result for result in upstream if not result["ok"]]
    if failed:
        return {"key": step.key, "ok": False, "ran": False, "blocked_by": failed[0].get("blocked_by", failed[0]["key"])}
    log = log_path(Path(project_dir), step.key)
    start = time.time()
    try:
        ran = TaskRunner(Path(project_dir), force, log, threads).run(step.command, step.variables, step.reads)
    except Exception as err:  # any error of this step: reported by the driver, the others go on
        tail = "".join(deque(log.open(encoding="utf8", errors="replace"), 15)) if log.exists() else ""
        return {"key": step.key, "ok": False, "ran": True, "error": f"{type(err).__name__}: {err}",
                "log": str(log), "tail": tail}
    return {"key": step.key, "ok": True, "ran": ran, "seconds": time.time() - start}


def connect(address: Optional[str] = None, num_cpus: Optional[int] = None) -> None:
    """Join the Ray cluster at ``address`` ("auto": the one ``ray start`` started on this
    machine), or start a local one on ``num_cpus`` CPUs (default: all of them). Workers import
    paper_ray and steps from this folder, and print to their logs only."""
    import ray
    from ray.job_config import JobConfig

    ray.init(address=address or "local", num_cpus=None if address else num_cpus, log_to_driver=False,
             job_config=JobConfig(code_search_path=[str(SCRIPTS_DIR)]))


def run(steps: List[Step], project_dir: Path, force: bool = False, address: Optional[str] = None,
        cpus: int = 1) -> Dict[str, Dict]:
    """Run the steps on Ray: the one initialized in this process if any (a notebook, the tests),
    else :func:`connect` to ``address``, with ``cpus`` CPUs a step. Returns each step's result
    (``ok``, ``ran``); exits with an error listing the failed steps, after the steps that do
    not need them ran to their end."""
    import ray
    from tqdm import tqdm

    project_dir = project_dir.resolve()
    started = not ray.is_initialized()
    if started:
        connect(address)
    task = ray.remote(run_step).options(num_cpus=cpus)
    refs = {}
    for step in steps:  # the plan lists every step after those it depends on
        refs[step.key] = task.remote(step, str(project_dir), force, cpus, *[refs[key] for key in step.after])
    keys = {ref: key for key, ref in refs.items()}
    after = {step.key: step.after for step in steps}
    results: Dict[str, Dict] = {}
    total = ray.cluster_resources().get("CPU", 0)
    print(f"[paper] {len(steps)} commands on Ray ({total:g} CPUs, {cpus} a command); logs in "
          f"{project_dir / LOG_DIR}", flush=True)
    pending = list(refs.values())
    counts = {"ran": 0, "failed": 0}
    try:
        with tqdm(total=len(steps), desc="[paper] grid", unit="cmd", dynamic_ncols=True) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as err:  # the worker died (out of memory, node lost)
                        result = {"key": keys[ref], "ok": False, "ran": True, "error": str(err).strip().splitlines()[0]}
                    results[result["key"]] = result
                    if result["ok"] and result["ran"]:
                        counts["ran"] += 1
                        bar.write(f"[paper] ran {result['key']} ({result['seconds']:.0f} s)")
                    elif result.get("error"):
                        counts["failed"] += 1
                        bar.write(f"[paper] FAILED {result['key']}: {result['error']}"
                                  + (f"\n  log {result['log']}:\n{result['tail']}" if result.get("log") else ""))
                    bar.set_postfix(counts, refresh=False)
                    bar.update(1)
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise SystemExit("[paper] interrupted: the commands in flight were stopped; the same command resumes")
    finally:
        if started:
            ray.shutdown()
    ran = sum(r["ok"] and r["ran"] for r in results.values())
    skipped = sum(r["ok"] and not r["ran"] for r in results.values())
    # Not run: a step it needs failed (a lost worker's dependents report its error too).
    blocked = [r for r in results.values() if not r["ok"] and (
        "blocked_by" in r or any(not results[key]["ok"] for key in after[r["key"]]))]
    failed = [r for r in results.values() if not r["ok"] and r not in blocked]
    print(f"[paper] done: {ran} command(s) run, {skipped} skipped (done before), {len(failed)} failed, "
          f"{len(blocked)} not run (a command they need failed)", flush=True)
    if failed:
        raise SystemExit("error: failed commands (a rerun redoes only these and what needs them):\n"
                         + "\n".join(f"  {r['key']}: {r['error']}" + (f" (log {r['log']})" if r.get("log") else "")
                                     for r in failed))
    return results


def main(argv: Optional[List[str]] = None) -> None:
    """``python scripts/project/paper_ray.py ARGS`` is ``paper.py --ray ARGS`` (the same options),
    run as a process of its own: paper.py imports this module for --ray, not the reverse."""
    raise SystemExit(subprocess.call([sys.executable, str(SCRIPTS_DIR / "paper.py"), "--ray", *(argv or [])]))


if __name__ == "__main__":
    main(sys.argv[1:])
