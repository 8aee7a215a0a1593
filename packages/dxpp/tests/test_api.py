"""Public surface: exact __all__, import isolation of the torch/jax extras."""

import subprocess
import sys

import dxpp


def test_all_is_exact():
    assert dxpp.__all__ == [
        "QP",
        "QPError",
        "QPGrad",
        "QPSolution",
        "auto_solver",
        "chain_projection_qp",
        "kkt_vjp",
        "multiperiod_portfolio_qp",
        "penalty_weights",
        "portfolio_qp",
        "qp_vjp",
        "random_dense_qp",
        "random_sparse_qp",
        "simplex_projection_qp",
        "simplex_projection_vjp",
        "solve_qp",
    ]
    for name in dxpp.__all__:
        assert hasattr(dxpp, name)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_import_does_not_pull_torch_or_jax():
    out = _run("import sys, dxpp; dxpp.solve_qp\n"
               "print('torch' in sys.modules, 'jax' in sys.modules)")
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

    assert dtorch.__all__ == ["QPLayer"]
    assert djax.__all__ == ["qp_solve"]
