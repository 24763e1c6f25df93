r"""The one optimizer the package trains with: Adam on a flat buffer (no weight decay).

Below the concept modules (like ``_validate``): the extrapolation lab and notebook 02's learned table both
train with it, and neither imports ``torch.optim``.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = ["Adam"]


class Adam:
    r"""Adam (Kingma & Ba 2015, arXiv:1412.6980, Algorithm 1) on one flat buffer, without weight decay.

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,\quad
        \theta \leftarrow \theta - \eta\,\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon}

    Every parameter (and its gradient) is a view into one contiguous buffer, so a step is six tensor
    operations instead of six per parameter. Used by the extrapolation lab
    (:func:`pe_helpers.extrapolation.training.fit`) and by notebook 02's running-maximum training
    (:func:`pe_helpers.learned.train_running_max`). Kept because it still saves measured time
    (``benchmarks/lab.py --optimizer``, 2-core machine, torch 2.13, 700 steps, default model):
    flat buffer 7.5 s vs ``torch.optim.Adam(foreach=True)`` 8.2 s per model (about 9 % faster), and
    the first ``torch.optim`` optimizer of a process also imports ``torch._dynamo`` (1–3 s of CPU, in every
    kernel and slide deck that trains).
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], *, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params = [p for p in params if p.requires_grad]
        total = sum(p.numel() for p in self.params)
        self.flat = torch.empty(total)
        self.grad = torch.zeros(total)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                self.flat[offset:offset + n].copy_(p.reshape(-1))
                p.data = self.flat[offset:offset + n].view_as(p)
                p.grad = self.grad[offset:offset + n].view_as(p)  # backward accumulates into it in place
                offset += n
        self.m = torch.zeros(total)
        self.v = torch.zeros(total)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0

    def zero_grad(self) -> None:
        self.grad.zero_()

    @torch.no_grad()
    def step(self, lr: float) -> None:
        """One update with learning rate ``lr``."""
        self.t += 1
        self.m.lerp_(self.grad, 1.0 - self.beta1)
        self.v.mul_(self.beta2).addcmul_(self.grad, self.grad, value=1.0 - self.beta2)
        denom = (self.v / (1.0 - self.beta2 ** self.t)).sqrt_().add_(self.eps)
        self.flat.addcdiv_(self.m, denom, value=-lr / (1.0 - self.beta1 ** self.t))
