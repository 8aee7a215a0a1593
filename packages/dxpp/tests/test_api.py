"""Public surface: exact __all__, import isolation of the torch/jax extras."""

import subprocess
import sys

import pytest

import dxpp


def test_all_is_exact():
    assert dxpp.__all__ == [
        "QP", "QPError", "QPGrad", "QPSolution", "auto_solver", "chain_projection_qp", "kkt_vjp",
        "multiperiod_portfolio_qp", "penalty_weights", "portfolio_qp", "qp_vjp", "random_dense_qp",
        "random_sparse_qp", "simplex_projection_qp", "simplex_projection_vjp", "solve_qp",
    ]  # fmt: skip
    for name in dxpp.__all__:
        assert hasattr(dxpp, name)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_does_not_pull_torch_or_jax():
    out = _run(
        "import sys, dxpp; dxpp.solve_qp\nprint('torch' in sys.modules, 'jax' in sys.modules)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False False"


def test_missing_extras_name_the_extra():
    code = (
        "import sys, dxpp\n"
        "for mod in ('torch', 'jax'):\n"
        "    saved = sys.modules.get(mod)\n"
        "    sys.modules[mod] = None\n"
        "    try:\n"
        "        __import__('dxpp.' + mod)\n"
        "        print('imported')\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
        "    sys.modules[mod] = saved\n"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert "pip install dxpp[torch]" in lines[0]
    assert "pip install dxpp[jax]" in lines[1]


def test_torch_and_jax_submodules_export():
    from dxpp import jax as djax
    from dxpp import torch as dtorch

    assert dtorch.__all__ == djax.__all__ == ["QPFunction", "QPLayer", "qp_solve"]
    for name in dtorch.__all__:
        assert hasattr(dtorch, name) and hasattr(djax, name)


def test_version_comes_from_the_installed_metadata():
    import importlib.metadata

    assert dxpp.__version__ == importlib.metadata.version("dxpp")


def test_no_import_cycle_between_forward_and_backward():
    import ast
    import pathlib

    src = pathlib.Path(dxpp.__file__).parent

    def imports(name):
        tree = ast.parse((src / f"{name}.py").read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}

    assert "_backward" not in imports("_solve") and "_solve" not in imports("_backward")


def _doctest_modules():
    import pkgutil

    names = ["dxpp"] + [
        f"dxpp.{m.name}" for m in pkgutil.iter_modules(dxpp.__path__) if m.name not in ("__main__",)
    ]
    return names


@pytest.mark.parametrize("name", _doctest_modules())
def test_docstring_examples_run(name):
    import doctest
    import importlib

    if name in ("dxpp.torch", "dxpp._torch_backward"):
        pytest.importorskip("torch")
    if name in ("dxpp.jax", "dxpp._jax_backward"):
        pytest.importorskip("jax")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_torch_adapter_does_not_import_jax_through_qpsolvers():
    """The 2.8-3.0 s first call of 0.1 was qpsolvers importing JAX for a backend (jaxopt)
    that is not installed; dxpp.torch (which imports qpsolvers) must not pull JAX in."""
    import importlib.util

    pytest.importorskip("torch")
    if importlib.util.find_spec("jaxopt") is not None:
        pytest.skip("jaxopt is installed: qpsolvers then imports JAX legitimately")
    out = _run("import sys, dxpp.torch\nprint('qpsolvers' in sys.modules, 'jax' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True False"
