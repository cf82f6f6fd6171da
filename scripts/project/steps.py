"""The steps of paper.py's grid and the runner that runs one: what paper.py plans and what
both of its drivers (paper.py one step after the other, paper_ray.py as Ray tasks) execute.

* :class:`Step`: one project command, its variables and the steps whose outputs it reads;
* :class:`MaxSteps`: a variable counted when its command runs (``max_steps`` of a lowres run,
  epochs x the batches of an epoch of its sample, known once ``subsample`` drew the sample);
* :func:`project_run_args`: the ``python -m spacy project run`` command line of a step;
* :class:`Runner`: runs a step's command unless it is done with the same script, dependencies
  and outputs (``training/.paper-lock.json``), so an interrupted grid resumes.
"""
import copy
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, TextIO, Tuple


def batches_per_epoch(config, train: Path, n_tokens: int, batch_tokens: int) -> int:
    """Batches of one epoch over ``train`` with ``config``'s batcher (the lowres recipe's lr
    decay ends at epochs x this); estimated from the budget when the sample does not exist yet
    (dry runs)."""
    if not train.exists():
        return max(1, -(-int(1.2 * n_tokens) // batch_tokens))
    from spacy.util import registry

    from spacy_mimick.tagger.schedules import batches_per_epoch as count_batches
    from spacy_mimick.ud.corpus import create_conllu_corpus_reader

    batcher = registry.resolve({"b": config["training"]["batcher"]})["b"]
    return count_batches(create_conllu_corpus_reader(str(train)), batcher)


@dataclass(frozen=True)
class Step:
    """One command of the grid: the project command, its variables, and the keys of the steps
    whose outputs it reads (``after``). ``paper.plan`` lists the steps in the order the sequential
    driver runs them; ``paper_ray.py`` starts each step once those in ``after`` are done."""

    key: str
    command: str
    variables: Dict[str, object]
    after: Tuple[str, ...] = ()
    # Files the command reads when they exist (project-relative), which project.yml cannot list
    # as deps because a dep must exist: e.g. the package's card reads spaCy's baseline and the
    # paired test. They count in the command's state, so the card is rebuilt once they appear.
    reads: Tuple[str, ...] = ()


class MaxSteps:
    """``max_steps`` of a lowres run, epochs x the batches of an epoch of its sample: a variable
    known only once ``subsample`` has drawn the sample, so it is counted when the command runs
    (:meth:`Runner.run`), not when the grid is planned (a dry run estimates it from the budget)."""

    def __init__(self, config, sample: str, n_tokens: int, epochs: int, batch_tokens: int) -> None:
        self.config, self.sample = config, sample  # config: tagger_config's, overrides applied
        self.n_tokens, self.epochs, self.batch_tokens = n_tokens, epochs, batch_tokens
        self.counted: Optional[int] = None

    def value(self) -> int:
        if self.counted is not None:
            return self.counted
        sample = Path(self.sample)
        steps = self.epochs * batches_per_epoch(self.config, sample, self.n_tokens, self.batch_tokens)
        if sample.exists():  # an estimate is not kept: the sample may exist by the next command
            self.counted = steps
        return steps


def resolve(variables: Dict[str, object]) -> Dict[str, object]:
    """The variables with :class:`MaxSteps` counted."""
    return {k: v.value() if isinstance(v, MaxSteps) else v for k, v in variables.items()}


def project_run_args(name: str, project_dir: Path, variables: Dict[str, object], force: bool = False) -> List[str]:
    """``python -m spacy project run NAME DIR --vars.NAME=VALUE ...`` (a value may be empty).

    weasel deletes every ``--`` of a ``--vars.NAME=VALUE`` argument, the value's included
    (``weasel.util.config._parse_overrides``), so ``tagger_overrides=--training.x 1`` would
    reach the project as ``training.x 1``. A value with ``--`` therefore goes as a JSON string
    with its hyphens escaped (``"\\u002d\\u002dtraining.x 1"``), which weasel's ``json.loads``
    of the value turns back into the value.
    """
    args = [sys.executable, "-m", "spacy", "project", "run", name, str(project_dir)]
    for key, value in variables.items():
        text = str(value)
        if "--" in text:
            text = json.dumps(text).replace("-", "\\u002d")
        args.append(f"--vars.{key}={text}")
    if force:
        args.append("--force")
    return args


class Runner:
    """Runs project commands with variables, skipping those already done with these variables.

    weasel's project.lock keeps one entry per command name, so it reruns every command each
    time the treebank or budget alternates. The runner keeps weasel's entry (script, and MD5s
    of deps and outputs) per command *and* script in ``training/.paper-lock.json``, and skips a
    command whose entry is unchanged: a different data_dir, budget or epochs, a changed
    dependency (a retrained Mimick model) or a missing output runs it again. Scripts are
    compared with runs of white space folded, so that a variable left empty (e.g.
    ``tagger_overrides``) keeps the entries of runs made before the project had it.
    """

    def __init__(self, project_dir: Path, force: bool = False, dry_run: bool = False,
                 out: Optional[TextIO] = None, log_dir: Optional[Path] = None) -> None:
        self.project_dir = project_dir
        self.log_dir = log_dir  # each command's output also goes to LOG_DIR/<log_name>.log
        self.log_name = ""
        self.force = force
        self.dry_run = dry_run
        self.out = out  # where the runner's lines go (None: stdout)
        self.commands_run = 0
        self.lock_path = project_dir / "training" / ".paper-lock.json"
        self.lock: Dict[str, str] = json.loads(self.lock_path.read_text()) if self.lock_path.exists() else {}
        self._config: Optional[Tuple[Tuple[int, int], Dict]] = None
        self._make_directories()

    def _make_directories(self) -> None:
        """Create project.yml's ``directories`` here, tolerating ones that exist. weasel's
        ``load_project_config`` creates each missing one with ``mkdir`` and no ``exist_ok``, so two
        Ray tasks loading the project of a fresh folder at once raced: the loser failed with
        FileExistsError."""
        import srsly

        project_file = self.project_dir / "project.yml"
        if project_file.exists():
            for subdir in srsly.read_yaml(project_file).get("directories", []):
                (self.project_dir / subdir).mkdir(parents=True, exist_ok=True)

    def project_config(self) -> Dict:
        """project.yml as weasel loads and validates it, not yet interpolated: parsed once per
        version of the file (the YAML parse was 1.2 s of each of a grid's hundreds of commands)."""
        from weasel.util import load_project_config

        stat = (self.project_dir / "project.yml").stat()
        key = (stat.st_mtime_ns, stat.st_size)
        if self._config is None or self._config[0] != key:
            self._config = (key, load_project_config(self.project_dir, interpolate=False))
        return copy.deepcopy(self._config[1])

    def project_command(self, name: str, variables: Dict[str, object]) -> Dict:
        """The command of project.yml with the variables filled in, as weasel runs it."""
        from weasel.util.config import substitute_project_variables

        config = substitute_project_variables(self.project_config(),
                                              overrides={f"vars.{k}": v for k, v in variables.items()})
        for cmd in config["commands"]:
            if cmd["name"] == name:
                return cmd
        raise SystemExit(f"error: no command {name!r} in project.yml")

    @staticmethod
    def folded(cmd: Dict) -> Dict:
        """The command with runs of white space in its script folded: what the lock remembers."""
        return {**cmd, "script": [" ".join(line.split()) for line in cmd["script"]]}

    def _entry(self, cmd: Dict, reads: Sequence[str] = ()) -> Tuple[str, str]:
        from weasel.cli.run import get_lock_entry
        from weasel.util import get_checksum, get_hash

        state = get_lock_entry(self.project_dir, cmd)
        if reads:  # only then: the entries of commands without optional inputs stay as they were
            state = {"entry": state, "reads": {path: get_checksum(self.project_dir / path)
                                               if (self.project_dir / path).exists() else None
                                               for path in reads}}
        return get_hash({"name": cmd["name"], "script": cmd["script"]}), get_hash(state)

    def run(self, name: str, variables: Dict[str, object], reads: Sequence[str] = ()) -> bool:
        """Run the command unless it is done; whether it ran (or, in a dry run, would run).
        ``reads``: files it reads when they exist (:attr:`Step.reads`), part of its state."""
        variables = resolve(variables)
        project_cmd = self.project_command(name, variables)
        cmd = self.folded(project_cmd)
        outputs = [self.project_dir / p for p in cmd.get("outputs", [])]
        done = outputs and all(p.exists() for p in outputs)
        if done and not self.force:
            key, state = self._entry(cmd, reads)
            if self.lock.get(key) == state:
                print(f"[paper] skip {name} ({variables.get('treebank')}, n={variables.get('n_tokens')}, "
                      f"seed={variables.get('seed')}): done", file=self.out, flush=True)
                return False
        # weasel's own lock does not know ``reads``: it would skip a command they changed.
        args = project_run_args(name, self.project_dir, variables, self.force or bool(reads))
        print("[paper] " + shlex.join(args[1:]), file=self.out, flush=True)
        self.commands_run += 1
        if self.dry_run:
            return True
        self.execute(project_cmd, args)
        if outputs:
            self.remember(*self._entry(cmd, reads))
        return True

    def execute(self, cmd: Dict, args: List[str]) -> None:
        """Run the command (``cmd``: project.yml's, variables filled in): ``spacy project run`` (``args``);
        with a ``log_dir``, its output is shown and also written to the step's log file."""
        if self.log_dir is None:
            subprocess.run(args, check=True)
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_dir / f"{self.log_name or cmd['name']}.log"
        with log.open("a", encoding="utf8") as f:
            f.write("$ " + shlex.join(args) + "\n")
            f.flush()
            process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       errors="replace", bufsize=1)
            assert process.stdout is not None
            for line in process.stdout:
                sys.stdout.write(line)
                f.write(line)
            code = process.wait()
            f.flush()
            os.fsync(f.fileno())
        if code != 0:
            raise SystemExit(f"error: {cmd['name']} failed (exit code {code}); its output: {log}")

    def remember(self, key: str, state: str) -> None:
        """Add an entry to the lock file, safe with other drivers and Ray tasks writing it: under
        a file lock, merged with the file as it is now (they may have added entries since this
        runner read it), written to a temporary file and renamed (a reader never sees half)."""
        from filelock import FileLock

        from spacy_mimick.atomic import atomic_file

        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{self.lock_path}.lock"):
            self.lock = json.loads(self.lock_path.read_text()) if self.lock_path.exists() else {}
            self.lock[key] = state
            with atomic_file(self.lock_path, "w") as out:
                out.write(json.dumps(self.lock, indent=1))

