"""The validation-only hyperparameter rule, shared by our β and every baseline's grid.

* Class forgetting: among candidates whose forget-class validation accuracy is ``≤ tol``
  (5%), take the largest retained-class validation accuracy (ties: the earlier candidate, i.e.
  the smaller β on the ascending grid). If none reaches ``tol``, the lowest forget-class
  accuracy wins.
* Random-subset forgetting: unseen validation data stand in for retraining (a retrained model
  has never seen the forget set either), so take the candidate minimising
  ``|acc(forget) − acc(val)| + KS(CE losses on forget, CE losses on val)``, ``KS`` the
  two-sample Kolmogorov–Smirnov statistic.

Test data are never read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

__all__ = ["FORGET_TOL", "select_candidate"]

FORGET_TOL = 0.05


def _acc(logits: torch.Tensor, y: torch.Tensor) -> float:
    return float((logits.argmax(1) == y).float().mean()) if len(y) else float("nan")


def select_candidate(
    mode: str,
    val_logits: Sequence[torch.Tensor],
    val_y: torch.Tensor,
    forget_logits: Sequence[torch.Tensor] | None = None,
    forget_y: torch.Tensor | None = None,
    forget_classes: Sequence[int] = (),
    tol: float = FORGET_TOL,
) -> tuple[int, list[dict[str, Any]]]:
    """Index of the chosen candidate and one record of validation figures per candidate."""
    records: list[dict[str, Any]] = []
    if mode == "class":
        is_f = torch.isin(val_y, torch.as_tensor(list(forget_classes), dtype=val_y.dtype))
        if not is_f.any() or is_f.all():
            raise ValueError(
                "validation data must hold samples of both forgotten and retained classes for "
                "the class-forgetting rule"
            )
        for lg in val_logits:
            records.append(
                {
                    "val_retained_acc": _acc(lg[~is_f], val_y[~is_f]),
                    "val_forget_acc": _acc(lg[is_f], val_y[is_f]),
                }
            )
        ok = [i for i, r in enumerate(records) if r["val_forget_acc"] <= tol]
        if ok:
            best = max(ok, key=lambda i: (records[i]["val_retained_acc"], -i))
        else:
            best = min(
                range(len(records)),
                key=lambda i: (records[i]["val_forget_acc"], -records[i]["val_retained_acc"], i),
            )
        return best, records
    if mode != "random":
        raise ValueError(f"mode must be one of 'class', 'random', got {mode!r}")
    if forget_logits is None or forget_y is None:
        raise ValueError("forget_logits and forget_y are needed for the random-forgetting rule")
    for lv, lf in zip(val_logits, forget_logits):
        loss_v = F.cross_entropy(lv, val_y, reduction="none").numpy()
        loss_f = F.cross_entropy(lf, forget_y, reduction="none").numpy()
        acc_v, acc_f = _acc(lv, val_y), _acc(lf, forget_y)
        from scipy.stats import ks_2samp  # on first use: `import rep_unlearn` stays light

        ks = float(ks_2samp(loss_f, loss_v).statistic)
        records.append(
            {"val_acc": acc_v, "forget_acc": acc_f, "ks": ks, "score": abs(acc_f - acc_v) + ks}
        )
    scores = np.array([r["score"] for r in records])
    return int(np.argmin(scores)), records
