"""``python -m dxpp reproduce [--quick] [--set key=value]``: timings vs peers and an
end-to-end portfolio layer (``--show-config`` lists the fields of :class:`Config`).

1. dQP's random dense QP: forward/backward/total time and gradient error of dxpp (penalty,
   paper's refine=0, exact), an OptNet-style full-KKT LU and the reduced-KKT LU reference,
   and the peers qpth, ProxSuite's torch layer, dQP and cvxpylayers (small n) when
   installed.
2. Projection onto the probability simplex (error vs the closed form, time).
3. A sparse banded QP: penalty backward vs sparse reduced-KKT LDLᵀ / LU.
4. Decision-focused learning of a long-only mean–variance portfolio layer (dxpp.torch.QPLayer)
   vs the two-stage (least-squares then optimise) baseline and equal weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.experiment import progress as progress_bar
from icml26_shared.threads import single_thread

from ._bench import Row, dense_case, simplex_case, sparse_case
from ._problems import random_sparse_qp

__all__ = ["EXPERIMENT", "FULL", "QUICK", "Config", "reproduce"]


@dataclass(frozen=True)
class Config:
    """The sizes of one run (``QUICK`` and ``FULL`` are the two presets).

    Attributes:
        sizes: dense random QP sizes ``n``.
        seeds: seeds of the dense problems (one table row = mean over them).
        simplex_sizes: simplex projection sizes (the last one is checked).
        sparse_sizes: sparse banded QP sizes.
        portfolio_train, portfolio_test: training / test days of the portfolio example.
        portfolio_steps, portfolio_batch: Adam steps and days per step.
        portfolio_seed: seed of the synthetic returns and the minibatches.
    """

    sizes: tuple[int, ...] = (50, 100, 200, 500, 1000)
    seeds: tuple[int, ...] = (0, 1, 2)
    simplex_sizes: tuple[int, ...] = (10_000, 100_000)
    sparse_sizes: tuple[int, ...] = (5000, 20000)
    portfolio_train: int = 1024
    portfolio_test: int = 2048
    portfolio_steps: int = 400
    portfolio_batch: int = 128
    portfolio_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("sizes", "seeds", "simplex_sizes", "sparse_sizes"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        for name in ("portfolio_train", "portfolio_test", "portfolio_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 1 <= self.portfolio_batch <= self.portfolio_train:
            raise ValueError(
                f"portfolio_batch must be in [1, portfolio_train], got {self.portfolio_batch}"
            )


FULL = Config()
QUICK = Config(
    sizes=(50, 100, 200, 500),
    seeds=(0, 1),
    sparse_sizes=(5000,),
    portfolio_train=256,
    portfolio_test=512,
    portfolio_steps=80,
    portfolio_batch=64,
)

COLUMNS = ["forward s", "backward s", "total s", "grad rel. error"]


def _table(title: str, runs: list[dict[str, Row]], note: str = "") -> ResultTable:
    table = ResultTable(title, COLUMNS, note=note)
    for method in runs[0]:
        rs = [r[method] for r in runs if method in r]
        label = rs[0].label or method
        if not np.isfinite(rs[0].backward):
            table.add_row(method, {"forward s": rs[0].note}, label=label)
            continue
        cells = {
            "forward s": [r.forward for r in rs],
            "backward s": [r.backward for r in rs],
            "total s": [r.total for r in rs],
            "grad rel. error": [r.error for r in rs],
        }
        table.add_row(method, cells, label=label)
    return table


def _mean(runs: list[dict[str, Row]], key: str, attr: str) -> float:
    vals = [getattr(r[key], attr) for r in runs if key in r]
    return float(np.mean(vals)) if vals else float("nan")


# ----------------------------------------------------------- portfolio learning example
def _portfolio_data(rng: np.random.Generator, T: int, k: int, d: int) -> dict[str, Any]:
    """Synthetic returns with a misspecified (nonlinear) signal: r = B·tanh(2f) + ε."""
    B = rng.normal(scale=0.02, size=(k, d))
    F = rng.normal(size=(k, 3))
    cov = F @ F.T * 2e-4 + np.diag(rng.uniform(1e-4, 4e-4, size=k))
    f = rng.normal(size=(T, d))
    mean = np.tanh(2.0 * f) @ B.T
    r = mean + rng.multivariate_normal(np.zeros(k), cov, size=T)
    return {"f": f, "r": r, "cov": cov}


def _portfolio_example(config: Config, show: bool | None) -> dict[str, Any]:
    import torch

    from .torch import QPLayer

    rng = np.random.default_rng(config.portfolio_seed)
    k, d, gamma = 8, 4, 5.0
    T_train, T_test = config.portfolio_train, config.portfolio_test
    data = _portfolio_data(rng, T_train + T_test, k, d)
    f, r, cov = data["f"], data["r"], data["cov"]
    ftr, rtr, fte, rte = f[:T_train], r[:T_train], f[T_train:], r[T_train:]
    Q = torch.tensor(gamma * cov)
    G = torch.tensor(np.vstack([-np.eye(k), np.eye(k)]))
    h = torch.tensor(np.concatenate([np.zeros(k), 0.5 * np.ones(k)]))
    A, b = torch.ones(1, k, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
    layer = QPLayer(check_psd=False)

    def weights(mu: torch.Tensor) -> torch.Tensor:
        return layer(Q, -mu, G, h, A, b)

    def utility(w: torch.Tensor, ret: torch.Tensor) -> torch.Tensor:
        return (w * ret).sum(-1) - 0.5 * gamma * ((w @ Q / gamma) * w).sum(-1)

    # two-stage: least squares of r on [f, 1], then optimise
    X = np.column_stack([ftr, np.ones(T_train)])
    coef = np.linalg.lstsq(X, rtr, rcond=None)[0]
    W_ls = torch.tensor(coef)
    # decision-focused: the same linear model trained through the QP layer from zero
    # (zero predicted returns = the minimum-variance portfolio)
    W = torch.zeros(d + 1, k, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W], lr=1e-3)
    steps, batch = config.portfolio_steps, config.portfolio_batch
    ftr_t, rtr_t = torch.tensor(np.column_stack([ftr, np.ones(T_train)])), torch.tensor(rtr)
    probe = torch.as_tensor(rng.choice(T_train, size=128, replace=False))
    losses = []
    for step in progress_bar(range(steps), enabled=show, total=steps, desc="portfolio layer"):
        if step % 10 == 0:
            with torch.no_grad():
                losses.append(float(utility(weights(ftr_t[probe] @ W), rtr_t[probe]).mean()))
        idx = torch.as_tensor(rng.choice(T_train, size=batch, replace=False))
        w = weights(ftr_t[idx] @ W)
        loss = -utility(w, rtr_t[idx]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    fte_t, rte_t = torch.tensor(np.column_stack([fte, np.ones(T_test)])), torch.tensor(rte)
    with torch.no_grad():
        out = {}
        for pid, label, w in (
            ("dfl", "decision-focused (dxpp layer)", weights(fte_t @ W.detach())),
            ("two_stage", "two-stage (least squares)", weights(fte_t @ W_ls)),
            ("equal", "equal weight", torch.full((T_test, k), 1.0 / k, dtype=torch.float64)),
        ):
            u = utility(w, rte_t).numpy()
            ret = (w * rte_t).sum(-1).numpy()
            out[pid] = (
                label,
                {
                    "utility": u,
                    "return": ret,
                    "sharpe": float(ret.mean() / ret.std() * np.sqrt(252)),
                },
            )
    return {"test": out, "losses": np.array(losses)}


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the comparison with ``config``'s sizes; see the module docstring."""
    plt = require_matplotlib(package="dxpp")
    result = ExperimentResult(
        "dxpp",
        "penalty-backward QP layer vs KKT layers (qpth, ProxSuite, dQP, "
        "cvxpylayers) and an end-to-end portfolio layer",
    )
    sizes, seeds = list(config.sizes), list(config.seeds)
    bwd_curves: dict[str, list[float]] = {}
    with single_thread():
        from ._problems import random_dense_qp
        from ._solve import solve_qp

        solve_qp(*random_dense_qp(5, 0))  # warm-up: import the solver stack before timing
        all_runs: dict[int, list[dict[str, Row]]] = {}
        for n in progress_bar(sizes, enabled=progress, desc="dense QPs"):
            runs = [dense_case(n, s) for s in seeds]
            all_runs[n] = runs
            result.tables.append(
                _table(
                    f"Random dense QP, n = {n} (mean ± s.e. over "
                    f"{len(seeds)} seeds, single thread)",
                    runs,
                )
            )
            for m, row in runs[0].items():
                label = (row.label or m).split(" (auto")[0]
                bwd_curves.setdefault(label, []).append(_mean(runs, m, "backward"))
        simplex_runs = {
            n: simplex_case(n)
            for n in progress_bar(config.simplex_sizes, enabled=progress, desc="simplex")
        }
        sparse_runs = {n: sparse_case(random_sparse_qp(n, seed=0)) for n in config.sparse_sizes}
    for n, rows in simplex_runs.items():
        result.tables.append(
            _table(f"Simplex projection, n = {n}", [rows], "error vs the closed-form Jacobian")
        )
    for n, rows in sparse_runs.items():
        result.tables.append(
            _table(f"Sparse banded QP, n = {n}", [rows], "error vs the sparse reduced-KKT LU solve")
        )
    port = _portfolio_example(config, progress)
    ptable = ResultTable(
        "Portfolio layer, out-of-sample (daily utility, return; annualised Sharpe)",
        ["mean utility ×1e4", "mean return ×1e4", "Sharpe"],
    )
    for pid, (label, v) in port["test"].items():
        cells = {
            "mean utility ×1e4": list(1e4 * v["utility"]),
            "mean return ×1e4": list(1e4 * v["return"]),
            "Sharpe": v["sharpe"],
        }
        ptable.add_row(pid, cells, label=label)
    result.tables.append(ptable)

    # figures
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for m, ys in bwd_curves.items():
        if np.all(np.isfinite(ys)):
            ax[0].loglog(sizes[: len(ys)], ys, "o-", label=m)
    ax[0].set_xlabel("n")
    ax[0].set_ylabel("backward time (s)")
    ax[0].set_title("Random dense QP: backward pass")
    ax[0].legend(fontsize=7)
    ax[1].plot(10 * np.arange(len(port["losses"])), 1e4 * port["losses"], "o-")
    ax[1].set_xlabel("training step")
    ax[1].set_ylabel("mean utility ×1e4 (128 fixed training days)")
    ax[1].set_title("Decision-focused portfolio layer")
    fig.tight_layout()
    path = Path(out_dir) / "dxpp_reproduce.png"
    save_figure(fig, path, dpi=120)
    result.figures.append(path)

    # acceptance checks: accuracy and learning only. Times are machine- and load-dependent, so
    # they are reported as ratios in a table (and measured lock-step in the benchmarks), never
    # as pass/fail checks.
    worst = max(_mean(all_runs[n], "dxpp_penalty", "error") for n in sizes)
    result.check("grad", worst, "<=", 1e-4, "dense gradients vs exact KKT <= 1e-4 (all n)")
    nmax = sizes[-1]
    runs = all_runs[nmax]
    ratios = ResultTable(
        f"Time ratios at n={nmax} (one thread; < 1: dxpp is faster; reported, not checked)",
        ["dxpp", "peer", "ratio"],
        note="Each ratio is dxpp's mean time over the peer's on the same problems in the same "
        "run; machine load moves them, so they never decide pass/fail.",
    )
    b_pen = _mean(runs, "dxpp_penalty", "backward")
    b_full = _mean(runs, "full_kkt", "backward")
    b_red = _mean(runs, "dxpp_exact", "backward")

    def ratio(rid: str, label: str, ours: float, peer: float) -> None:
        ratios.add_row(rid, {"dxpp": ours, "peer": peer, "ratio": ours / peer}, label=label)

    def measured(key: str) -> bool:
        return key in runs[0] and bool(np.isfinite(runs[0][key].backward))

    ratio("bwd_full", "penalty bwd / full KKT LU bwd (s)", b_pen, b_full)
    ratio("bwd_reduced", "penalty bwd / reduced KKT bwd (s)", b_pen, b_red)
    if measured("qpth"):
        ratio("bwd_qpth", "penalty bwd / qpth bwd (s)", b_pen, _mean(runs, "qpth", "backward"))
    if measured("dxpp_torch"):
        b_t = _mean(runs, "dxpp_torch", "backward")
        b_ft = _mean(runs, "full_kkt_torch", "backward")
        ratio("torch_bwd_full", "dxpp.torch bwd / torch full KKT LU bwd (s)", b_t, b_ft)
    t_pen = _mean(runs, "dxpp_penalty", "total")
    for peer in ("qpth", "proxsuite", "dqp"):
        if measured(peer):
            label = f"forward + backward / {runs[0][peer].label} (s)"
            ratio(f"total_{peer}", label, t_pen, _mean(runs, peer, "total"))
    result.tables.append(ratios)
    n_s = config.simplex_sizes[-1]
    n_label = f"{n_s:.0e}".replace("e+0", "e").replace("e+", "e")  # 100000 -> 1e5
    s_row = simplex_runs[n_s]["dxpp_penalty"]
    result.check(
        "simplex_grad", s_row.error, "<=", 1e-5, f"simplex n={n_label}: grad error <= 1e-5"
    )
    result.notes.append(f"simplex n={n_label}: forward + backward {s_row.total:.2f} s")
    dfl = port["test"]["dfl"][1]["utility"].mean()
    two = port["test"]["two_stage"][1]["utility"].mean()
    eq = port["test"]["equal"][1]["utility"].mean()
    result.check(
        "dfl_vs_equal",
        dfl - eq,
        ">",
        0.0,
        "portfolio: decision-focused test utility > equal weight",
    )
    result.check(
        "dfl_training",
        port["losses"][-1] - port["losses"][0],
        ">",
        0.0,
        "portfolio: training raises the training utility",
    )
    result.notes.append(
        f"portfolio test utility ×1e4: decision-focused {1e4 * dfl:.3f}, "
        f"two-stage {1e4 * two:.3f}, equal weight {1e4 * eq:.3f}"
    )
    result.notes.append(
        f"n={nmax}: backward s penalty {b_pen:.4f}, reduced KKT {b_red:.4f}, full KKT {b_full:.4f}"
    )
    result.headline = (
        f"n={nmax} dense: penalty backward {b_pen * 1e3:.1f} ms vs full-KKT "
        f"{b_full * 1e3:.1f} ms ({b_full / b_pen:.1f}×) and reduced-KKT "
        f"{b_red * 1e3:.1f} ms ({b_red / b_pen:.1f}×), max grad error "
        f"{worst:.1e}; simplex {n_label} in {s_row.total:.2f} s"
    )
    return result


EXPERIMENT = Experiment(
    "dxpp", "penalty-backward QP layer vs KKT-based layers", reproduce, QUICK, FULL
)
