"""Conformal calibration with costly labels: an online rule for when to stop labelling.

Reconstruction of Ilyas, Ko, Tang, Wu, Zhang (2026), "Provably Label-Efficient Conformal
Prediction" (ICML 2026): no paper text or code is public, see the README.

:class:`LabelBudgetCalibrator` is the estimator (``confidence_level``; ``conformalize`` then
``predict_set`` / ``predict_interval``); the split-conformal rank and the LAC/APS scores are
icml26-shared's (:mod:`icml26_shared.conformal`), re-exported; synthetic streams live in
:mod:`costly_cp.data`.

Start with ``LabelBudgetCalibrator(lac_scores, confidence_level=0.9, n_future=...)`` and its
``conformalize(unlabeled, oracle)``: it buys labels from ``oracle`` until more would cost more than
they save, then ``predict_set`` gives the conformal sets.
"""

from importlib.metadata import version as _version

from . import data as data
from ._calibrator import CalibrationResult as CalibrationResult
from ._calibrator import LabelBudgetCalibrator as LabelBudgetCalibrator
from ._calibrator import StreamExhaustedWarning as StreamExhaustedWarning
from ._cost import CostModel as CostModel
from ._cost import StopDecision as StopDecision
from ._cost import fit_cost_model as fit_cost_model
from ._cost import optimal_size as optimal_size
from ._cost import should_stop as should_stop
from ._pac import PACResult as PACResult
from ._pac import pac_label as pac_label
from ._scores import IntervalScores as IntervalScores
from ._scores import SetSizeCurve as SetSizeCurve
from ._scores import aps_scores as aps_scores
from ._scores import conformal_rank as conformal_rank
from ._scores import conformal_threshold as conformal_threshold
from ._scores import lac_scores as lac_scores
from ._scores import pac_rank as pac_rank
from ._session import Trace as Trace

__all__ = [
    "CalibrationResult",
    "CostModel",
    "IntervalScores",
    "LabelBudgetCalibrator",
    "PACResult",
    "SetSizeCurve",
    "StopDecision",
    "StreamExhaustedWarning",
    "Trace",
    "aps_scores",
    "conformal_rank",
    "conformal_threshold",
    "data",
    "fit_cost_model",
    "lac_scores",
    "optimal_size",
    "pac_label",
    "pac_rank",
    "should_stop",
]
__version__ = _version("costly-cp")
