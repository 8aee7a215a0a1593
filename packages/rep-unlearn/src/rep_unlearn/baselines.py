"""Parameter-centric unlearning baselines behind one signature (see :mod:`rep_unlearn._baselines`).

``method(model_factory_or_model, retain, forget, *, val=None, forget_classes=None, seed=0,
progress=False, **hyperparameters) -> nn.Module``; hyperparameters set to ``"auto"`` are tuned
on ``val`` by the same validation-only rule as our β (:data:`GRIDS` lists the grids).
"""

from ._baselines import GRIDS as GRIDS
from ._baselines import finetune as finetune
from ._baselines import neggrad as neggrad
from ._baselines import retrain as retrain
from ._baselines import scrub as scrub

__all__ = ["GRIDS", "finetune", "neggrad", "retrain", "scrub"]
