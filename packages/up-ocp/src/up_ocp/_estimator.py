"""``OnlineConformal``: every online method behind one MAPIE-like object.

>>> import numpy as np
>>> from up_ocp import OnlineConformal
>>> scores = np.abs(np.random.default_rng(0).standard_normal((4, 1000)))  # 4 streams
>>> thresholds = OnlineConformal("up", confidence_level=0.9).run(scores)
>>> thresholds.shape
(4, 1000)
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_choice, check_finite_array, check_in_interval
from icml26_shared.state import (
    check_same_config,
    check_state_keys,
    decode_state,
    dumps_state,
    load_state_file,
    loads_state_text,
    save_state_file,
)

from ._baselines import aci, conformal_pid, decaying_ogd, dtaci, kt_aci, quantile_tracking, sf_ogd
from ._protocol import (
    OnlineAlgorithm,
    as_score_array,
    drive,
    read_streams,
    restore_layout,
)
from ._saocp import saocp
from ._up import up_grid, up_ocp

__all__ = ["METHODS", "OnlineConformal", "make_algorithm"]

#: Registry: name -> factory ``f(alpha, **params) -> OnlineAlgorithm``.
METHODS: dict[str, Callable[..., OnlineAlgorithm]] = {
    "up": up_ocp,
    "up_grid": up_grid,
    "aci": aci,
    "dtaci": dtaci,
    "quantile_tracking": quantile_tracking,
    "pid": conformal_pid,
    "sf_ogd": sf_ogd,
    "saocp": saocp,
    "decaying_ogd": decaying_ogd,
    "kt_aci": kt_aci,
}


def make_algorithm(method: str, alpha: float = 0.1, **params: Any) -> OnlineAlgorithm:
    """Build the ``(init, update)`` pair of a registered method (see :data:`METHODS`)."""
    check_choice(method, "method", METHODS)
    check_alpha(alpha)
    try:
        return METHODS[method](alpha, **params)
    except TypeError as exc:
        if "unexpected keyword" in str(exc):
            raise TypeError(f"method {method!r} got an unknown parameter: {exc}") from None
        raise


def _to_tree(state: Any) -> Any:
    if hasattr(state, "_fields"):
        return {k: _to_tree(getattr(state, k)) for k in state._fields}
    return np.array(state, copy=True)


def _from_tree(template: Any, tree: Any) -> Any:
    if hasattr(template, "_fields"):
        if not isinstance(tree, dict) or set(tree) != set(template._fields):
            raise ValueError(
                f"state must hold the fields {list(template._fields)}, got {tree!r:.80}"
            )
        return template._replace(
            **{k: _from_tree(getattr(template, k), tree[k]) for k in template._fields}
        )
    return np.array(tree, copy=True)


_WHAT = "an up-ocp OnlineConformal state"
_STATE_KEYS = frozenset(
    {"method", "confidence_level", "two_sided", "params", "batch_shape", "states", "y_hat"}
)


def _check_state_keys(state: Any) -> None:
    check_state_keys(state, _STATE_KEYS, _WHAT)


class OnlineConformal:
    """An online conformal predictor: one of :data:`METHODS` behind one API.

    One-sided (default): scores are non-negative, e.g. :math:`s_t = |y_t - \\hat y_t|`, and the
    interval is :math:`[\\hat y_t - q_t, \\hat y_t + q_t]`. Two-sided (``two_sided=True``): two
    copies
    of the method at level α/2 run on the signed residual :math:`r_t = y_t - \\hat y_t` (upper copy)
    and on :math:`-r_t` (lower copy); the interval is
    :math:`[\\hat y_t - q^-_t, \\hat y_t + q^+_t]`.

    Args:
        method: one of :data:`METHODS` (``"up"`` is UP-OCP).
        confidence_level: target long-run coverage ``1 - alpha`` in (0, 1) (MAPIE 1.x's name;
            keyword-only). ``alpha=`` is still accepted for one release, with a
            ``DeprecationWarning``.
        two_sided: run the two-copy variant on signed residuals.
        **params: hyperparameters of the method (e.g. ``eps`` for ``"up"``, ``gamma`` for
            ``"aci"``).

    Example:
        >>> oc = OnlineConformal("up", confidence_level=0.9)
        >>> lower, upper = oc.predict_interval(np.array([0.0]))
        >>> _ = oc.update(np.array([0.3]))
    """

    def __init__(
        self,
        method: str = "up",
        *,
        confidence_level: float | None = None,
        two_sided: bool = False,
        **params: Any,
    ):
        if "alpha" in params:
            alpha = params.pop("alpha")
            if confidence_level is not None:
                raise TypeError("pass confidence_level or the deprecated alpha, not both")
            warnings.warn(
                "OnlineConformal(alpha=...) is deprecated and will be removed in up-ocp 0.2: "
                "pass confidence_level=1 - alpha",
                DeprecationWarning,
                stacklevel=2,
            )
            self.alpha = check_alpha(alpha)
            self.confidence_level = 1.0 - self.alpha
        else:
            cl = 0.9 if confidence_level is None else confidence_level
            if isinstance(cl, str | bytes | bool):
                raise TypeError(f"confidence_level must be a number in (0, 1), got {cl!r}")
            self.confidence_level = check_in_interval(cl, "confidence_level", 0, 1)
            # the decimal complement: confidence_level=0.9 runs at exactly alpha=0.1, not at
            # 1 - 0.9 = 0.09999999999999998 (so it matches the functional core bit for bit)
            self.alpha = float(Decimal(1) - Decimal(repr(self.confidence_level)))
        self.method = method
        if not isinstance(two_sided, bool | np.bool_):
            raise TypeError(f"two_sided must be True or False, got {two_sided!r}")
        self.two_sided = bool(two_sided)
        self.params = dict(params)
        level = self.alpha / 2 if self.two_sided else self.alpha
        self._algo = make_algorithm(method, level, **params)
        self._states: list[Any] | None = None
        self._batch_shape: tuple[int, ...] | None = None
        self._y_hat: NDArray[np.float64] | None = None

    # ------------------------------------------------------------------ state

    @property
    def n_copies(self) -> int:
        return 2 if self.two_sided else 1

    def reset(self, batch_shape: int | tuple[int, ...] = ()) -> OnlineConformal:
        """Start afresh for streams of ``batch_shape`` (``()`` = one stream)."""
        shape = (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape)
        self._states = [self._algo.init(shape) for _ in range(self.n_copies)]
        self._batch_shape = shape
        self._y_hat = None
        return self

    def _ensure(self, batch_shape: tuple[int, ...]) -> None:
        if self._states is None:
            self.reset(batch_shape)
        elif self._batch_shape != batch_shape:
            raise ValueError(
                f"streams must have the batch shape {self._batch_shape} of the running state, "
                f"got {batch_shape} (call reset() to start afresh)"
            )

    @property
    def threshold(self) -> NDArray[np.float64]:
        """The threshold(s) announced for the next score: ``q``, or ``(q_lower, q_upper)``
        stacked."""
        if self._states is None:
            raise ValueError(
                "threshold needs a state: call reset(batch_shape), run() or "
                "predict_interval() first"
            )
        qs = [np.asarray(st.q) for st in self._states]
        return qs[0].copy() if not self.two_sided else np.stack(qs)

    # ------------------------------------------------------------------ streams

    def run(self, scores: ArrayLike, *, progress: bool | None = None) -> NDArray[np.float64]:
        """Run the method over whole streams (time on the last axis), continuing from the state.

        Args:
            scores: ``(*batch, T)`` scores; one-sided: non-negative scores (a negative one
                raises: pass signed residuals with ``two_sided=True``); two-sided: signed
                residuals. ``+inf`` is a legal score (a miss); NaN raises naming its index. A
                pandas ``DataFrame`` is read with its index as time, one stream per column. An
                array with more streams than rounds and fewer than 30 rounds warns (time is the
                last axis: did you mean ``scores.T``?).
            progress: a bar over the rounds; ``None`` (default) shows it for streams of 1,000
                rounds or more (a bar on a terminal, a start and an end line on stderr when
                piped), ``False`` never.

        Returns:
            One-sided: thresholds of the same shape, ``thresholds[..., t]`` announced before
            ``scores[..., t]``. Two-sided: shape ``(2, *batch, T)``, ``[0]`` the lower offset and
            ``[1]`` the upper one. For a DataFrame: its layout ``(T, n_columns)`` (two-sided
            ``(2, T, n_columns)``).
        """
        s, from_frame = read_streams(scores)
        self._check_sign(s, "scores")
        self._ensure(s.shape[:-1])
        assert self._states is not None
        streams = [-s, s] if self.two_sided else [s]
        outs = []
        show = False if progress is None and s.shape[-1] < 1000 else progress
        sides = ["lower", "upper"] if self.two_sided else [""]
        for i, stream in enumerate(streams):
            desc = f"OnlineConformal({self.method!r}) {sides[i]} {s.shape[-1]} rounds"
            q, self._states[i] = drive(
                self._algo, stream, self._states[i], progress=show, desc=desc.replace("  ", " ")
            )
            outs.append(q)
        return restore_layout(outs[0] if not self.two_sided else np.stack(outs), from_frame)

    def _check_sign(self, s: NDArray[np.float64], name: str) -> None:
        if not self.two_sided and (s < 0).any():
            idx = tuple(int(i) for i in np.argwhere(s < 0)[0])
            raise ValueError(
                f"{name} must be non-negative for a one-sided predictor (e.g. |y - y_hat|), got "
                f"{s[idx] if idx else float(s)} at index {idx if idx else 0}: pass signed "
                "residuals to OnlineConformal(..., two_sided=True)"
            )

    def update_score(self, score: ArrayLike) -> OnlineConformal:
        """Reveal one score per stream (signed residual when two-sided) and step the state.

        One-sided scores must be non-negative; NaN and text raise."""
        s = as_score_array(score)
        if np.isnan(s).any():
            raise ValueError(f"score must not be NaN, got {score!r}")
        self._check_sign(s, "score")
        self._ensure(s.shape)
        assert self._states is not None
        streams = [-s, s] if self.two_sided else [s]
        for i, stream in enumerate(streams):
            _, self._states[i] = self._algo.update(self._states[i], stream)
        return self

    def predict_interval(self, y_hat: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Interval ``(lower, upper)`` around the point forecast(s) ``y_hat`` for this round."""
        y = check_finite_array(y_hat, "y_hat")
        self._ensure(y.shape)
        q = self.threshold
        self._y_hat = y.copy()
        if self.two_sided:
            return y - q[0], y + q[1]
        return y - q, y + q

    def update(self, y_true: ArrayLike) -> OnlineConformal:
        """Reveal the truth for the last :meth:`predict_interval` and step the state."""
        if self._y_hat is None:
            raise ValueError("update(y_true) needs a previous predict_interval(y_hat) call")
        y = check_finite_array(y_true, "y_true")
        if y.shape != self._y_hat.shape:
            raise ValueError(
                f"y_true must have the shape {self._y_hat.shape} of y_hat, got {y.shape}"
            )
        r = y - self._y_hat
        self._y_hat = None
        return self.update_score(r if self.two_sided else np.abs(r))

    # ------------------------------------------------------------------ checkpoints

    def _config(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "confidence_level": self.confidence_level,
            "two_sided": self.two_sided,
            **{f"params.{k}": v for k, v in self.params.items()},
        }

    def state_dict(self) -> dict[str, Any]:
        """A deep copy of everything needed to resume bit-exactly (numpy arrays and plain types);
        :meth:`to_json` writes it as strict JSON."""
        return {
            "method": self.method,
            "confidence_level": self.confidence_level,
            "two_sided": self.two_sided,
            "params": copy.deepcopy(self.params),
            "batch_shape": None if self._batch_shape is None else list(self._batch_shape),
            "states": None if self._states is None else [_to_tree(st) for st in self._states],
            "y_hat": None if self._y_hat is None else self._y_hat.copy(),
        }

    def to_json(self) -> str:
        """The :meth:`state_dict` as strict JSON (``allow_nan=False``; ``±inf`` encoded)."""
        return dumps_state(self.state_dict())

    @classmethod
    def from_json(cls, text: str) -> OnlineConformal:
        """Build a predictor from :meth:`to_json` output and continue where it stopped.

        Raises:
            StateFileError: (a ``ValueError``) when the text is truncated or not an
                ``OnlineConformal`` state.
        """
        return cls.from_state_dict(loads_state_text(text, _WHAT))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_json` to ``path`` (read it back with :meth:`load`)."""
        return save_state_file(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> OnlineConformal:
        """Build a predictor from a file written by :meth:`save`.

        Raises:
            StateFileError: (a ``ValueError``) naming the file when it is truncated, not JSON or
                the state of something else.
        """
        return load_state_file(path, _WHAT, cls.from_state_dict)

    def load_state_dict(self, state: dict[str, Any]) -> OnlineConformal:
        """Restore a :meth:`state_dict`.

        Raises:
            ValueError: naming the field, when the state was saved with another method, level,
                sidedness or hyperparameter (a state of ``gamma=0.5`` never runs on under
                ``gamma=0.001``).
        """
        state = decode_state(state)
        _check_state_keys(state)
        saved = {
            "method": state.get("method"),
            "confidence_level": state.get("confidence_level"),
            "two_sided": state.get("two_sided"),
            **{f"params.{k}": v for k, v in (state.get("params") or {}).items()},
        }
        check_same_config(saved, self._config(), owner="OnlineConformal")
        if state["states"] is None:
            self._states, self._batch_shape = None, None
        else:
            shape = tuple(state["batch_shape"])
            template = self._algo.init(shape)
            self._states = [_from_tree(template, tree) for tree in state["states"]]
            self._batch_shape = shape
        self._y_hat = None if state["y_hat"] is None else np.array(state["y_hat"], copy=True)
        return self

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> OnlineConformal:
        """Build a predictor from a :meth:`state_dict` alone."""
        state = decode_state(state)
        _check_state_keys(state)
        obj = cls(
            state["method"],
            confidence_level=state["confidence_level"],
            two_sided=state["two_sided"],
            **state["params"],
        )
        return obj.load_state_dict(state)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params.items())
        sided = ", two_sided=True" if self.two_sided else ""
        return (
            f"OnlineConformal({self.method!r}, confidence_level={self.confidence_level}"
            f"{sided}{extra})"
        )
