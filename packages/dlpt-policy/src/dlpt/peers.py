"""Adapters to the peer libraries (extra ``[peers]``): econml ``DRPolicyForest`` and doubleml
``DoubleMLAPOS`` on DLPT's inputs. See :mod:`dlpt._peers`."""

from ._peers import doubleml_apos as doubleml_apos
from ._peers import doubleml_available as doubleml_available
from ._peers import dr_policy_forest as dr_policy_forest
from ._peers import econml_available as econml_available

__all__ = ["doubleml_apos", "doubleml_available", "dr_policy_forest", "econml_available"]
