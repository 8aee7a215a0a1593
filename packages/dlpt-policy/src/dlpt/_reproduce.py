"""``python -m dlpt reproduce [--quick] [--set key=value]``: the headline experiments of dlpt.

1. Evaluation: V̂ ± SE and 95% CI coverage for π ≡ 1.1 (untested) and π = t*(x) over
   replications, against the plug-in value (no correction), no cross-fitting and oracle θ.
2. Learning: every policy learned on one half of the trial and evaluated (V̂ ± CI) on the other:
   DLPT, the plug-in DNN policy, the best single arm, the in-package DR best-arm policy, econml's
   DRPolicyForest (when installed), the oracle best arm and the oracle t*; true values by Monte
   Carlo; regret and the share of V(t*) − max_k V(t_k) recovered.
3. Regret vs n (log–log slope), π̂(x) vs t*(x) (PNGs).
4. Orthogonality: shifting θ̂ by δ·h(x) moves V̂ far less than the plug-in value.
5. Misspecification: cubic truth on four arms, degree chosen by cross-validation.
6. doubleml APOS against V̂(π ≡ t_k) (when installed).
7. The unit identities (Λ by hand, ψ by hand, basis invariance, K < q + 1 raises).

Every acceptance item of the spec is a named check in ``result.checks`` (numeric ones with their
value and bound, through ``result.check``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26_shared.experiment import (
    Estimate,
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.experiment import progress as track

from . import _peers
from ._baselines import DRBestArmPolicy, best_single_arm, plug_in_policy, plug_in_value
from ._basis import gram, make_basis, solve_gram
from ._data import RCTData, simulate_rct
from ._dlpt import DLPT, orthogonal_scores

HIDDEN = (32, 32)
FOUR_ARMS = (0.6, 0.87, 1.13, 1.4)


@dataclass(frozen=True)
class Config:
    """Sizes of the experiment and which bars its checks use (``--set key=value`` overrides any).

    Attributes:
        eval_n: trial size of the evaluation replications (also of items 4 and 6).
        eval_reps: evaluation replications.
        learn_n: trial size of the policy-learning runs.
        learn_seeds: policy-learning seeds.
        regret_ns: trial sizes of the regret-vs-n curve (at least two).
        regret_seeds: seeds per trial size of the regret curve.
        misspec_n: trial size of the misspecification runs.
        misspec_seeds: misspecification seeds.
        folds: cross-fitting folds of the learning runs.
        n_mc: Monte Carlo draws of x behind each true value.
        spec_bars: the spec's acceptance bars (≥ 90% of replications within 2 SE, CI coverage in
            [0.85, 1], ≥ 75% of the gap, regret slope ≤ −0.35, CV picks q = 3 in ≥ 4 seeds),
            which need several replications and seeds; False: the sanity bars of a one-seed run
            (one replication within 3 SE, more of the gap than the oracle best arm, a falling
            regret, q = 3 in ≥ 1 seed).
    """

    eval_n: int = 20_000
    eval_reps: int = 30
    learn_n: int = 20_000
    learn_seeds: int = 5
    regret_ns: tuple[int, ...] = (2_000, 8_000, 32_000)
    regret_seeds: int = 5
    misspec_n: int = 20_000
    misspec_seeds: int = 5
    folds: int = 5
    n_mc: int = 1_000_000
    spec_bars: bool = True

    def __post_init__(self) -> None:
        for name in ("eval_reps", "learn_seeds", "regret_seeds", "misspec_seeds", "n_mc"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.folds < 1:
            raise ValueError(f"folds must be >= 1, got {self.folds}")
        if len(set(self.regret_ns)) < 2:
            raise ValueError(f"regret_ns needs two different sizes (a slope), got {self.regret_ns}")
        for name in ("eval_n", "learn_n", "misspec_n"):
            if getattr(self, name) < 100:
                raise ValueError(f"{name} must be >= 100, got {getattr(self, name)}")
        if min(self.regret_ns) < 100:
            raise ValueError(f"regret_ns must be >= 100 each, got {self.regret_ns}")


FULL = Config()
QUICK = Config(
    eval_n=5_000,
    eval_reps=1,
    learn_n=5_000,
    learn_seeds=1,
    regret_ns=(1_250, 2_500, 5_000),
    regret_seeds=1,
    misspec_n=20_000,
    misspec_seeds=1,
    folds=2,
    n_mc=200_000,
    spec_bars=False,
)

#: the value estimators of the evaluation table: row id prefix -> display name
ESTIMATORS = {
    "dlpt": "DLPT",
    "plugin": "plug-in value (no correction)",
    "no-crossfit": "no cross-fitting",
    "oracle-theta": "oracle θ",
}
#: the evaluated policies: id -> display name
EVAL_POLICIES = {"1.1": "π ≡ 1.1", "tstar": "π = t*"}
#: the learned and oracle policies of the learning table: row id -> display label
LEARNED = {
    "dlpt": "DLPT (learned, honest split)",
    "plugin-dnn": "plug-in DNN argmax",
    "best-arm": "best single arm",
    "dr-best-arm": "DR best arm (in-package)",
    "econml-forest": "econml DRPolicyForest",
    "oracle-best-arm": "oracle best arm",
    "oracle-tstar": "oracle t*",
}


def _fit(data: RCTData, rows: np.ndarray | None = None, **kw) -> DLPT:
    rows = np.arange(data.t.size) if rows is None else rows
    probs = data.probs if data.probs.ndim == 1 else data.probs[rows]
    opts = {"degree": 2, "hidden": HIDDEN, "folds": 2, "seed": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DLPT(**opts).fit(data.X[rows], data.t[rows], data.y[rows], data.arms, probs)


def oracle_theta(data: RCTData, model: DLPT) -> np.ndarray:
    """True θ(x_i) of the quadratic truth in the model's basis: μ = a + 2ct* t − c t²."""
    X = data.X
    ts = 1.0 + 0.25 * np.tanh(2.0 * (X[:, 0] + 0.5 * X[:, 1] * X[:, 3]))
    c = 3.0 * (1.0 + 0.5 * np.tanh(X[:, 2]))
    a = 1.0 + X[:, 4] + 0.5 * np.sin(X[:, 5])
    theta_power = np.stack([a, 2 * c * ts, -c], axis=1)
    return theta_power @ np.linalg.inv(model.basis_._power_matrix())


