"""Optimisers: the paper's Muon + Adam parameter groups, and AdamW.

:class:`Muon` is ``torch.optim.Muon`` (same arguments, 2-D check, state and update: Nesterov
momentum, quintic Newton-Schulz orthogonalisation, rate scaled by ``sqrt(max(1, A / B))``) with
one addition, the dtype of the Newton-Schulz iteration. torch runs it in bfloat16, which is
exact enough but on CPUs without bfloat16 matrix units about 17x slower than float32 (36 ms
against 2 ms for one 384 x 128 orthogonalisation here); ``ns_dtype=None`` (default) uses float32
on the CPU and bfloat16 elsewhere. With ``ns_dtype=torch.bfloat16`` a step equals
``torch.optim.Muon``'s bit for bit (tested).

References:
    Jordan et al., "Muon: an optimizer for hidden layers in neural networks" (2024);
    Kreitner, Hager et al., BitTokens, ICML 2026, arXiv:2510.06824 (parameter groups and rates).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import torch

if TYPE_CHECKING:
    from ._model import TinyGPT

__all__ = ["AdamW", "Muon", "MuonWithAdam", "make_optimizer", "newton_schulz", "param_groups"]

_TorchMuon: Any = getattr(torch.optim, "Muon", None)
if _TorchMuon is None:  # torch < 2.9

    class _TorchMuon:  # type: ignore[no-redef]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise ImportError(
                f"optimizer='muon' needs torch.optim.Muon (torch >= 2.9), got torch "
                f"{torch.__version__}; upgrade torch or pass optimizer='adamw'"
            )


def newton_schulz(
    g: torch.Tensor,
    coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
    steps: int = 5,
    eps: float = 1e-7,
    dtype: torch.dtype = torch.bfloat16,
) -> torch.Tensor:
    r"""Approximate orthogonalisation :math:`U S' V^T` of a 2-D ``g = U S V^T`` (quintic
    Newton-Schulz, :math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^T`, on the wide side),
    computed in ``dtype``; the same operations as ``torch.optim.Muon``."""
    a, b, c = coefficients
    x = g.to(dtype=dtype, copy=True)
    tall = g.size(0) > g.size(1)
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


class Muon(_TorchMuon):
    """``torch.optim.Muon`` with the Newton-Schulz dtype as an option (module docstring).

    Args:
        params, lr, weight_decay, momentum, nesterov, ns_coefficients, eps, ns_steps,
        adjust_lr_fn: as ``torch.optim.Muon`` (every parameter must be 2-D).
        ns_dtype: dtype of the orthogonalisation; ``None``: float32 on CPU, else bfloat16.
    """

    def __init__(self, params: Any, *args: Any, ns_dtype: torch.dtype | None = None, **kw: Any):
        super().__init__(params, *args, **kw)
        self.ns_dtype = ns_dtype

    @staticmethod
    def _scale(lr: float, fn: str | None, shape: torch.Size) -> float:
        a, b = shape[:2]
        if fn is None or fn == "original":
            return lr * math.sqrt(max(1.0, a / b))
        if fn == "match_rms_adamw":
            return lr * 0.2 * math.sqrt(max(a, b))
        return lr * math.sqrt(a / b)  # spectral_unclamped

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params: list[torch.Tensor] = []
            grads: list[torch.Tensor] = []
            bufs: list[torch.Tensor] = []
            self._init_group(group, params, grads, bufs)
            mu, lr, wd = group["momentum"], group["lr"], group["weight_decay"]
            for p, g, buf in zip(params, grads, bufs):
                buf.lerp_(g, 1 - mu)
                update = g.lerp(buf, mu) if group["nesterov"] else buf
                dtype = self.ns_dtype or (
                    torch.float32 if p.device.type == "cpu" else torch.bfloat16
                )
                o = newton_schulz(
                    update, group["ns_coefficients"], group["ns_steps"], group["eps"], dtype
                )
                p.mul_(1 - lr * wd)
                p.add_(o, alpha=-self._scale(lr, group["adjust_lr_fn"], p.shape))
        return loss


class AdamW:
    r"""AdamW (Loshchilov & Hutter, 2019) with torch.optim.AdamW's update, in plain tensor ops.

    .. math::

        \theta \leftarrow \theta (1 - \eta \lambda), \quad
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2,
        \quad \theta \leftarrow \theta - \eta \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}.

    Used instead of ``torch.optim.AdamW`` only because the latter imports ``torch._dynamo`` on
    its first step (10-20 s on a small CPU, paid again in every DDP worker); a test checks both
    give the same parameters.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.weight_decay)
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v.sqrt() / math.sqrt(c2)).add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / c1)


def param_groups(model: TinyGPT) -> dict[str, list[torch.nn.Parameter]]:
    """The paper's parameter groups of a :class:`TinyGPT`.

    Returns:
        ``hidden``: weight matrices inside the transformer blocks (Muon); ``embed``: the token
        embedding (tied with the output layer); ``scalar``: every parameter with fewer than 2
        dimensions (biases, norms); ``head``: the rest (number embedding and head weights,
        learned positions).
    """
    hidden = [p for p in model.blocks.parameters() if p.ndim >= 2]
    embed = [model.tok.weight]
    scalar = [p for p in model.parameters() if p.ndim < 2]
    seen = {id(p) for p in hidden + embed + scalar}
    head = [p for p in model.parameters() if id(p) not in seen]
    return {"hidden": hidden, "embed": embed, "scalar": scalar, "head": head}


class MuonWithAdam:
    """Muon on the hidden matrices and Adam on the rest, with the paper's rate ratios.

    :class:`Muon` (``torch.optim.Muon``'s update, Keller Jordan's: Nesterov momentum 0.95, 5 Newton-Schulz steps,
    rate scaled by ``sqrt(max(1, fan_out / fan_in))``) runs on ``hidden`` at ``lr``; Adam
    (betas 0.9/0.95) on ``head`` at ``0.2 lr``, ``embed`` at ``15 lr`` (weight decay
    ``weight_decay``) and ``scalar`` at ``lr``. :meth:`scale` multiplies every base rate.
    """

    RATIOS: ClassVar[dict[str, float]] = {"hidden": 1.0, "head": 0.2, "embed": 15.0, "scalar": 1.0}

    def __init__(self, groups: dict[str, list[torch.nn.Parameter]], lr: float, weight_decay: float):
        self.base = {k: lr * r for k, r in self.RATIOS.items()}
        self.muon = Muon(
            groups["hidden"], lr=self.base["hidden"], weight_decay=0.0, momentum=0.95, nesterov=True
        )
        self.adam = {
            k: AdamW(
                groups[k],
                lr=self.base[k],
                betas=(0.9, 0.95),
                weight_decay=weight_decay if k == "embed" else 0.0,
            )
            for k in ("head", "embed", "scalar")
        }

    def scale(self, factor: float) -> None:
        for g in self.muon.param_groups:
            g["lr"] = self.base["hidden"] * factor
        for k, opt in self.adam.items():
            opt.lr = self.base[k] * factor

    def zero_grad(self) -> None:
        self.muon.zero_grad(set_to_none=True)
        for opt in self.adam.values():
            opt.zero_grad()

    def step(self) -> None:
        self.muon.step()
        for opt in self.adam.values():
            opt.step()


class _AdamWAll(AdamW):
    """AdamW at one rate on every parameter, with :meth:`scale` like :class:`MuonWithAdam`."""

    def scale(self, factor: float) -> None:
        self.lr = self.base * factor


def make_optimizer(model: TinyGPT, name: str, lr: float, weight_decay: float) -> Any:
    """The optimiser ``name`` (``"muon"`` or ``"adamw"``) over ``model``, at peak rate ``lr``."""
    if name == "muon":
        return MuonWithAdam(param_groups(model), lr, weight_decay)
    opt = _AdamWAll(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.98))
    opt.base = lr
    return opt
