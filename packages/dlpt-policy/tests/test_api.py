import doctest
import importlib
import warnings

import pytest

import dlpt
import dlpt.baselines
import dlpt.data
import dlpt.peers


def test_public_api_is_exact():
    assert dlpt.__all__ == ["DLPT", "DesignReport", "Policy", "ValueEstimate", "design_report"]
    assert dlpt.data.__all__ == ["RCTData", "covariate_probs", "simulate_rct"]
    assert dlpt.baselines.__all__ == [
        "DRBestArmPolicy",
        "best_single_arm",
        "plug_in_policy",
        "plug_in_value",
    ]
    assert dlpt.peers.__all__ == [
        "doubleml_apos",
        "doubleml_available",
        "dr_policy_forest",
        "econml_available",
    ]
    for mod in (dlpt, dlpt.data, dlpt.baselines, dlpt.peers):
        for name in mod.__all__:
            assert hasattr(mod, name)


def test_version_comes_from_metadata():
    import importlib.metadata

    assert dlpt.__version__ == importlib.metadata.version("dlpt-policy")


@pytest.mark.parametrize(
    "module",
    ["dlpt._basis", "dlpt._data", "dlpt._dlpt", "dlpt._baselines", "dlpt._mlp", "dlpt._peers"],
)
def test_docstring_examples_run(module):
    mod = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_binding_names_from_the_issue(small_fit):
    data, model = small_fit
    est = model.value(lambda X: data.t_star(X))
    assert isinstance(est, dlpt.ValueEstimate)
    assert est.ci[0] < est.v < est.ci[1] and est.se > 0
    assert model.value(1.1).psi.shape == (data.X.shape[0],)
