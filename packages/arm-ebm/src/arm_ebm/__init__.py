"""arm-ebm: autoregressive models are energy-based models, exactly.

Exact maps between next-token logits q (ARMs) and step rewards r (EBMs) on enumerable sequence
spaces (a trie) and factored spaces, after Blondel, Sander, Vivier-Ardisson, Liu, Roulet,
"Autoregressive Language Models are Secretly Energy-Based Models: Insights into the Lookahead
Capabilities of Next-Token Prediction" (arXiv 2512.15605, ICML 2026). No public code exists;
this is our implementation, and the KL bound of :func:`kl_bound` is ours.

Start with a space (:class:`SequenceSpace`), then :func:`reward_to_steps` and :func:`ebm_to_arm`
to turn sequence rewards into the exact next-token logits (and :func:`arm_to_ebm` back); sample
with :func:`sample`, distil with :func:`distill`.

>>> import numpy as np, arm_ebm
>>> space = arm_ebm.SequenceSpace(3, 4, eos=2)
>>> R = np.random.default_rng(0).normal(size=space.n_sequences)
>>> q = arm_ebm.ebm_to_arm(arm_ebm.reward_to_steps(R, space), space)
>>> bool(np.allclose(arm_ebm.log_prob_arm(q, space), arm_ebm.log_prob_ebm(R, space)))
True
"""

from importlib.metadata import version as _version

from ._distill import DistilledARM as DistilledARM
from ._distill import distill as distill
from ._distill import fit_mle as fit_mle
from ._distill import prefix_features as prefix_features
from ._kl import kl as kl
from ._kl import kl_bound as kl_bound
from ._kl import visit_probabilities as visit_probabilities
from ._maps import arm_to_ebm as arm_to_ebm
from ._maps import ebm_to_arm as ebm_to_arm
from ._maps import kl_regularized_policy as kl_regularized_policy
from ._maps import log_partition as log_partition
from ._maps import log_policy as log_policy
from ._maps import log_prob_arm as log_prob_arm
from ._maps import log_prob_ebm as log_prob_ebm
from ._maps import policy as policy
from ._maps import reward_to_steps as reward_to_steps
from ._maps import sequence_reward as sequence_reward
from ._maps import soft_values as soft_values
from ._sampling import sample as sample
from ._space import MASKED as MASKED
from ._space import TERMINAL as TERMINAL
from ._space import FactoredSpace as FactoredSpace
from ._space import SequenceSpace as SequenceSpace

__version__ = _version("arm-ebm")

__all__ = [
    "MASKED",
    "TERMINAL",
    "DistilledARM",
    "FactoredSpace",
    "SequenceSpace",
    "__version__",
    "arm_to_ebm",
    "distill",
    "ebm_to_arm",
    "fit_mle",
    "kl",
    "kl_bound",
    "kl_regularized_policy",
    "log_partition",
    "log_policy",
    "log_prob_arm",
    "log_prob_ebm",
    "policy",
    "prefix_features",
    "reward_to_steps",
    "sample",
    "sequence_reward",
    "soft_values",
    "visit_probabilities",
]
