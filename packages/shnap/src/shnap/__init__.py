"""shnap: interventional audits of 3D image risk models (SHNAP / SNAP, arXiv 2602.02560).

Audit any volume -> risk model by editing objects out of (or into) the volume with an
inpainting editor that never touches voxels outside the edit: exact per-object Shapley values
and pairwise interactions (:func:`shnap`, :func:`gshnap` for any region), insertion sweeps with
a radial regression (:func:`snap_grid`), a synthetic CT-like world with a ground-truth oracle
(:func:`make_phantom`, :class:`OracleRisk`) and a deliberately flawed CNN to audit
(:class:`RiskCNN3D`). The method is reconstructed from the paper (Sobieski, Grzywaczewski et
al., ICML 2026); the paper's code is not released.

Start with :func:`make_phantom` (a synthetic chest CT with nodules) and a risk model
(:class:`OracleRisk`, or :func:`train_risk_cnn`, which loads the shipped weights), then call
:func:`shnap` on the phantom's ``image`` and ``nodule_masks`` with an editor such as
:class:`ShellMeanFill`. Models take ``window(hu)`` images in [-1, 1].
"""

from importlib.metadata import version as _version
from pathlib import Path as _Path

from ._bridge import Bridge as Bridge
from ._bridge import BridgeConfig as BridgeConfig
from ._bridge import TrainConfig as TrainConfig
from ._cnn import CNNConfig as CNNConfig
from ._cnn import RiskCNN3D as RiskCNN3D
from ._cnn import train_risk_cnn as train_risk_cnn
from ._fills import DDPMConfig as DDPMConfig
from ._fills import GlobalMeanFill as GlobalMeanFill
from ._fills import RePaint as RePaint
from ._fills import ShellMeanFill as ShellMeanFill
from ._fills import ZeroFill as ZeroFill
from ._game import Attribution as Attribution
from ._game import Editor as Editor
from ._game import exact_sv_sii as exact_sv_sii
from ._game import gshnap as gshnap
from ._game import lmpi_fit as lmpi_fit
from ._game import shnap as shnap
from ._models import CallableRiskModel as CallableRiskModel
from ._models import RiskModel as RiskModel
from ._models import SubprocessRiskModel as SubprocessRiskModel
from ._oracle import OracleRisk as OracleRisk
from ._realism import RealismReport as RealismReport
from ._realism import realism_report as realism_report
from ._realism import removal_study as removal_study
from ._snap import RadialFit as RadialFit
from ._snap import SnapMap as SnapMap
from ._snap import check_insertion as check_insertion
from ._snap import snap_grid as snap_grid
from ._world import NoduleSpec as NoduleSpec
from ._world import NoduleTemplate as NoduleTemplate
from ._world import Phantom as Phantom
from ._world import find_nodules as find_nodules
from ._world import make_phantom as make_phantom
from ._world import nodule_free_crops as nodule_free_crops
from ._world import nodule_library as nodule_library
from ._world import unwindow as unwindow
from ._world import window as window


def sybil_adapter_path() -> _Path:
    """Path of the Sybil adapter script (run it in a Sybil environment behind
    :class:`SubprocessRiskModel`; see its docstring and the README)."""
    return _Path(__file__).parent / "adapters" / "sybil_adapter.py"


__all__ = [
    "Attribution",
    "Bridge",
    "BridgeConfig",
    "CNNConfig",
    "CallableRiskModel",
    "DDPMConfig",
    "Editor",
    "GlobalMeanFill",
    "NoduleSpec",
    "NoduleTemplate",
    "OracleRisk",
    "Phantom",
    "RadialFit",
    "RePaint",
    "RealismReport",
    "RiskCNN3D",
    "RiskModel",
    "ShellMeanFill",
    "SnapMap",
    "SubprocessRiskModel",
    "TrainConfig",
    "ZeroFill",
    "check_insertion",
    "exact_sv_sii",
    "find_nodules",
    "gshnap",
    "lmpi_fit",
    "make_phantom",
    "nodule_free_crops",
    "nodule_library",
    "realism_report",
    "removal_study",
    "shnap",
    "snap_grid",
    "sybil_adapter_path",
    "train_risk_cnn",
    "unwindow",
    "window",
]
__version__ = _version("shnap")