# ------------------------------------------------------------------ 1. evaluation
def _evaluation(sz: Config, show: bool | None) -> tuple[ResultTable, dict[str, float]]:
    rec: dict[tuple[str, str], dict[str, list[float]]] = {}
    for rep in track(range(sz.eval_reps), enabled=show, desc="evaluation replications"):
        data = simulate_rct(sz.eval_n, seed=1000 + rep)
        model = _fit(data)
        nocf = _fit(data, folds=1)
        oracle = model._with_theta(oracle_theta(data, model))
        for pid, pol in (("1.1", 1.1), ("tstar", data.t_star)):
            truth = data.true_value(pol, sz.n_mc)
            ests = {
                "dlpt": model.value(pol),
                "plugin": plug_in_value(model, pol),
                "no-crossfit": nocf.value(pol),
                "oracle-theta": oracle.value(pol),
            }
            for key, est in ests.items():
                r = rec.setdefault((key, pid), {"err": [], "se": [], "cov": [], "in2": []})
                r["err"].append(est.v - truth)
                r["se"].append(est.se)
                r["cov"].append(float(est.ci[0] <= truth <= est.ci[1]))
                r["in2"].append(float(abs(est.v - truth) <= 2 * est.se))
    table = ResultTable(
        f"Evaluation: n = {sz.eval_n:,}, q = 2, 2-fold cross-fitting, {sz.eval_reps} replication(s)",
        ["V̂ − V", "SE", "95% CI coverage", "|V̂ − V| ≤ 2 SE"],
        note="V̂ − V: mean ± Monte Carlo s.e. over replications; true V by Monte Carlo on "
        f"{sz.n_mc:,} draws of x. Plug-in and no-cross-fitting SEs ignore the error of θ̂.",
    )
    figures: dict[str, float] = {}
    for (key, pid), r in rec.items():
        table.add_row(
            f"{key}-{pid}",
            {
                "V̂ − V": r["err"],
                "SE": float(np.mean(r["se"])),
                "95% CI coverage": float(np.mean(r["cov"])),
                "|V̂ − V| ≤ 2 SE": float(np.mean(r["in2"])),
            },
            label=f"{ESTIMATORS[key]}, {EVAL_POLICIES[pid]}",
        )
        figures[f"{key}|{pid}|cov"] = float(np.mean(r["cov"]))
        figures[f"{key}|{pid}|in2"] = float(np.mean(r["in2"]))
        figures[f"{key}|{pid}|z"] = float(np.max(np.abs(np.array(r["err"]) / r["se"])))
    return table, figures


