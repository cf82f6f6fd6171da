"""Adam and SparseAdam for the Mimick trainer, with torch.optim's update rules.

Why not ``torch.optim``: its optimizers' constructor imports ``torch._dynamo`` (through
``torch._disable_dynamo`` on ``add_param_group``), which costs about a second of CPU at start-up,
and its single-tensor Adam runs about ten small ops per parameter per step, a sixth of a
BiLSTM training step on one core. These classes apply the same formulas (``torch.optim.Adam``
with default betas/eps and no weight decay; ``torch.optim.SparseAdam``) with ``torch._foreach_*``
ops over all dense parameters at once; ``tests/test_fast_training.py`` checks that they track
torch.optim to float rounding.

``Adam`` also keeps its parameters in one flat buffer (each parameter a view of it) and clips
the gradient norm itself: a step of the paper's BiLSTM is then a dozen ops on one tensor instead
of ~10 ops for each of its 13 parameters plus ``clip_grad_norm_``'s per-tensor norms, which were
about a tenth of a step's CPU time at batch 128 (docs/speed.md). On the CPU, with the C extension
built (``_cpu_kernels``), those ops are one pass over the buffers.
"""
import math
from typing import Iterable, List, Optional

import torch

from ..devices import on_cpu

try:  # Adam's update in one pass of C (the extension fast_bilstm.py uses too)
    from ._cpu_kernels import adam_update as _has_kernel  # noqa: F401
    from . import _cpu_kernels
except ImportError:  # built without a C compiler: torch's foreach ops, the same formulas
    _cpu_kernels = None


class Adam:
    """``torch.optim.Adam(params, lr, betas=(0.9, 0.999), eps=1e-8)`` for dense gradients.

    When the parameters share a device (not a CUDA GPU) and dtype, the constructor moves their data into one
    contiguous buffer (``flat``) and makes each parameter a view of it (``p.data = ...``; the
    parameter objects stay the module's, so state_dict/load_state_dict work as before, but a
    later ``module.to(...)`` gives the module new tensors: build the optimizer after moving the
    module). A step whose parameters all have gradients then concatenates the gradients and
    updates the flat buffer with single-tensor ops; otherwise (some gradient is None) it updates
    the parameters that have one, tensor by tensor, as torch.optim does.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params: List[torch.Tensor] = list(params)
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.flat: Optional[torch.Tensor] = _flatten(self.params)
        if self.flat is not None:
            self._exp_avg_flat = torch.zeros_like(self.flat)
            self._exp_avg_sq_flat = torch.zeros_like(self.flat)
            self.exp_avg = flat_views(self._exp_avg_flat, self.params)
            self.exp_avg_sq = flat_views(self._exp_avg_sq_flat, self.params)
        else:
            self.exp_avg = [torch.zeros_like(p) for p in self.params]
            self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.steps = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, max_grad_norm: float = 0.0) -> None:
        """One Adam step; with ``max_grad_norm`` > 0, first scale the gradients as
        ``torch.nn.utils.clip_grad_norm_(params, max_grad_norm)`` does (over those that exist)."""
        if self.flat is not None and all(p.grad is not None for p in self.params):
            grad = torch.cat([p.grad.reshape(-1) for p in self.params])
            if _cpu_kernels is not None and on_cpu(self.flat.device) and self.flat.dtype == torch.float32:
                self._kernel_step(grad, max_grad_norm)
                return
            coef = _clip_coef(max_grad_norm, lambda: float(torch.linalg.vector_norm(grad)))
            if coef < 1.0:
                grad.mul_(coef)
            params, grads = [self.flat], [grad]
            exp_avg, exp_avg_sq = [self._exp_avg_flat], [self._exp_avg_sq_flat]
        else:
            pairs = [(p, p.grad, m, v) for p, m, v in zip(self.params, self.exp_avg, self.exp_avg_sq)
                     if p.grad is not None]
            if not pairs:
                return
            params, grads, exp_avg, exp_avg_sq = (list(x) for x in zip(*pairs))
            if max_grad_norm:
                torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        bias_correction1, bias_correction2_sqrt = self._count_step()
        torch._foreach_lerp_(exp_avg, grads, 1 - self.beta1)
        torch._foreach_mul_(exp_avg_sq, self.beta2)
        torch._foreach_addcmul_(exp_avg_sq, grads, grads, 1 - self.beta2)
        denom = torch._foreach_sqrt(exp_avg_sq)
        torch._foreach_div_(denom, bias_correction2_sqrt)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(params, exp_avg, denom, -self.lr / bias_correction1)

    def _count_step(self):
        """One more step: Adam's bias corrections 1 - beta1^t and sqrt(1 - beta2^t)."""
        self.steps += 1
        return 1 - self.beta1 ** self.steps, math.sqrt(1 - self.beta2 ** self.steps)

    def _kernel_step(self, grad: torch.Tensor, max_grad_norm: float) -> None:
        """The step above as one pass of the C kernel over the flat buffers (CPU, float32)."""
        coef = min(1.0, _clip_coef(max_grad_norm, lambda: math.sqrt(_cpu_kernels.sum_squares(grad.numel(), grad.data_ptr()))))
        bias_correction1, bias_correction2_sqrt = self._count_step()
        _cpu_kernels.adam_update(
            self.flat.numel(), self.flat.data_ptr(), grad.data_ptr(), self._exp_avg_flat.data_ptr(),
            self._exp_avg_sq_flat.data_ptr(), coef, 1 - self.beta1, self.beta2, 1 - self.beta2,
            self.lr / bias_correction1, bias_correction2_sqrt, self.eps)


