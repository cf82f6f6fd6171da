"""CLI pieces shared by several commands: ``--threads`` and the training defaults their help shows.

The help of ``train`` / ``add`` options whose default depends on ``--paper`` is built from
``TrainConfig`` and ``PAPER_CONFIG`` themselves, so ``--help`` cannot drift from the code.
"""
from typing import Any, Callable, Optional

import typer

from ..vectors.mimick_trainer import PAPER_ARCH, PAPER_CONFIG, TrainConfig

THREADS_HELP = (
    "torch CPU threads. 1 is fastest for these small models unless cores are idle: with one "
    "thread per busy core, LSTM steps slow down many times over")

PAPER_SETUP = (
    f"the paper's set-up: char BiLSTM ({PAPER_ARCH['@architectures']}), no typo augmentation, up "
    f"to {PAPER_CONFIG.max_epochs} epochs, patience {PAPER_CONFIG.patience}")


def threads_option() -> Any:
    """``--threads N`` (default 1); pass the value to :func:`set_threads`."""
    return typer.Option(1, "--threads", help=THREADS_HELP)


def set_threads(threads: int) -> None:
    """Run torch on ``threads`` CPU threads in this process (refusing fewer than 1).

    torch's own default is one thread per core, which is much slower for the small batches of
    Mimick and its tagger whenever the cores are busy (docs/project.md, "torch threads").
    """
    if threads < 1:
        raise typer.BadParameter(f"--threads must be >= 1, got {threads}")
    import torch

    torch.set_num_threads(threads)


def with_train_default(help: str, field: str, show: Callable[[Any], str] = str,
                       base: Optional[TrainConfig] = None) -> str:
    """``help`` followed by ``[default: 15; --paper: 30]``, the defaults of a ``TrainConfig``
    field in ``base`` (``TrainConfig()``) and ``PAPER_CONFIG`` (``[default: 64]`` when
    ``--paper`` does not change it)."""
    default = show(getattr(base or TrainConfig(), field))
    paper = show(getattr(PAPER_CONFIG, field))
    shown = default if default == paper else f"{default}; --paper: {paper}"
    return f"{help}  [default: {shown}]"