# ------------------------------------------------------------------ 2./3. learning
def _learn_once(data: RCTData, folds: int, seed: int, n_mc: int, peers: bool) -> dict:
    """Learn every policy on half A, evaluate on half B; true values by Monte Carlo."""
    n = data.t.size
    perm = np.random.default_rng([seed, 3]).permutation(n)
    A, B = np.sort(perm[: n // 2]), np.sort(perm[n // 2 :])
    learner = _fit(data, A, folds=folds, seed=seed)
    evaluator = _fit(data, B, folds=folds, seed=seed + 100)
    pols = {
        "dlpt": learner.learn_policy(split="none", seed=seed),
        "plugin-dnn": plug_in_policy(learner),
        "best-arm": best_single_arm(learner),
        "dr-best-arm": DRBestArmPolicy(seed=seed).fit(
            data.X[A], data.t[A], data.y[A], data.arms, data.probs
        ),
    }
    if peers:
        pols["econml-forest"] = _peers.dr_policy_forest(
            data.X[A], data.t[A], data.y[A], data.arms, seed
        )
    pols["oracle-best-arm"] = data.best_arm
    pols["oracle-tstar"] = data.t_star
    v_star = data.true_value(data.t_star, n_mc)
    v_arm = max(data.true_value(float(a), n_mc) for a in data.arms)
    out = {}
    for name, pol in pols.items():
        truth = data.true_value(pol, n_mc)
        est = evaluator.value(pol)
        out[name] = {
            "true": truth,
            "est": est.v,
            "se": est.se,
            "cov": float(est.ci[0] <= truth <= est.ci[1]),
            "regret": v_star - truth,
            "share": (truth - v_arm) / (v_star - v_arm),
        }
    out["_policy"] = pols["dlpt"]
    return out


def _learning(sz: Config, show: bool | None, peers: bool) -> tuple[ResultTable, dict, list[dict]]:
    runs = []
    for s in track(range(sz.learn_seeds), enabled=show, desc="policy learning seeds"):
        data = simulate_rct(sz.learn_n, seed=2000 + s)
        runs.append(_learn_once(data, sz.folds, s, sz.n_mc, peers))
    cols = ["true V", "V̂ ± SE", "CI coverage", "regret", "share of gap"]
    table = ResultTable(
        f"Policy learning: n = {sz.learn_n:,} (learn on half, evaluate on the other), "
        f"{sz.learn_seeds} seed(s), {sz.folds}-fold cross-fitting",
        cols,
        note="share of gap = (V(π) − max_k V(t_k)) / (V(t*) − max_k V(t_k)); V̂ ± SE on the "
        "evaluation half (the mean V̂ with the mean SE); CI coverage of the true V over seeds.",
    )
    names = [k for k in runs[0] if not k.startswith("_")]
    summary = {}
    for name in names:
        rs = [r[name] for r in runs]
        est = Estimate(
            float(np.mean([r["est"] for r in rs])), float(np.mean([r["se"] for r in rs]))
        )
        table.add_row(
            name,
            {
                "true V": [r["true"] for r in rs],
                "V̂ ± SE": est,
                "CI coverage": float(np.mean([r["cov"] for r in rs])),
                "regret": [r["regret"] for r in rs],
                "share of gap": [r["share"] for r in rs],
            },
            label=LEARNED[name],
        )
        summary[name] = rs
    return table, summary, runs


#: the curves of the regret-vs-n figure: the learned policy's id -> legend label
CURVES = {"dlpt": "DLPT", "plugin-dnn": "plug-in DNN", "dr-best-arm": "DR best arm (discrete)"}


def _regret_vs_n(sz: Config, show: bool | None) -> tuple[dict[str, dict[int, list[float]]], dict]:
    """Regret by trial size of the :data:`CURVES` policies (keyed by id) and their log–log
    slopes."""
    curves: dict[str, dict[int, list[float]]] = {row: {} for row in CURVES}
    jobs = [(n, s) for n in sz.regret_ns for s in range(sz.regret_seeds)]
    for n, s in track(jobs, enabled=show, desc="regret vs n"):
        data = simulate_rct(n, seed=3000 + 17 * s + n)
        r = _learn_once(data, sz.folds, s, sz.n_mc, peers=False)
        for row in CURVES:
            curves[row].setdefault(n, []).append(r[row]["regret"])
    slopes = {}
    for name, c in curves.items():
        ns = np.array(sorted(c), dtype=float)
        reg = np.array([max(np.mean(c[int(k)]), 1e-6) for k in ns])
        slopes[name] = float(np.polyfit(np.log(ns), np.log(reg), 1)[0])
    return curves, slopes


# ------------------------------------------------------------------ 4. orthogonality
def _orthogonality(n: int) -> tuple[float, dict[str, float]]:
    data = simulate_rct(n, seed=6)
    model = _fit(data, folds=2)
    X = data.X
    h = np.stack([1 + np.tanh(X[:, 0]), 0.5 * np.sin(X[:, 1]), np.full(X.shape[0], 0.3)], 1)
    ratios = {}
    for pname, pol in (("1.1", 1.1), ("t*", data.t_star)):
        for delta in (0.1, 0.5):
            shifted = model._with_theta(model.theta_ + delta * h)
            move_dr = abs(shifted.value(pol).v - model.value(pol).v)
            move_pl = abs(plug_in_value(shifted, pol).v - plug_in_value(model, pol).v)
            ratios[f"π={pname}, δ={delta}"] = move_dr / move_pl
    return max(ratios.values()), ratios


# ------------------------------------------------------------------ 5. misspecification
def _misspecification(sz: Config, show: bool | None) -> tuple[ResultTable, dict]:
    rows = []
    for s in track(range(sz.misspec_seeds), enabled=show, desc="misspecification seeds"):
        data = simulate_rct(sz.misspec_n, arms=FOUR_ARMS, truth="cubic", seed=4000 + s)
        truth = data.true_value(1.1, sz.n_mc)
        cv = _fit(data, degree="cv", folds=5, seed=s)
        forced = _fit(data, degree=2, folds=5, seed=s)
        e_cv, e_2 = cv.value(1.1), forced.value(1.1)
        rows.append(
            {
                "q": cv.degree_,
                "mse": cv.cv_mse_,
                "z_cv": (e_cv.v - truth) / e_cv.se,
                "bias_q2": e_2.v - truth,
                "z_q2": (e_2.v - truth) / e_2.se,
            }
        )
    table = ResultTable(
        f"Misspecification: cubic truth, arms {FOUR_ARMS}, n = {sz.misspec_n:,}, "
        f"{sz.misspec_seeds} seed(s), 5-fold CV over q ∈ {{1, 2, 3}}",
        ["q chosen", "CV MSE q=1", "CV MSE q=2", "CV MSE q=3", "(V̂ − V)/SE, π ≡ 1.1"],
        note="'q = 2 forced' rows: the bias of V̂(π ≡ 1.1) when the degree is too low "
        "(reported, not hidden).",
    )
    for s, r in enumerate(rows):
        table.add_row(
            f"seed{s}-cv",
            {
                "q chosen": r["q"],
                "CV MSE q=1": r["mse"][1],
                "CV MSE q=2": r["mse"][2],
                "CV MSE q=3": r["mse"][3],
                "(V̂ − V)/SE, π ≡ 1.1": r["z_cv"],
            },
            label=f"seed {s}, CV",
        )
        table.add_row(
            f"seed{s}-q2",
            {"q chosen": 2, "(V̂ − V)/SE, π ≡ 1.1": f"{r['z_q2']:.2f} (bias {r['bias_q2']:.3f})"},
            label=f"seed {s}, q = 2 forced",
        )
    return table, {"rows": rows}


# ------------------------------------------------------------------ 6. doubleml
def _doubleml(n: int) -> tuple[ResultTable | None, float]:
    if not _peers.doubleml_available():
        return None, float("nan")
    data = simulate_rct(n, seed=8)
    model = _fit(data, folds=5)
    coef, se = _peers.doubleml_apos(data.X, data.t, data.y, data.arms)
    table = ResultTable(
        f"Per-arm values: DLPT V̂(π ≡ t_k) vs doubleml DoubleMLAPOS, n = {n:,}",
        ["DLPT V̂ ± SE", "doubleml APOS ± SE", "|diff| / SE", "true V"],
    )
    worst = 0.0
    for k, a in enumerate(data.arms):
        est = model.value(float(a))
        diff = abs(est.v - coef[k]) / est.se
        worst = max(worst, diff)
        table.add_row(
            f"t={a:g}",
            {
                "DLPT V̂ ± SE": Estimate(est.v, est.se),
                "doubleml APOS ± SE": Estimate(float(coef[k]), float(se[k])),
                "|diff| / SE": diff,
                "true V": data.true_value(float(a)),
            },
            label=f"t = {a:g}",
        )
    return table, worst


# ------------------------------------------------------------------ 7. unit identities
def _unit_identities(result: ExperimentResult) -> None:
    """Item 7: Λ and ψ by hand, basis invariance of ψ, K < q + 1 raises."""
    arms, p = np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.25, 0.25])
    lam = gram(make_basis(2, arms, "monomial"), arms, p)
    want = np.array([[1.0, 0.75, 1.25], [0.75, 1.25, 2.25], [1.25, 2.25, 4.25]])
    b = make_basis(1, np.array([0.0, 1.0]), "monomial")
    theta = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0], [1.0, -1.0]])
    t, y = np.array([0.0, 1.0, 1.0, 0.0]), np.array([2.0, 0.0, 3.0, 1.0])
    pi = np.array([0.5, 1.0, 0.0, 2.0])
    w = solve_gram(gram(b, np.array([0.0, 1.0]), np.array([0.5, 0.5])), b(t))
    psi = orthogonal_scores(theta, w, y - np.einsum("nk,nk->n", theta, b(t)), b(pi))[0]
    rng = np.random.default_rng(0)
    a3 = np.array([0.6, 1.0, 1.4])
    bl, bm = make_basis(2, a3), make_basis(2, a3, "monomial")
    th_l = rng.normal(size=(100, 3))
    th_m = th_l @ bl._power_matrix()
    tt, yy, pp = rng.choice(a3, 100), rng.normal(size=100), rng.uniform(0.5, 1.5, 100)
    out = []
    for bb, th in ((bl, th_l), (bm, th_m)):
        ww = solve_gram(gram(bb, a3, np.ones(3) / 3), bb(tt))
        out.append(orthogonal_scores(th, ww, yy - np.einsum("nk,nk->n", th, bb(tt)), bb(pp))[0])
    try:
        DLPT(degree=3).fit(np.zeros((9, 1)), np.repeat(a3, 3), np.zeros(9), a3, np.ones(3) / 3)
        raises = False
    except ValueError:
        raises = True
    result.checks["7 Λ hand-computed 3-arm case"] = bool(np.allclose(lam, want, atol=1e-14))
    result.checks["7 ψ on the 4-unit example"] = bool(
        np.allclose(psi, [3.0, -1.0, 2.0, -1.0], atol=1e-12)
    )
    tol = 1e-10
    result.check(
        "psi-basis",
        np.max(np.abs(out[0] - out[1])),
        "<=",
        tol,
        f"7 ψ Legendre = monomial ({tol:.0e})",
    )
    result.checks["7 K < q + 1 raises"] = raises


