"""``python -m up_ocp reproduce [--quick]``: UP-OCP against the online baseline zoo.

Tables (rows = methods, cells = mean ± Monte Carlo s.e. over seeds):

1. the UP identity (KT closed form vs the exact Cover mixture by Beta functions);
2. the deterministic coverage bound on adversarial, Cauchy and ×10⁶ streams (T = 10⁴);
3. the change-point stream (σ 1 → 5 → 0.5), α = 0.1, 10 seeds, T = 5,000 and 20,000, with ACI at
   its best step in hindsight and at the median step of the grid 0.001…0.2;
4. scale-freeness: scores ×1, ×10³, ×10⁶ with every constant fixed;
5. the other synthetic streams (stationary, sinusoid, regime mixture, Cauchy);
6. real daily returns (S&P 500, NASDAQ, shipped by ``arch``) with a trailing-mean forecaster;
7. real series (S&P 500, NASDAQ, VIX, WTI, Fama–French market; quick: S&P 500 and VIX) against
   Salesforce ``online-conformal``'s FACI, SAOCP and SF-OGD on identical scores (skipped with a
   note when that package is absent), coverage and width ± batch-means s.e.

Width = mean threshold :math:`q_t` (the interval is :math:`\\hat y \\pm q_t`, so the interval width
is twice it); an empty set (:math:`q_t < 0`) counts 0 and a full set (:math:`q_t = +\\infty`) counts
the largest score seen before t (0 before any score); ``inf %`` reports how often that happened.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.datasets import score_stream
from icml26_shared.experiment import (
    Estimate,
    Experiment,
    ExperimentResult,
    ResultTable,
    progress,
    require_matplotlib,
    save_figure,
)
from icml26_shared.metrics import rolling_miscoverage

from ._compare import compare_methods, online_conformal_available
from ._data import RETURN_SERIES, forecast_residuals, load_returns
from ._estimator import make_algorithm
from ._protocol import run_algorithm
from ._up import cover_fraction, cover_log_wealth, coverage_bound, kt_fraction

ALPHA = 0.1
ACI_GRID = np.geomspace(0.001, 0.2, 9)  # median = 0.0141
#: The zoo with the constants every method uses in the tables (none tuned per stream).
ZOO: dict[str, tuple[str, dict[str, Any]]] = {
    "UP-OCP (ours, ε=1)": ("up", {"eps": 1.0}),
    "KT-betting ACI (ε=1)": ("kt_aci", {"eps": 1.0}),
    "DtACI": ("dtaci", {}),
    "quantile tracking (η=0.1)": ("quantile_tracking", {"lr": 0.1}),
    "conformal PID": ("pid", {}),
    "SF-OGD": ("sf_ogd", {}),
    "SAOCP": ("saocp", {}),
    "decaying-step OGD": ("decaying_ogd", {}),
}


def _widths(scores: NDArray, q: NDArray) -> NDArray:
    """Per-step width with the conventions of the module docstring."""
    finite = np.where(np.isfinite(scores), scores, 0.0)
    prev_max = np.concatenate(
        [np.zeros((*scores.shape[:-1], 1)), np.maximum.accumulate(finite, -1)[..., :-1]], -1
    )
    prev_max = np.broadcast_to(prev_max, q.shape)
    return np.where(np.isposinf(q), prev_max, np.maximum(np.where(np.isneginf(q), 0.0, q), 0.0))


def summarize(scores: NDArray, q: NDArray) -> dict[str, NDArray]:
    """Per-stream miss rate, mean width and fraction of infinite thresholds (time = last axis)."""
    return {
        "miss": (scores > q).mean(-1),
        "width": _widths(scores, q).mean(-1),
        "inf": np.isposinf(q).mean(-1),
    }


def run_method(method: str, scores: NDArray, alpha: float = ALPHA, **params: Any) -> NDArray:
    """Thresholds of one registered method over ``scores`` ``(*batch, T)``."""
    q, _ = run_algorithm(make_algorithm(method, alpha, **params), scores)
    return q


def aci_grid(scores: NDArray, alpha: float = ALPHA) -> dict[str, NDArray]:
    """ACI over :data:`ACI_GRID` on the same streams; summaries with a leading grid axis."""
    gam = ACI_GRID.reshape(-1, *([1] * (scores.ndim - 1)))
    q = run_method("aci", scores, alpha, gamma=gam)
    return summarize(scores, q)


def pick_aci(grid: dict[str, NDArray], alpha: float = ALPHA, tol: float = 0.01) -> dict[str, Any]:
    """ACI at its best γ in hindsight (smallest mean width among γ with |mean miss − α| ≤ tol,
    else the γ with the best coverage) and at the median γ of the grid."""
    miss = grid["miss"].reshape(len(ACI_GRID), -1).mean(1)
    width = grid["width"].reshape(len(ACI_GRID), -1).mean(1)
    ok = np.abs(miss - alpha) <= tol
    best = (
        int(np.argmin(np.where(ok, width, np.inf)))
        if ok.any()
        else int(np.argmin(np.abs(miss - alpha)))
    )
    med = len(ACI_GRID) // 2
    pick = {k: {"best": v[best], "median": v[med]} for k, v in grid.items()}
    return {"best": best, "median": med, **pick}


def _row(table: ResultTable, name: str, summ: dict[str, NDArray], prefix: str = "") -> None:
    table.add_row(
        name,
        **{
            f"{prefix}miss": list(summ["miss"].ravel()),
            f"{prefix}width": list(summ["width"].ravel()),
        },
    )


def _identity_table(checks: dict[str, bool]) -> ResultTable:
    s = score_stream("change_point", 10_000, n_streams=4, seed=7).scores
    algo = make_algorithm("up", ALPHA, eps=1.0)
    q, _ = run_algorithm(algo, s)
    err = (s > q).astype(float)
    m_prev = np.concatenate([np.zeros((4, 1)), np.cumsum(err, -1)[:, :-1]], -1)
    t_prev = np.arange(s.shape[-1])
    log_w = cover_log_wealth(m_prev, t_prev, ALPHA, 1.0)
    b_cover = cover_fraction(m_prev, t_prev)
    q_cover = (b_cover - ALPHA) / (ALPHA * (1 - ALPHA)) * np.exp(log_w)
    db = float(np.max(np.abs(b_cover - kt_fraction(m_prev, t_prev))))
    # the threshold is a bet β·W: its error is measured on the wealth scale (β crosses 0)
    dq = float(np.max(np.abs(q - q_cover) / np.exp(log_w)))
    st = algo.init((4,))
    for t in range(s.shape[-1]):
        _, st = algo.update(st, s[:, t])
    lw_gap = float(np.max(np.abs(st.log_wealth - cover_log_wealth(st.misses, st.t, ALPHA, 1.0))))
    cols = ["max |Δ b_t|", "max |Δ q_t| / W_t-1", "max |Δ log W_T|", "T"]
    table = ResultTable(
        "1. UP identity: KT closed form vs exact Cover mixture (Beta integrals)", cols
    )
    table.add_row("change-point, 4 streams", **dict(zip(cols, [db, dq, lw_gap, 10_000])))
    rel = max(db, dq)
    checks["1 UP identity to 1e-9"] = bool(rel <= 1e-9 and lw_gap <= 1e-9)
    return table


def _bound_table(checks: dict[str, bool]) -> ResultTable:
    table = ResultTable(
        "2. Deterministic bound t·KL(M_t/t‖α) ≤ log(1+max(α,1-α)Σ|q|/ε)+½log t+log 2, "
        "every t ≤ 10⁴",
        ["min slack", "holds every t", "final miss", "|miss-α|"],
    )
    cases = [
        ("always_miss", 1.0),
        ("always_miss", np.inf),
        ("always_cover", 1.0),
        ("alternating", 1.0),
        ("cauchy", 1.0),
        ("stationary", 1e6),
        ("change_point", 1e6),
    ]
    ok = True
    for kind, scale in cases:
        s = score_stream(kind, 10_000, n_streams=3, scale=min(scale, 1e6), seed=11).scores
        if np.isinf(scale):
            s = np.full_like(s, np.inf)  # +inf scores: a miss until the threshold overflows to +inf
        q = run_method("up", s, eps=1.0)
        lhs, rhs = coverage_bound(s, q, ALPHA, 1.0)
        holds = bool((lhs <= rhs + 1e-9).all())
        ok &= holds
        name = kind + {1.0: "", 1e6: " ×1e6", np.inf: " (+inf scores)"}[scale]
        miss = (s > q).mean(-1)
        table.add_row(
            name,
            **{
                "min slack": float((rhs - lhs).min()),
                "holds every t": holds,
                "final miss": list(miss),
                "|miss-α|": float(np.abs(miss - ALPHA).max()),
            },
        )
    checks["2 bound holds at every t <= 1e4"] = ok
    return table


def _change_point(
    quick: bool, show: bool, checks: dict[str, bool], notes: list[str]
) -> tuple[ResultTable, dict]:
    lengths = (5_000, 20_000)
    seeds = 10
    cols = [f"{c} T={T}" for T in lengths for c in ("miss", "width")] + ["inf %"]
    table = ResultTable(f"3. Change-point stream σ 1→5→0.5, α={ALPHA}, {seeds} seeds", cols)
    res: dict[str, dict[int, dict[str, NDArray]]] = {}
    keep: dict[str, Any] = {}
    for T in progress(lengths, enabled=show, desc="change-point"):
        s = score_stream("change_point", T, n_streams=seeds, seed=2026).scores
        for name, (method, params) in ZOO.items():
            q = run_method(method, s, **params)
            res.setdefault(name, {})[T] = summarize(s, q)
            if T == lengths[-1]:
                keep[name] = (s[0], q[0])
        pick = pick_aci(aci_grid(s))
        for which in ("best", "median"):
            name = f"ACI ({which} γ)"
            res.setdefault(name, {})[T] = {k: pick[k][which] for k in ("miss", "width", "inf")}
            notes.append(f"change-point T={T}: ACI {which} γ = {ACI_GRID[pick[which]]:.4g}")
        g_best = float(ACI_GRID[pick["best"]])
        if T == lengths[-1]:
            keep[f"ACI (best γ={g_best:.3g})"] = (s[0], run_method("aci", s[0], gamma=g_best))
        # coverage-matched: ACI (best γ) targeting UP-OCP's own realised miss rate, so that the
        # widths are compared at equal coverage (UP-OCP's miss exceeds α by O(√(log T / T)))
        a_up = float(res["UP-OCP (ours, ε=1)"][T]["miss"].mean())
        matched = summarize(s, run_method("aci", s, a_up, gamma=g_best))
        res.setdefault("ACI (best γ, α = UP-OCP's realised miss)", {})[T] = matched
    for name, by_T in res.items():
        cells: dict[str, Any] = {}
        for T in lengths:
            cells[f"miss T={T}"] = list(by_T[T]["miss"])
            cells[f"width T={T}"] = list(by_T[T]["width"])
        cells["inf %"] = 100 * float(by_T[lengths[-1]]["inf"].mean())
        table.add_row(name, **cells)
    up = res["UP-OCP (ours, ε=1)"]
    gap5 = abs(float(up[5_000]["miss"].mean()) - ALPHA)
    gap20 = abs(float(up[20_000]["miss"].mean()) - ALPHA)
    checks["3a |miss-α| <= 0.02 at T=5000 (mean of 10 seeds)"] = gap5 <= 0.02
    checks["3b |miss-α| <= 0.01 at T=20000 (mean of 10 seeds)"] = gap20 <= 0.01
    for T in lengths:
        w_up = float(up[T]["width"].mean())
        w_best = float(res["ACI (best γ)"][T]["width"].mean())
        w_med = float(res["ACI (median γ)"][T]["width"].mean())
        checks[f"3c width <= 1.10 x best-γ ACI, T={T}"] = w_up <= 1.10 * w_best
        checks[f"3d width <= median-γ ACI, T={T}"] = w_up <= w_med
        notes.append(
            f"change-point T={T}: width UP/best-γ ACI = {w_up / w_best:.3f}, "
            f"UP/median-γ ACI = {w_up / w_med:.3f}"
        )
        w_match = float(res["ACI (best γ, α = UP-OCP's realised miss)"][T]["width"].mean())
        notes.append(
            f"change-point T={T}: at equal coverage, width UP/ACI(best γ) = {w_up / w_match:.3f}; "
            f"per-seed max |miss-α| of UP-OCP = {np.abs(up[T]['miss'] - ALPHA).max():.4f}"
        )
    keep["_summary"] = {"gap5": gap5, "gap20": gap20, "res": res}
    return table, keep


def _scale_table(quick: bool, show: bool, checks: dict[str, bool]) -> ResultTable:
    scales = (1.0, 1e3, 1e6)
    T, seeds = 5_000, 10
    cols = ["miss ×1", "miss ×1e3", "miss ×1e6", "|Δ miss| ×1e3"]
    table = ResultTable(
        f"4. Scale-free: stationary |N(0,1)| scores × c, constants fixed, T={T}", cols
    )
    base = score_stream("stationary", T, n_streams=seeds, seed=3).scores
    gaps = {}
    for name, (method, params) in progress(ZOO.items(), enabled=show, desc="scales"):
        with warnings.catch_warnings():
            # fixed-step quantile tracking warns at ×1e3 and ×1e6: that is what this table shows
            warnings.filterwarnings("ignore", "quantile_tracking: lr=", UserWarning)
            miss = [(base * c > run_method(method, base * c, **params)).mean(-1) for c in scales]
        gaps[name] = float(abs(miss[1].mean() - miss[0].mean()))
        table.add_row(
            name,
            **{
                "miss ×1": list(miss[0]),
                "miss ×1e3": list(miss[1]),
                "miss ×1e6": list(miss[2]),
                "|Δ miss| ×1e3": gaps[name],
            },
        )
    checks["4a UP-OCP |Δ miss| <= 0.01 under ×1e3"] = gaps["UP-OCP (ours, ε=1)"] <= 0.01
    checks["4b fixed-η quantile tracking |Δ miss| > 0.05 under ×1e3"] = (
        gaps["quantile tracking (η=0.1)"] > 0.05
    )
    return table


def _other_streams(quick: bool, show: bool) -> ResultTable:
    kinds = ("stationary", "sinusoid", "mixture", "cauchy")
    T, seeds = (5_000, 5) if quick else (20_000, 10)
    cols = [f"{k} {c}" for k in kinds for c in ("miss", "width")]
    table = ResultTable(
        f"5. Other synthetic streams, T={T}, {seeds} seeds (ACI best γ per stream)", cols
    )
    rows: dict[str, dict[str, Any]] = {}
    for kind in progress(kinds, enabled=show, desc="streams"):
        s = score_stream(kind, T, n_streams=seeds, seed=5).scores
        for name, (method, params) in ZOO.items():
            summ = summarize(s, run_method(method, s, **params))
            rows.setdefault(name, {}).update(
                {f"{kind} miss": list(summ["miss"]), f"{kind} width": list(summ["width"])}
            )
        pick = pick_aci(aci_grid(s))
        rows.setdefault("ACI (best γ)", {}).update(
            {
                f"{kind} miss": list(pick["miss"]["best"]),
                f"{kind} width": list(pick["width"]["best"]),
            }
        )
    for name, cells in rows.items():
        table.add_row(name, **cells)
    return table


def _worst_window_miss(s: NDArray, q: NDArray, window: int = 250) -> float:
    """Largest miss rate over any ``window`` consecutive steps (local coverage)."""
    return float(rolling_miscoverage((s > q).astype(float), window)[..., window - 1 :].max())


def _real_table(quick: bool, checks: dict[str, bool], notes: list[str]) -> tuple[ResultTable, dict]:
    series = ("sp500",) if quick else ("sp500", "nasdaq")
    stats = ("miss", "width", "worst-250d miss")
    cols = [f"{n} {c}" for n in series for c in stats]
    table = ResultTable(
        "6. Real daily log returns (%), trailing-mean forecaster (20 days), score |r − r̂|; "
        "worst-250d = largest miss rate over any 250 consecutive days",
        cols,
    )
    rows: dict[str, dict[str, Any]] = {}
    keep: dict[str, Any] = {}
    for name_s in series:
        _, resid = forecast_residuals(load_returns(name_s), 20)
        s = np.abs(resid)
        runs: dict[str, NDArray] = {}
        for name, (method, params) in ZOO.items():
            runs[name] = run_method(method, s, **params)
        pick = pick_aci(aci_grid(s[None]), tol=0.01)
        g_best = float(ACI_GRID[pick["best"]])
        runs["ACI (best γ)"] = run_method("aci", s, gamma=g_best)
        runs["ACI (median γ)"] = run_method("aci", s, gamma=float(ACI_GRID[pick["median"]]))
        a_up = float((s > runs["UP-OCP (ours, ε=1)"]).mean())
        runs["ACI (best γ, α = UP-OCP's realised miss)"] = run_method("aci", s, a_up, gamma=g_best)
        for name, q in runs.items():
            summ = summarize(s, q)
            rows.setdefault(name, {}).update(
                {
                    f"{name_s} miss": float(summ["miss"]),
                    f"{name_s} width": float(summ["width"]),
                    f"{name_s} worst-250d miss": _worst_window_miss(s, q),
                }
            )
            if name_s == "sp500" and "α =" not in name:
                label = f"ACI (best γ={g_best:.3g})" if name == "ACI (best γ)" else name
                if name != "ACI (median γ)":
                    keep[label] = (s, q)
        up = rows["UP-OCP (ours, ε=1)"]
        up_miss, up_w = up[f"{name_s} miss"], up[f"{name_s} width"]
        best_w = rows["ACI (best γ)"][f"{name_s} width"]
        matched_w = rows["ACI (best γ, α = UP-OCP's realised miss)"][f"{name_s} width"]
        checks[f"5a {name_s}: |coverage - 0.9| <= 0.03"] = abs(up_miss - ALPHA) <= 0.03
        checks[f"5b {name_s}: width <= 1.10 x best-γ ACI"] = up_w <= 1.10 * best_w
        notes.append(f"{name_s}: at equal coverage, width UP/ACI(best γ) = {up_w / matched_w:.3f}")
        notes.append(
            f"{name_s} (T={s.size}): UP miss {up_miss:.4f}, width ratio vs best-γ ACI "
            f"{up_w / best_w:.3f} (best γ = {g_best:.4g})"
        )
    for name, cells in rows.items():
        table.add_row(name, **cells)
    return table, keep


def _peer_table(quick: bool, show: bool, checks: dict[str, bool], notes: list[str]) -> ResultTable:
    """Issue 26: ours and Salesforce ``online-conformal`` on the same real score streams."""
    series = ("sp500", "vix") if quick else RETURN_SERIES
    cols = [f"{n} {c}" for n in series for c in ("coverage", "width")]
    table = ResultTable(
        "7. Real series vs Salesforce online-conformal 1.0.2 on identical scores |r − r̂| "
        "(trailing 20-step mean), α = 0.1, first 50 scores = calibration/warm-up; "
        "mean ± batch-means s.e. (20 blocks); width = 2q over finite thresholds",
        cols,
    )
    peers = online_conformal_available()
    if not peers:
        notes.append(
            "table 7: Salesforce `online-conformal` is not installed, so its FACI/SAOCP/SF-OGD "
            "rows are skipped (`pip install --no-deps online-conformal salesforce-merlion dill`)"
        )
    rows: dict[str, dict[str, Any]] = {}
    gaps, ratios, inf_width = [], [], False
    for name in progress(series, enabled=show, desc="real series vs online-conformal"):
        _, resid = forecast_residuals(load_returns(name), 20)
        res = compare_methods(np.abs(resid), ALPHA, 50, peers=peers)
        for row, r in res.items():
            inf_width |= not np.isfinite(r["width"])
            rows.setdefault(row, {}).update(
                {
                    f"{name} coverage": Estimate(r["coverage"], r["coverage_se"]),
                    f"{name} width": Estimate(r["width"], r["width_se"]),
                }
            )
        up = res["UP-OCP (ours, ε=1)"]
        ref = "FACI (online-conformal)" if peers else "DtACI/FACI (ours)"
        gaps.append(abs(up["coverage"] - (1 - ALPHA)))
        matched = res[f"{ref} at UP-OCP's realised miss"]
        ratios.append(up["width"] / matched["width"])
        if peers:
            checks[f"26.1 {name}: our DtACI and their FACI cover within 0.015 of each other"] = (
                abs(res["DtACI/FACI (ours)"]["coverage"] - res[ref]["coverage"]) <= 0.015
            )
        notes.append(
            f"table 7 {name}: UP-OCP coverage {up['coverage']:.3f} ± {up['coverage_se']:.3f} "
            f"(goal |cov − 0.9| ≤ 0.015: {'met' if gaps[-1] <= 0.015 else 'NOT met'}); width "
            f"{up['width']:.3f} vs {ref} at UP-OCP's realised coverage {matched['width']:.3f} "
            f"(ratio {ratios[-1]:.3f}; goal ≤ 1: {'met' if ratios[-1] <= 1 else 'NOT met'})"
        )
    checks["26.3 no method's mean width is infinite (finite DtACI)"] = not inf_width
    for row, cells in rows.items():
        table.add_row(row, **cells)
    notes.append(
        f"table 7: UP-OCP worst |coverage − 0.9| = {max(gaps):.3f}, width / matched-FACI "
        f"{min(ratios):.3f}–{max(ratios):.3f} (issue 26 goal NOT met where > 0.015 or > 1)"
    )
    return table


def _plot(path: Path, runs: dict[str, Any], title: str, window: int) -> Path:
    plt = require_matplotlib(package="up-ocp")
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for name, run in runs.items():
        if name.startswith("_"):
            continue
        s, q = run
        err = (s > q).astype(float)
        style = (
            {"lw": 2.0, "color": "black"}
            if name.startswith("UP-OCP")
            else {"lw": 0.9, "alpha": 0.8}
        )
        axes[0].plot(1 - rolling_miscoverage(err, window), label=name, **style)
        axes[1].plot(np.maximum(_widths(s, q), 1e-2), **style)
    axes[0].axhline(1 - ALPHA, color="grey", ls="--", lw=1)
    axes[0].set_ylabel(f"rolling coverage ({window} steps)")
    axes[0].set_ylim(0.5, 1.02)
    axes[1].set_ylabel("threshold q_t (width / 2, floored at 0.01)")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("t")
    axes[0].legend(fontsize=7, ncol=3, loc="lower right")
    axes[0].set_title(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


def reproduce(quick: bool, out_dir: Path, progress: bool) -> ExperimentResult:
    checks: dict[str, bool] = {}
    notes: list[str] = ["Reconstruction: no public code of the paper; every figure here is ours."]
    result = ExperimentResult("up-ocp", "UP-OCP vs the online conformal baseline zoo")
    result.tables.append(_identity_table(checks))
    result.tables.append(_bound_table(checks))
    cp_table, cp_keep = _change_point(quick, progress, checks, notes)
    result.tables.append(cp_table)
    result.tables.append(_scale_table(quick, progress, checks))
    result.tables.append(_other_streams(quick, progress))
    real_table, real_keep = _real_table(quick, checks, notes)
    result.tables.append(real_table)
    result.tables.append(_peer_table(quick, progress, checks, notes))
    out_dir = Path(out_dir)
    result.figures.append(
        _plot(
            out_dir / "rolling_coverage_change_point.png",
            cp_keep,
            "Change-point stream (σ 1→5→0.5), seed 0, T=20,000",
            500,
        )
    )
    result.figures.append(
        _plot(
            out_dir / "rolling_coverage_sp500.png",
            real_keep,
            "S&P 500 daily returns, |r − trailing mean|",
            250,
        )
    )
    result.checks = checks
    result.notes = notes
    summ = cp_keep["_summary"]
    w = summ["res"]
    ratio = float(
        w["UP-OCP (ours, ε=1)"][20_000]["width"].mean() / w["ACI (best γ)"][20_000]["width"].mean()
    )
    result.headline = (
        f"change-point α=0.1: UP-OCP |miss−α| = {summ['gap5']:.4f} (T=5k), {summ['gap20']:.4f} "
        f"(T=20k); width {ratio:.3f}× best-γ ACI at T=20k; "
        f"{sum(checks.values())}/{len(checks)} checks pass"
    )
    return result


EXPERIMENT = Experiment(
    "up-ocp", "UP-OCP (parameter-free, universal portfolio) vs the online conformal zoo", reproduce
)
