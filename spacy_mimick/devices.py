"""Where Mimick's torch modules run: spaCy's ``--gpu-id`` and thinc's current ops, as torch devices.

This is the one place that names a device. Everything else takes the device of a module's
weights or the one these functions return, so the same code runs on the CPU and on a GPU:

- ``python -m spacy_mimick train --gpu-id N`` trains on :func:`torch_device` ``(N)``;
- ``mimick_vectors`` predicts on :func:`pipeline_device`: the GPU after ``spacy.require_gpu()``
  or ``spacy train --gpu-id N`` (thinc's ``CupyOps``), the CPU otherwise, as spaCy's own
  PyTorch-wrapped models do (``thinc.util.get_torch_default_device``).
"""
import sys
from typing import Dict

import torch

from .errors import UserError


class DeviceError(UserError):
    """A ``--gpu-id`` that names no usable GPU."""


def pipeline_device() -> torch.device:
    """The torch device matching thinc's current ops (the pipeline's device). Before thinc is
    imported nothing can have chosen a GPU (``spacy.require_gpu()`` imports it): the CPU, without
    importing thinc (``train`` starts without spaCy and thinc)."""
    if "thinc.util" not in sys.modules:
        return torch.device("cpu")
    from thinc.util import get_torch_default_device

    return get_torch_default_device()


def torch_device(gpu_id: int) -> torch.device:
    """The device for spaCy's ``--gpu-id`` convention: ``-1`` the pipeline's (CPU unless
    ``spacy.require_gpu()`` ran), ``N >= 0`` CUDA GPU ``N``. Raises DeviceError, saying what
    PyTorch sees, when that GPU is not there (a CPU build of torch, no driver, a wrong id)."""
    if gpu_id < 0:
        return pipeline_device()
    if not torch.cuda.is_available():
        build = f"torch {torch.__version__}" + ("" if torch.version.cuda else ", a CPU-only build")
        raise DeviceError(
            f"--gpu-id {gpu_id}: PyTorch sees no CUDA GPU ({build}); use --gpu-id -1 for the CPU, "
            f"or install a CUDA build of torch on a machine with an NVIDIA driver")
    count = torch.cuda.device_count()
    if gpu_id >= count:
        raise DeviceError(f"--gpu-id {gpu_id}: PyTorch sees {count} GPU(s), numbered 0 to {count - 1}")
    return torch.device("cuda", gpu_id)


def module_device(module: torch.nn.Module) -> torch.device:
    """The device of ``module``'s weights (every Mimick module has some)."""
    return next(module.parameters()).device


def on_cpu(device: torch.device) -> bool:
    """Whether ``device`` is the CPU (where some prediction paths differ: see their callers)."""
    return device.type == "cpu"


def batch_to(batch: Dict[str, torch.Tensor], device: torch.device) -> Dict[str, torch.Tensor]:
    """A Mimick module's input batch on ``device``. ``lengths`` stays where it is (the CPU):
    ``pack_padded_sequence`` takes its lengths on the CPU on every device."""
    return {name: value if name == "lengths" else value.to(device, non_blocking=True)
            for name, value in batch.items()}
