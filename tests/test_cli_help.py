"""``python -m spacy_mimick COMMAND --help`` for every registered command: it works, its usage
line names the arguments (VECTORS_PATH, not ``{vectors_path}``), every option and argument
says what it does, defaults shown are the code's, and nothing is cut at 80 columns."""
from typing import Dict, List

import click
import pytest
import torch
import typer.main
from typer.testing import CliRunner

from conftest import RARE_WORD
from spacy_mimick.cli.options import THREADS_HELP
from spacy_mimick.cli import app
from spacy_mimick.vectors.mimick_trainer import PAPER_CONFIG, STATIC_VECTORS_CONFIG, TrainConfig

ROOT = typer.main.get_command(app)
COMMANDS: Dict[str, click.Command] = dict(ROOT.commands)


def run(*args, columns: int = 80):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)},
                              catch_exceptions=False)


def help_of(*args, columns: int = 80) -> str:
    result = run(*args, "--help", columns=columns)
    assert result.exit_code == 0, result.output
    return result.output


def usage_of(text: str) -> str:
    """The usage line (it may wrap onto indented lines)."""
    return " ".join(text.split("\n\n")[0].split())


def test_the_walk_sees_every_command():
    assert set(COMMANDS) >= {"train", "predict", "neighbors", "extend", "similarity", "convert",
                             "tag", "import-original", "add"}


def test_root_help_lists_every_command_with_an_uncut_summary():
    text = help_of()
    listing = text.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in listing if line.strip()] == list(COMMANDS)
    for line in listing:
        assert not line.rstrip().endswith("..."), line


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_help(name):
    command = COMMANDS[name]
    text = help_of(name)
    usage = usage_of(text)
    assert usage.startswith("Usage: ") and f" {name} [OPTIONS]" in usage, usage
    assert "{" not in usage and "}" not in usage, usage
    for param in command.params:
        assert (param.help or "").strip(), f"{name}: {param.opts} has no help"
        if param.param_type_name == "argument":
            assert param.name.upper() in usage, (param.name, usage)
    # Readable at 80 columns: click wraps instead of cutting words with an ellipsis.
    for columns in (80, 200):
        for line in help_of(name, columns=columns).splitlines():
            assert len(line) <= 80 and "…" not in line, line


def option(command: str, flag: str) -> click.Parameter:
    return next(p for p in COMMANDS[command].params if flag in p.opts + p.secondary_opts)


@pytest.mark.parametrize("command", ["train", "add"])
def test_training_defaults_in_help_are_the_codes(command):
    fields = {"--max-epochs": "max_epochs", "--seed": "seed"}
    if command == "train":
        fields.update({"--batch-size": "batch_size", "--lr": "learning_rate",
                       "--sparse-lr": "sparse_learning_rate", "--patience": "patience",
                       "--loss": "loss", "--typo-prob": "typo_prob", "--temperature": "temperature",
                       "--negatives": "negatives", "--contrastive-weight": "contrastive_weight"})
    base = TrainConfig() if command == "train" else STATIC_VECTORS_CONFIG
    for flag, field in fields.items():
        default, paper = getattr(base, field), getattr(PAPER_CONFIG, field)
        expected = f"[default: {default}]" if default == paper else f"[default: {default}; --paper: {paper}]"
        assert option(command, flag).help.endswith(expected), (flag, option(command, flag).help)
    # The values a newcomer reads (a change to TrainConfig must come with the docs' numbers).
    epochs = "[default: 30]" if command == "train" else "[default: 15; --paper: 30]"
    assert option(command, "--max-epochs").help.endswith(epochs)
    if command == "train":
        assert option(command, "--loss").help.endswith("[default: l2+contrastive; --paper: l2]")
        assert option(command, "--temperature").help.endswith("[default: 0.1]")
        assert option(command, "--patience").help.endswith("[default: 2; --paper: 3]")
        assert option(command, "--batch-size").help.endswith("[default: 64; --paper: 128]")
        assert option(command, "--lr").help.endswith("[default: 0.003; --paper: 0.0042]")
        assert option(command, "--normalize-targets").help.endswith("[default: --raw-targets]")
        assert option(command, "--freq-weight").help.endswith("[default: --no-freq-weight]")


def tag_input(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("1\tThe\tthe\tDET\t_\t_\t0\troot\t_\t_\n\n", encoding="utf8")
    return path


# Arguments that make each command fail only after it set its threads (a missing model,
# pipeline or vectors file): what the test looks at is the threads torch was given.
THREADED: Dict[str, List] = {
    "train": ["{tmp}/missing.txt", "{tmp}/out", "--quiet"],
    "predict": ["{tmp}/missing-model", "cat"],
    "neighbors": ["{tmp}/missing-model", "{tmp}/missing.txt", "cat"],
    "extend": ["{tmp}/missing-model", "{tmp}/missing.txt", "{tmp}/out.vec", "--all-rows"],
    "similarity": [RARE_WORD, "{tmp}/missing.txt"],
    "tag": ["{tmp}/missing-pipeline", "{conllu}", "{tmp}/out.conllu"],
    "add": ["{tmp}/missing-pipeline", "{tmp}/out"],
}


def test_every_command_with_threads_is_checked():
    assert {name for name, c in COMMANDS.items() if any("--threads" in p.opts for p in c.params)} == set(THREADED)


@pytest.mark.parametrize("name", sorted(THREADED))
def test_threads_option(name, tmp_path, monkeypatch):
    param = option(name, "--threads")
    assert param.default == 1 and param.help == THREADS_HELP
    args = [str(a).format(tmp=tmp_path, conllu=tag_input(tmp_path)) for a in THREADED[name]]
    calls: List[int] = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    for threads in ([], ["--threads", "3"]):
        failed = run(name, *args, *threads)  # catch_exceptions=False: a traceback fails the test
        assert failed.exit_code == 1 and failed.output.startswith("error: "), failed.output
    assert calls == [1, 3]
    refused = run(name, *args, "--threads", "0")
    assert refused.exit_code == 2 and "--threads must be >= 1, got 0" in refused.output
    assert calls == [1, 3]

