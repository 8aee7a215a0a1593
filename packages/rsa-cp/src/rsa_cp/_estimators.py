"""MAPIE-style estimators: ``fit`` -> ``conformalize(..., reference_scores=...)`` -> predict.

``RSAConformalRegressor`` wraps any scikit-learn regressor (absolute-residual score
``|y - f(x)|``) or a pair of quantile regressors (CQR score
``max(f_lo(x) - y, y - f_hi(x))``); ``RSAConformalClassifier`` wraps any classifier with
``predict_proba`` (score ``1 - p_y(x)``). ``method`` selects RSA-CP (default), SPI's fast form
(``"spi"``) or plain split conformal (``"split"``) behind the same API.

References:
    Bhagwat, Yang, Wang, Jiang, Kong. "Efficient Conformal Prediction in Small-Sample Regimes
    via Random Score Alignment" (RSA-CP), ICML 2026.
    Romano, Patterson, Candès. "Conformalized Quantile Regression", NeurIPS 2019 (CQR score).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    check_choice,
    check_finite_array,
    check_in_interval,
    check_same_length,
)

from ._rsa import GUARANTEES, RSAThreshold, _not_text, rsa_threshold, split_threshold

__all__ = ["METHODS", "RSAConformalClassifier", "RSAConformalRegressor"]

METHODS = ("rsa", "spi", "split")


def _clone(estimator: Any) -> Any:
    from sklearn.base import clone

    return clone(estimator)


def _check_fitted(obj: Any, attr: str, step: str) -> None:
    if getattr(obj, attr, None) is None:
        raise RuntimeError(f"call {step} first")


def _features(X: ArrayLike, name: str = "X") -> NDArray[np.float64]:
    arr = check_finite_array(X, name, ndim=(1, 2))
    return arr.reshape(-1, 1) if arr.ndim == 1 else arr


class _Base:
    """Shared settings, checks and the calibration step."""

    def __init__(
        self,
        estimator: Any,
        confidence_level: float,
        window: float,
        method: str,
        guarantee: str,
        prefit: bool,
    ) -> None:
        self.estimator = estimator
        _not_text(confidence_level, "confidence_level")
        _not_text(window, "window")
        if not isinstance(prefit, bool | np.bool_):
            raise TypeError(f"prefit must be True or False, got {prefit!r}")
        self.confidence_level = check_in_interval(confidence_level, "confidence_level", 0, 1)
        self.window = check_in_interval(window, "window", 0, 1)
        self.method = check_choice(method, "method", METHODS)
        self.guarantee = check_choice(guarantee, "guarantee", GUARANTEES)
        if guarantee == "marginal" and method != "rsa":
            raise ValueError(f"guarantee='marginal' needs method='rsa', got method={method!r}")
        self.prefit = bool(prefit)
        self.rule_: RSAThreshold | None = None
        self.threshold_: float | None = None
        self.n_calibration_: int | None = None

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence_level

    def _calibrate(self, cal_scores: NDArray[np.float64], ref: ArrayLike | None) -> None:
        self.n_calibration_ = int(cal_scores.size)
        if self.method == "split":
            self.rule_ = None
            self.threshold_ = split_threshold(cal_scores, self.alpha)
            return
        if ref is None:
            raise ValueError(
                f"method={self.method!r} needs reference scores: pass reference_scores= or "
                "reference_data=(X_ref, y_ref)"
            )
        self.rule_ = rsa_threshold(
            cal_scores,
            ref,
            self.alpha,
            self.window,
            align=self.method == "rsa",
            guarantee=self.guarantee,
        )
        self.threshold_ = self.rule_.threshold

    def _reference(self, reference_scores: ArrayLike | None, reference_data: Any) -> Any:
        if reference_scores is not None and reference_data is not None:
            raise ValueError("pass either reference_scores or reference_data, not both")
        if reference_data is not None:
            if not isinstance(reference_data, Sequence) or len(reference_data) != 2:
                raise TypeError("reference_data must be a pair (X_ref, y_ref)")
            return self.conformity_scores(*reference_data)
        if reference_scores is not None:
            return check_finite_array(reference_scores, "reference_scores", ndim=1)
        return None

    def conformity_scores(self, X: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        raise NotImplementedError

    def _included(self, scores: NDArray[np.float64]) -> NDArray[np.bool_]:
        """``s <= t`` with ``t`` the largest included score (see the classifier docstring)."""
        _check_fitted(self, "threshold_", "conformalize")
        return scores <= self.threshold_


class RSAConformalRegressor(_Base):
    """Conformal intervals that borrow strength from reference scores (RSA-CP).

    Args:
        estimator: a scikit-learn regressor (default ``LinearRegression()``); with
            ``score="cqr"`` a pair ``(lower_model, upper_model)`` of quantile regressors.
        confidence_level: target coverage ``1 - alpha``.
        window: the Beta-Binomial window level ``beta`` (default 0.4).
        method: ``"rsa"`` (OT-aligned, default), ``"spi"`` (no alignment) or ``"split"``.
        guarantee: ``"none"`` or ``"marginal"`` (see :func:`rsa_cp.rsa_threshold`).
        score: ``"absolute"`` (``|y - f(x)|``) or ``"cqr"``.
        prefit: the estimator(s) are already fitted; skip :meth:`fit`.

    Intervals are ``f(x) ± t`` (CQR: ``[f_lo(x) - t, f_hi(x) + t]``) with ``t`` the largest
    included score; ``t = +inf`` gives ``(-inf, +inf)`` and ``t = -inf`` (nothing included) the
    empty interval, encoded as ``(nan, nan)``.

    Examples:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 2)); y = X @ [1.0, -2.0] + rng.normal(size=300)
        >>> reg = RSAConformalRegressor(confidence_level=0.9).fit(X[:200], y[:200])
        >>> ref = np.abs(rng.normal(size=2000))        # e.g. residuals from a simulator
        >>> _ = reg.conformalize(X[200:230], y[200:230], reference_scores=ref)
        >>> y_pred, y_pis = reg.predict_interval(X[230:])
        >>> y_pis.shape
        (70, 2)
    """

    def __init__(
        self,
        estimator: Any = None,
        confidence_level: float = 0.9,
        window: float = 0.4,
        *,
        method: str = "rsa",
        guarantee: str = "none",
        score: str = "absolute",
        prefit: bool = False,
    ) -> None:
        super().__init__(estimator, confidence_level, window, method, guarantee, prefit)
        self.score = check_choice(score, "score", ("absolute", "cqr"))
        if self.score == "cqr" and not (isinstance(estimator, Sequence) and len(estimator) == 2):
            raise TypeError("score='cqr' needs estimator=(lower_model, upper_model)")
        self.estimators_: list[Any] | None = None
        if prefit:
            self.estimators_ = self._models()

    def _models(self) -> list[Any]:
        if self.score == "cqr":
            return list(self.estimator)
        if self.estimator is None:
            from sklearn.linear_model import LinearRegression

            return [LinearRegression()]
        return [self.estimator]

    def fit(self, X: ArrayLike, y: ArrayLike) -> RSAConformalRegressor:
        """Fit (clones of) the estimator(s) on training data; returns ``self``."""
        if self.prefit:
            raise RuntimeError("prefit=True: the estimator is already fitted, skip fit")
        Xa, ya = _features(X), check_finite_array(y, "y", ndim=1)
        check_same_length(X=Xa, y=ya)
        self.estimators_ = [_clone(e).fit(Xa, ya) for e in self._models()]
        return self

    def _predict_parts(self, X: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        _check_fitted(self, "estimators_", "fit (or pass prefit=True)")
        assert self.estimators_ is not None
        Xa = _features(X)
        if self.score == "cqr":
            lo = np.asarray(self.estimators_[0].predict(Xa), dtype=np.float64)
            hi = np.asarray(self.estimators_[1].predict(Xa), dtype=np.float64)
            return (lo + hi) / 2, lo, hi
        f = np.asarray(self.estimators_[0].predict(Xa), dtype=np.float64)
        return f, f, f

    def conformity_scores(self, X: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """Scores of labelled data under the fitted model (use it to score reference data)."""
        ya = check_finite_array(y, "y", ndim=1)
        _, lo, hi = self._predict_parts(X)
        check_same_length(X=lo, y=ya)
        return np.maximum(lo - ya, ya - hi) if self.score == "cqr" else np.abs(ya - lo)

    def conformalize(
        self,
        X_conformalize: ArrayLike,
        y_conformalize: ArrayLike,
        *,
        reference_scores: ArrayLike | None = None,
        reference_data: tuple[ArrayLike, ArrayLike] | None = None,
    ) -> RSAConformalRegressor:
        """Calibrate on ``m`` real labelled points and a reference pool; returns ``self``.

        Args:
            X_conformalize: ``(m, d)`` real calibration features.
            y_conformalize: ``(m,)`` real calibration targets.
            reference_scores: ``(N,)`` reference conformity scores.
            reference_data: or ``(X_ref, y_ref)``, scored with the fitted model.
        """
        ref = self._reference(reference_scores, reference_data)
        self._calibrate(self.conformity_scores(X_conformalize, y_conformalize), ref)
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Point predictions (the midpoint of the two quantile models for CQR)."""
        return self._predict_parts(X)[0]

    def predict_interval(self, X: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(y_pred, y_pis)`` with ``y_pis[:, 0]`` the lower and ``y_pis[:, 1]`` the upper end."""
        _check_fitted(self, "threshold_", "conformalize")
        pred, lo, hi = self._predict_parts(X)
        t = float(self.threshold_)  # type: ignore[arg-type]
        if np.isneginf(t):
            pis = np.full((pred.size, 2), np.nan)
        else:
            pis = np.stack([lo - t, hi + t], axis=1)
        return pred, pis


class RSAConformalClassifier(_Base):
    """Conformal label sets that borrow strength from reference scores (RSA-CP).

    The score of label ``y`` at ``x`` is ``1 - p_y(x)``; label ``y`` enters the set iff its
    score is at most ``t``, the largest score the calibrated rule includes. The exact per-score
    rule (:meth:`rsa_cp.RSAThreshold.includes`) can leave holes below ``t``; closing them only
    adds coverage and is what the proven bound ``L/(m+1)`` is stated for (the event
    ``s <= t``), so regression and classification share one guarantee. When ``t = +inf`` (too
    few calibration points for the level) every set is full.

    Args:
        estimator: a scikit-learn classifier with ``predict_proba`` (default
            ``LogisticRegression(max_iter=1000)``).
        confidence_level: target coverage ``1 - alpha``.
        window: the window level ``beta``.
        method: ``"rsa"``, ``"spi"`` or ``"split"``.
        guarantee: ``"none"`` or ``"marginal"``.
        prefit: the estimator is already fitted.
    """

    def __init__(
        self,
        estimator: Any = None,
        confidence_level: float = 0.9,
        window: float = 0.4,
        *,
        method: str = "rsa",
        guarantee: str = "none",
        prefit: bool = False,
    ) -> None:
        super().__init__(estimator, confidence_level, window, method, guarantee, prefit)
        self.estimator_: Any = estimator if prefit else None
        self.classes_: NDArray[Any] | None = None
        if prefit:
            self.classes_ = np.asarray(estimator.classes_)

    def fit(self, X: ArrayLike, y: ArrayLike) -> RSAConformalClassifier:
        """Fit a clone of the classifier; returns ``self``."""
        if self.prefit:
            raise RuntimeError("prefit=True: the estimator is already fitted, skip fit")
        Xa, ya = _features(X), np.asarray(y)
        check_same_length(X=Xa, y=ya)
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            base: Any = LogisticRegression(max_iter=1000)
        else:
            base = self.estimator
        self.estimator_ = _clone(base).fit(Xa, ya)
        self.classes_ = np.asarray(self.estimator_.classes_)
        return self

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        _check_fitted(self, "estimator_", "fit (or pass prefit=True)")
        return np.asarray(self.estimator_.predict_proba(_features(X)), dtype=np.float64)

    def _label_index(self, y: ArrayLike) -> NDArray[np.intp]:
        assert self.classes_ is not None
        ya = np.asarray(y)
        pos = np.searchsorted(self.classes_, ya)
        pos = np.clip(pos, 0, self.classes_.size - 1)
        if ya.ndim != 1 or not np.all(self.classes_[pos] == ya):
            raise ValueError(f"y must hold labels among {self.classes_.tolist()}")
        return pos

    def conformity_scores(self, X: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """``1 - p_y(x)`` of labelled data under the fitted model."""
        proba = self.predict_proba(X)
        idx = self._label_index(y)
        check_same_length(X=proba, y=idx)
        return 1.0 - proba[np.arange(idx.size), idx]

    def conformalize(
        self,
        X_conformalize: ArrayLike,
        y_conformalize: ArrayLike,
        *,
        reference_scores: ArrayLike | None = None,
        reference_data: tuple[ArrayLike, ArrayLike] | None = None,
    ) -> RSAConformalClassifier:
        """Calibrate on ``m`` real labelled points and a reference pool; returns ``self``."""
        ref = self._reference(reference_scores, reference_data)
        self._calibrate(self.conformity_scores(X_conformalize, y_conformalize), ref)
        return self

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The most probable label."""
        proba = self.predict_proba(X)  # raises first when the model is not fitted
        return self.classes_[np.argmax(proba, axis=1)]  # type: ignore[index]

    def predict_set(self, X: ArrayLike) -> tuple[NDArray[Any], NDArray[np.bool_]]:
        """``(y_pred, sets)`` with ``sets[i, c]`` true iff class ``classes_[c]`` is in the set."""
        proba = self.predict_proba(X)
        sets = self._included(1.0 - proba)
        return self.classes_[np.argmax(proba, axis=1)], sets  # type: ignore[index]