def _clip_coef(max_grad_norm: float, norm) -> float:
    """clip_grad_norm_'s scale for a gradient whose norm ``norm()`` gives (computed only when
    clipping): max_grad_norm / (norm + 1e-6); 1.0 without clipping."""
    return max_grad_norm / (norm() + 1e-6) if max_grad_norm else 1.0


def _flatten(params: List[torch.Tensor]) -> Optional[torch.Tensor]:
    """Move the parameters' data into one new buffer, each parameter becoming a view of it; None
    (nothing changed) unless there are parameters, all dense, on one device, of one dtype, and
    none on a CUDA GPU: there cuDNN keeps an LSTM's weights in a flat buffer of its own (views of
    ours would be copied into one at every call, with a warning), and the per-op overhead this
    saves on a CPU is hidden behind the GPU's asynchronous launches anyway."""
    if not params or any(p.is_sparse or p.is_cuda for p in params) or \
            len({(p.device, p.dtype) for p in params}) != 1:
        return None
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    for p, view in zip(params, flat_views(flat, params)):
        p.data = view
    return flat


def flat_views(flat: torch.Tensor, params: List[torch.Tensor]) -> List[torch.Tensor]:
    """Views of ``flat``, one per parameter, of its shape, in order."""
    views, offset = [], 0
    for p in params:
        views.append(flat[offset:offset + p.numel()].view_as(p))
        offset += p.numel()
    return views


class SparseAdam:
    """``torch.optim.SparseAdam(params, lr, betas=(0.9, 0.999), eps=1e-8)``: a lazy Adam that
    updates only the rows present in a sparse gradient (n-gram tables)."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params: List[torch.Tensor] = list(params)
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.steps = [0] * len(self.params)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        for k, p in enumerate(self.params):
            if p.grad is None:
                continue
            if not p.grad.is_sparse:
                raise RuntimeError("SparseAdam takes sparse gradients (Embedding/EmbeddingBag with sparse=True)")
            self.steps[k] += 1
            grad = p.grad.coalesce()
            rows = grad._indices()[0]
            values = grad._values()
            exp_avg, exp_avg_sq = self.exp_avg[k], self.exp_avg_sq[k]
            old_avg = exp_avg.index_select(0, rows)
            old_avg_sq = exp_avg_sq.index_select(0, rows)
            avg = old_avg.lerp_(values, 1 - self.beta1)
            avg_sq = old_avg_sq.mul_(self.beta2).addcmul_(values, values, value=1 - self.beta2)
            exp_avg.index_copy_(0, rows, avg)
            exp_avg_sq.index_copy_(0, rows, avg_sq)
            bias_correction1 = 1 - self.beta1 ** self.steps[k]
            bias_correction2 = 1 - self.beta2 ** self.steps[k]
            step_size = self.lr * math.sqrt(bias_correction2) / bias_correction1
            p.index_add_(0, rows, avg.div_(avg_sq.sqrt_().add_(self.eps)), alpha=-step_size)
