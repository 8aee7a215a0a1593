"""One evaluation call: forgetting, utility, privacy (loss-based MIA) and closeness to retrain.

* accuracies on the forget set, the retain set, test samples of retained classes and (class
  forgetting) test samples of the forgotten classes;
* membership-inference AUC with the signal ``s(x, y) = −CE(model(x), y)`` (members score high):
  members = the forget set, non-members = test samples of the forgotten classes (class
  forgetting) or all test samples (random forgetting). ``0.5`` = indistinguishable, which is
  where a retrained model sits;
* ``JS(p_model ‖ p_retrain)`` of the softmax outputs, averaged over test samples (natural log);
* linear-probe accuracy on the forgotten-class test samples, a one-vs-rest ridge classifier
  (standardised inputs, ``alpha = 1``) fitted on the validation representations, for ``z = h(x)`` and ``z′`` (the deployed
  representation): a backbone left untouched still separates the forgotten class.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._data import Task, TensorData
from ._split import check_model_input

__all__ = ["UnlearnReport", "evaluate", "js_divergence", "mia_auc"]


def _real_scores(x: Any, name: str) -> np.ndarray:
    a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be real numbers, got dtype {a.dtype}")
    return a.astype(np.float64).ravel()


def mia_auc(member_scores: Any, nonmember_scores: Any) -> float:
    """``P(s_member > s_nonmember) + ½ P(=)``: the ROC AUC of a threshold attack (Mann–Whitney).

    Args:
        member_scores, nonmember_scores: real, finite attack scores (arrays or tensors, any
            shape, flattened), members expected to score higher.

    Example:
        >>> mia_auc([3.0, 2.0], [1.0, 0.0]), mia_auc([1.0], [1.0])
        (1.0, 0.5)
    """
    m = _real_scores(member_scores, "member_scores")
    n = _real_scores(nonmember_scores, "nonmember_scores")
    if m.size == 0 or n.size == 0:
        raise ValueError(f"both score sets must be non-empty, got {m.size} and {n.size}")
    for a, name in ((m, "member_scores"), (n, "nonmember_scores")):
        if not np.isfinite(a).all():
            raise ValueError(
                f"{name} must be finite, got {a[~np.isfinite(a)][0]} at index "
                f"{int(np.flatnonzero(~np.isfinite(a))[0])}"
            )
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([m, n]))
    u = ranks[: m.size].sum() - m.size * (m.size + 1) / 2
    return float(u / (m.size * n.size))


def _logit_matrix(x: Any, name: str) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(x)) if not isinstance(x, torch.Tensor) else x.detach()
    if t.is_complex() or not (t.is_floating_point() or t.dtype in (torch.int32, torch.int64)):
        raise TypeError(f"{name} must be real logits, got dtype {t.dtype}")
    if t.ndim != 2 or t.shape[0] == 0 or t.shape[1] < 2:
        raise ValueError(
            f"{name} must have shape (n, n_classes) with n >= 1 and n_classes >= 2, got "
            f"{tuple(t.shape)}"
        )
    t = t.double()
    bad = ~torch.isfinite(t).all(dim=1)
    if bad.any():
        raise ValueError(f"{name} must be finite, got NaN or inf in row {int(bad.nonzero()[0])}")
    return t


def js_divergence(logits_p: Any, logits_q: Any) -> float:
    """Mean over rows of ``JS(p, q) = ½ KL(p‖m) + ½ KL(q‖m)``, ``m = (p+q)/2`` (nats, ≤ ln 2),
    with ``p = softmax(logits_p)`` and ``q = softmax(logits_q)`` row by row.

    Args:
        logits_p, logits_q: real, finite logits of the same shape ``(n, n_classes)`` (tensors or
            numpy arrays; computed in float64).

    Example:
        >>> round(js_divergence(np.zeros((2, 3)), np.zeros((2, 3))), 12)
        0.0
    """
    lp_, lq_ = _logit_matrix(logits_p, "logits_p"), _logit_matrix(logits_q, "logits_q")
    if lp_.shape != lq_.shape:
        raise ValueError(
            f"logits_p and logits_q must have the same shape, got {tuple(lp_.shape)} and "
            f"{tuple(lq_.shape)}"
        )
    lp, lq = F.log_softmax(lp_, 1), F.log_softmax(lq_, 1)
    lm = torch.logsumexp(torch.stack([lp, lq]), 0) - np.log(2.0)
    kl_pm = (lp.exp() * (lp - lm)).sum(1)
    kl_qm = (lq.exp() * (lq - lm)).sum(1)
    return float((0.5 * (kl_pm + kl_qm)).mean())


@dataclass(frozen=True)
class UnlearnReport:
    """Figures of one unlearned model (``None``: not applicable or not requested)."""

    forget_acc: float
    retain_acc: float
    test_acc_retained: float
    test_acc_forgotten: float | None
    mia_auc: float
    js_to_retrain: float | None
    probe_z: float | None
    probe_z_prime: float | None

    def to_dict(self) -> dict[str, float | None]:
        return asdict(self)


def _logits(model: nn.Module, X: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(X)


def _acc(lg: torch.Tensor, y: torch.Tensor) -> float | None:
    return float((lg.argmax(1) == y).float().mean()) if len(y) else None


def _represent(model: nn.Module, X: torch.Tensor) -> torch.Tensor | None:
    fn = getattr(model, "represent", None)
    if fn is None:
        return None
    with torch.no_grad():
        return fn(X).reshape(len(X), -1)


def _probe(
    z_val: torch.Tensor, y_val: torch.Tensor, z_te: torch.Tensor, y_te: torch.Tensor
) -> float:
    from sklearn.linear_model import RidgeClassifier
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(z_val.numpy())
    clf = RidgeClassifier(alpha=1.0).fit(scaler.transform(z_val.numpy()), y_val.numpy())
    return float((clf.predict(scaler.transform(z_te.numpy())) == y_te.numpy()).mean())


def evaluate(
    model: nn.Module,
    splits: Task,
    original: nn.Module | None = None,
    retrain: nn.Module | None = None,
    *,
    probe: bool = True,
) -> UnlearnReport:
    """Evaluate ``model`` (inputs → logits) on the splits of ``splits``.

    Args:
        model: the unlearned model.
        splits: a :class:`~rep_unlearn.data.Task` (retain, forget, val, test, forget_classes).
        original: the model before unlearning; its representation ``h(x)`` gives ``probe_z``.
        retrain: the retrained reference for ``js_to_retrain``.
        probe: fit the linear probes (class forgetting only).
    """
    if not isinstance(splits, Task):
        raise TypeError(f"splits must be a rep_unlearn.data.Task, got {type(splits).__name__}")
    model.eval()
    te: TensorData = splits.test
    check_model_input(model, te.X, "splits.test.X")
    if original is not None:
        check_model_input(original, te.X, "splits.test.X (original)")
    if retrain is not None:
        check_model_input(retrain, te.X, "splits.test.X (retrain)")
    is_f_te = torch.isin(te.y, torch.tensor(list(splits.forget_classes), dtype=torch.long))
    lg_te = _logits(model, te.X)
    lg_f = _logits(model, splits.forget.X)
    member = -F.cross_entropy(lg_f, splits.forget.y, reduction="none")
    if splits.kind == "class":
        nonmember = -F.cross_entropy(lg_te[is_f_te], te.y[is_f_te], reduction="none")
    else:
        nonmember = -F.cross_entropy(lg_te, te.y, reduction="none")
    js = None if retrain is None else js_divergence(lg_te, _logits(retrain, te.X))
    probe_z = probe_zp = None
    if probe and splits.kind == "class":
        va = splits.val
        zp_val, zp_te = _represent(model, va.X), _represent(model, te.X[is_f_te])
        if zp_val is not None and zp_te is not None:
            probe_zp = _probe(zp_val, va.y, zp_te, te.y[is_f_te])
        if original is not None and hasattr(original, "represent"):
            z_val, z_te = _represent(original, va.X), _represent(original, te.X[is_f_te])
            probe_z = _probe(z_val, va.y, z_te, te.y[is_f_te])
    return UnlearnReport(
        forget_acc=float(_acc(lg_f, splits.forget.y)),
        retain_acc=float(_acc(_logits(model, splits.retain.X), splits.retain.y)),
        test_acc_retained=float(_acc(lg_te[~is_f_te], te.y[~is_f_te])),
        test_acc_forgotten=_acc(lg_te[is_f_te], te.y[is_f_te]) if splits.kind == "class" else None,
        mia_auc=mia_auc(member.numpy(), nonmember.numpy()),
        js_to_retrain=js,
        probe_z=probe_z,
        probe_z_prime=probe_zp,
    )
