"""Inputs of the collaborative method: label sets, conformity scores and human policies.

A *human set* H(x) ⊆ {0, …, K−1} is what the expert proposes for one input. The package stores a
batch of sets as a boolean ``(n, K)`` mask; users may pass either that mask or a list of label
lists (ragged), e.g. ``[[3], [1, 7], []]``. A 2-D integer array is read as label lists too (row
``i`` holds the labels of H(x_i)), so the output of ``np.argsort(-p)[:, :2]`` is a valid input;
an integer array shaped like the mask, ``(n, K)`` with only 0/1 entries (``H.astype(int)``), is
ambiguous and refused: pass ``H.astype(bool)`` or label lists.

A *conformity score* s(x, y) is larger for labels that fit worse. The collaborative set is
``{y ∈ H : s ≤ b} ∪ {y ∉ H : s ≤ a}``, so any score works; the built-ins are

* ``"1-prob"`` (LAC): s(x, y) = 1 − p̂(y | x);
* ``"aps"`` (non-randomised adaptive prediction sets): the mass of the labels ranked up to and
  including y by decreasing p̂ (ties by label index);

both from :mod:`icml26_shared.conformal`;
* a callable ``score(probs) -> (n, K)`` array of finite scores.

Human policies turn a human probability vector into a set (used for the synthetic experiments
and for simulating experts): top-k, cumulative mass τ, probability threshold ω, and empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    check_choice,
    check_finite_array,
    check_in_interval,
    check_positive_int,
    check_probability_rows,
)
from icml26_shared.conformal import aps_scores, lac_scores

__all__ = [
    "HUMAN_POLICIES",
    "SCORES",
    "as_label_mask",
    "check_labels",
    "conformity_scores",
    "human_sets",
]

SCORES = ("1-prob", "aps")
HUMAN_POLICIES = ("top_k", "cumulative_mass", "threshold", "empty")

ScoreLike = str | Callable[[NDArray[np.float64]], ArrayLike]
HumanSets = ArrayLike | Sequence[Sequence[int]]


def check_labels(y: ArrayLike, n: int, n_classes: int, name: str = "y") -> NDArray[np.intp]:
    """Check integer labels of shape ``(n,)`` in ``[0, n_classes)`` and return them as intp."""
    arr = np.asarray(y)
    if (
        arr.dtype.kind == "f"
        and arr.size
        and np.all(np.isfinite(arr))
        and np.all(arr == np.round(arr))
    ):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer labels, got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if n and (arr.min() < 0 or arr.max() >= n_classes):
        raise ValueError(
            f"{name} must hold labels in [0, {n_classes - 1}], got range [{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.intp)


def as_label_mask(
    sets: HumanSets, n: int, n_classes: int, name: str = "human_sets"
) -> NDArray[np.bool_]:
    """Return a boolean ``(n, K)`` mask from a mask or from ``n`` label lists.

    Args:
        sets: a boolean ``(n, K)`` array, or a sequence of ``n`` sequences of integer labels
            (a 2-D integer array counts as such a sequence; duplicates are ignored).
        n: expected number of sets.
        n_classes: K, the size of the label space.
        name: the argument's name in error messages.

    Returns:
        A fresh boolean ``(n, K)`` mask.

    Raises:
        ValueError: wrong number of sets, wrong mask width, or a label outside ``[0, K)``.
        TypeError: non-integer labels.
    """
    if isinstance(sets, np.ndarray) and sets.dtype == np.bool_:
        if sets.shape != (n, n_classes):
            raise ValueError(f"{name} must have shape ({n}, {n_classes}), got {sets.shape}")
        return sets.copy()
    if (
        isinstance(sets, np.ndarray)
        and sets.ndim == 2
        and sets.dtype.kind in "iu"
        and sets.shape == (n, n_classes)
        and sets.size
        and np.isin(sets, (0, 1)).all()
    ):
        raise TypeError(
            f"{name} is an integer 0/1 array of the mask's shape {sets.shape}: it would be read as "
            "label lists (labels 0 and 1), which is almost never meant. Pass a boolean mask "
            f"({name}.astype(bool)) or a list of label lists"
        )
    if isinstance(sets, np.ndarray) and sets.ndim == 2:
        rows: Sequence[Any] = list(sets)
    elif isinstance(sets, np.ndarray) and sets.ndim != 1:
        raise ValueError(f"{name} must be a boolean (n, K) mask or n label lists, got {sets.shape}")
    else:
        try:
            rows = list(sets)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"{name} must be a boolean (n, K) mask or a list of label lists, "
                f"got {type(sets).__name__}"
            ) from None
    if len(rows) != n:
        raise ValueError(f"{name} must hold {n} sets, got {len(rows)}")
    mask = np.zeros((n, n_classes), dtype=bool)
    for i, row in enumerate(rows):
        labels = np.asarray(row).reshape(-1)
        if labels.size == 0:
            continue
        if labels.dtype.kind == "b":
            raise TypeError(
                f"{name}[{i}] must hold integer labels, got booleans (pass a boolean (n, K) "
                "array for masks)"
            )
        if labels.dtype.kind not in "iu":
            raise TypeError(f"{name}[{i}] must hold integer labels, got dtype {labels.dtype}")
        if labels.min() < 0 or labels.max() >= n_classes:
            raise ValueError(
                f"{name}[{i}] must hold labels in [0, {n_classes - 1}], got {labels.tolist()}"
            )
        mask[i, labels] = True
    return mask


def conformity_scores(probs: ArrayLike, score: ScoreLike = "1-prob") -> NDArray[np.float64]:
    """Conformity scores s(x, y) for every label: an ``(n, K)`` array (larger = worse fit).

    Args:
        probs: ``(n, K)`` predicted probabilities (rows sum to 1).
        score: ``"1-prob"`` (1 − p̂(y|x)), ``"aps"`` (mass of labels at least as likely as y) or
            a callable ``probs -> (n, K)`` scores.

    Returns:
        The ``(n, K)`` score matrix (finite).
    """
    p = check_probability_rows(probs, "probs")
    if callable(score):
        s = check_finite_array(score(p), "score(probs)", ndim=2)
        if s.shape != p.shape:
            raise ValueError(f"score(probs) must have shape {p.shape}, got {s.shape}")
        return s
    check_choice(score, "score", SCORES)
    if score == "1-prob":
        return lac_scores(p)
    return aps_scores(p)


def human_sets(
    human_probs: ArrayLike,
    policy: str = "top_k",
    *,
    k: int = 2,
    tau: float = 0.9,
    omega: float = 0.1,
) -> NDArray[np.bool_]:
    """Sets an expert with probabilities ``human_probs`` would propose under a policy.

    Policies:
        * ``"top_k"``: the k most likely labels.
        * ``"cumulative_mass"``: the fewest most-likely labels whose mass reaches τ.
        * ``"threshold"``: every label with probability ≥ ω (possibly empty).
        * ``"empty"``: H(x) = ∅ (the method then reduces to split conformal prediction).

    Args:
        human_probs: ``(n, K)`` probabilities of the (simulated) human.
        policy: one of :data:`HUMAN_POLICIES`.
        k: set size for ``top_k`` (1 ≤ k ≤ K).
        tau: mass for ``cumulative_mass``, in (0, 1].
        omega: probability threshold for ``threshold``, in (0, 1].

    Returns:
        Boolean ``(n, K)`` mask.
    """
    p = check_probability_rows(human_probs, "human_probs")
    check_choice(policy, "policy", HUMAN_POLICIES)
    n, K = p.shape
    if policy == "empty":
        return np.zeros((n, K), dtype=bool)
    if policy == "threshold":
        omega = check_in_interval(omega, "omega", 0, 1, closed=(False, True))
        return p >= omega
    order = np.argsort(-p, axis=1, kind="stable")
    mask = np.zeros((n, K), dtype=bool)
    if policy == "top_k":
        k = check_positive_int(k, "k")
        if k > K:
            raise ValueError(f"k must be at most the number of classes {K}, got {k}")
        np.put_along_axis(mask, order[:, :k], True, axis=1)
        return mask
    tau = check_in_interval(tau, "tau", 0, 1, closed=(False, True))
    cum = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)
    # keep label j of the sorted order while the mass before it is still below tau
    before = np.concatenate([np.zeros((n, 1)), cum[:, :-1]], axis=1)
    np.put_along_axis(mask, order, before < tau - 1e-12, axis=1)
    return mask