# ------------------------------------------------------------------ figures
def _figures(
    plt, out_dir: Path, curves: dict, slopes: dict, policy, regret_seeds: int
) -> list[Path]:
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for (row, c), style in zip(curves.items(), ("o-", "s--", "^:")):
        ns = sorted(c)
        m = [np.mean(c[n]) for n in ns]
        e = [np.std(c[n], ddof=1) / math.sqrt(len(c[n])) if len(c[n]) > 1 else 0 for n in ns]
        label = f"{CURVES[row]} (slope {slopes[row]:.2f})"
        ax.errorbar(ns, m, yerr=e, fmt=style, capsize=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trial size n")
    ax.set_ylabel("regret V(t*) − V(π̂)")
    ax.set_title("regret vs n" + (" (1 seed)" if regret_seeds == 1 else ""))
    ax.legend(fontsize=8)
    fig.tight_layout()
    p1 = save_figure(fig, out_dir / "regret_vs_n.png")
    data = simulate_rct(3000, seed=99)
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ts = data.t_star(data.X)
    ax.scatter(ts, policy(data.X), s=4, alpha=0.4)
    ax.plot([0.75, 1.25], [0.75, 1.25], "k-", lw=1)
    ax.set_xlabel("true optimum t*(x)")
    ax.set_ylabel("learned π̂(x)")
    ax.set_title("DLPT policy vs t*")
    fig.tight_layout()
    p2 = save_figure(fig, out_dir / "policy_vs_tstar.png")
    return [p1, p2]


# ------------------------------------------------------------------ driver
def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run items 1–7 of the module docstring at the sizes of ``config``."""
    sz = config
    peers = _peers.econml_available()
    result = ExperimentResult("dlpt-policy", "continuous policies from discrete RCTs, debiased")
    gap = simulate_rct(10, seed=0).gap(sz.n_mc)
    result.notes.append(
        f"generator: V(t*) = {gap['v_star']:.4f}, max_k V(t_k) = {gap['best_single_arm']:.4f}, "
        f"gap {gap['gap']:.4f}; the oracle best arm per user recovers "
        f"{100 * gap['oracle_best_arm_share']:.1f}% of it"
    )
    table, ev = _evaluation(sz, progress)
    result.tables.append(table)
    for pid, pname in EVAL_POLICIES.items():
        if config.spec_bars:
            in2_bar, cov_bar = 0.9, 0.85
            result.check(
                f"eval-in2-{pid}",
                ev[f"dlpt|{pid}|in2"],
                ">=",
                in2_bar,
                f"1 {pname}: within 2 SE in ≥ {in2_bar:.0%} of replications",
            )
            # a coverage is a share of replications, so it cannot exceed 1
            result.check(
                f"eval-cov-{pid}",
                ev[f"dlpt|{pid}|cov"],
                ">=",
                cov_bar,
                f"1 {pname}: CI coverage in [{cov_bar}, 1]",
            )
        else:
            result.check(
                f"eval-z-{pid}",
                ev[f"dlpt|{pid}|z"],
                "<=",
                3,
                f"1 (quick) {pname}: one replication within 3 SE",
            )
    ltable, summary, runs = _learning(sz, progress, peers)
    result.tables.append(ltable)
    ours = summary["dlpt"]
    share = float(np.mean([r["share"] for r in ours]))
    base = "econml-forest" if peers else "dr-best-arm"
    if config.spec_bars:
        share_bar = 0.75
        result.check(
            "share",
            share,
            ">=",
            share_bar,
            f"2 learned policy recovers ≥ {share_bar:.0%} of the gap",
        )
    else:
        result.check(
            "share",
            share,
            ">",
            gap["oracle_best_arm_share"],
            f"2 (quick, n = {sz.learn_n:,}) learned policy recovers more of the gap than the "
            "oracle best arm's share",
        )
    margins = [o["true"] - b["true"] for o, b in zip(ours, summary[base], strict=True)]
    margins += [o["true"] - b["true"] for o, b in zip(ours, summary["dr-best-arm"])]
    result.check(
        "beats",
        np.min(margins),
        ">",
        0.0,
        f"2 learned policy beats {LEARNED[base]} and the DR best arm in every seed",
    )
    curves, slopes = _regret_vs_n(sz, progress)
    slope = slopes["dlpt"]
    if config.spec_bars:
        slope_bar = -0.35
        result.check("slope", slope, "<=", slope_bar, f"3 regret log–log slope ≤ {slope_bar}")
    else:
        seeds = f"{sz.regret_seeds} seed" + ("s" if sz.regret_seeds > 1 else "")
        result.check("slope", slope, "<", 0.0, f"3 (quick, {seeds}) regret falls with n: slope < 0")
    ratio, ratios = _orthogonality(sz.eval_n)
    ortho_bar = 0.1
    result.check(
        "orthogonality",
        ratio,
        "<=",
        ortho_bar,
        f"4 orthogonality: V̂ moves ≤ {ortho_bar}× the plug-in move",
    )
    result.notes.append(
        "orthogonality ratios |ΔV̂| / |Δ plug-in|: "
        + ", ".join(f"{k}: {v:.4f}" for k, v in ratios.items())
    )
    mtable, mis = _misspecification(sz, progress)
    result.tables.append(mtable)
    qs = [r["q"] for r in mis["rows"]]
    n3 = sum(q == 3 for q in qs)
    need = 4 if config.spec_bars else 1
    seeds = f"{len(qs)} seed" + ("s" if len(qs) > 1 else "")
    tag = "" if config.spec_bars else f" (quick, {seeds})"
    result.check("cv-degree", n3, ">=", need, f"5{tag} CV selects q = 3 in ≥ {need} seeds")
    result.check(
        "misspec-z",
        np.max(np.abs([r["z_cv"] for r in mis["rows"]])),
        "<=",
        3,
        f"5{tag} V̂(π ≡ 1.1) with the CV degree within 3 SE in every seed",
    )
    result.notes.append(
        "q = 2 forced on the cubic truth: (V̂ − V)/SE for π ≡ 1.1 = "
        + ", ".join(f"{r['z_q2']:.2f} (bias {r['bias_q2']:.3f})" for r in mis["rows"])
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _fit(simulate_rct(600, seed=1), hidden=(4,), epochs=2).value(1.6)
    result.checks["5 UserWarning when π leaves [t_min, t_max]"] = any(
        issubclass(w.category, UserWarning) and "tested range" in str(w.message) for w in caught
    )
    dtable, worst = _doubleml(sz.eval_n)
    if dtable is not None:
        result.tables.append(dtable)
        result.check("doubleml", worst, "<=", 1, "6 V̂(π ≡ t_k) within 1 SE of doubleml APOS")
    else:
        result.notes.append("doubleml is not installed: item 6 not measured")
    _unit_identities(result)
    plt = require_matplotlib("plot", "dlpt-policy")
    result.figures += _figures(plt, out_dir, curves, slopes, runs[0]["_policy"], sz.regret_seeds)
    result.notes.append(
        "regret vs n (mean over seeds): "
        + "; ".join(
            f"{CURVES[row]}: "
            + ", ".join(f"n={n}: {np.mean(v):.4f}" for n, v in sorted(c.items()))
            + f" (slope {slopes[row]:.2f})"
            for row, c in curves.items()
        )
    )
    if not peers:
        result.notes.append("econml is not installed: DRPolicyForest row missing")
    dr_share = np.mean([r["share"] for r in summary["dr-best-arm"]])
    result.headline = (
        f"learned DLPT policy recovers {share:.0%} of the V(t*) − best-arm gap "
        f"(DR best arm per user: {dr_share:.0%}); "
        f"V̂(t*) CI coverage {ev['dlpt|tstar|cov']:.2f} over {sz.eval_reps} replication(s)"
    )
    return result


EXPERIMENT = Experiment(
    "dlpt-policy",
    "debiased values and learned continuous policies from a 3-arm trial vs best-arm targeting",
    reproduce,
    QUICK,
    FULL,
)
