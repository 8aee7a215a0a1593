"""Run data (words with onsets + TR × voxel data) and the synthetic fMRI with planted word effects.

Synthetic voxel v at TR j (sampled at t_j = jΔ within its run):
``y_{jv} = Σ_i h(t_j − o_i) β_vᵀ s_{w_i} + ε``, the sum over topic nouns only, ``h`` the canonical
(SPM) double-gamma HRF, ``s_k = u_{topic(k)} + noun_spread · z_k ∈ R⁸`` one vector per topic noun
(a topic part plus a noun part); 50 of the voxels are pure noise.
The noise is set per voxel so that the noise-free signal correlates ``signal_r`` with the data.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln, xlogy

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_in_interval,
    check_positive,
    check_positive_int,
    int_from_seed,
)

from ._grammar import grammar_corpus, number_flip

__all__ = ["RunData", "fmri", "hrf", "planted_words"]


def hrf(t: np.ndarray) -> np.ndarray:
    """Canonical double-gamma HRF ``h(t) = Γ(t; 6) − Γ(t; 16)/6`` (zero for t < 0)."""
    t = np.asarray(t, dtype=float)
    pos = np.where(t > 0, t, 1.0)

    def pdf(a: float) -> np.ndarray:  # the Gamma(a, 1) density (scipy.stats is slow to import)
        return np.exp(xlogy(a - 1.0, pos) - pos - gammaln(a))

    return np.where(t > 0, pdf(6.0) - pdf(16.0) / 6.0, 0.0)


@dataclass
class RunData:
    """Words (``word``, ``onset`` in s from its run's start, ``run``, ``category``) and fMRI data.

    ``data`` is TR × voxel, ``tr_run`` the run of each TR; TR j of a run covers [jΔ, (j+1)Δ).
    """

    words: list[str]
    onsets: np.ndarray
    word_run: np.ndarray
    data: np.ndarray
    tr: float
    tr_run: np.ndarray
    categories: list[str] | None = None
    extras: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tr = check_positive(self.tr, "tr")
        self.onsets = check_finite_array(self.onsets, "onsets", ndim=1)
        self.data = check_finite_array(self.data, "data", ndim=2)
        self.word_run = np.asarray(self.word_run, dtype=int)
        self.tr_run = np.asarray(self.tr_run, dtype=int)
        if len(self.words) != len(self.onsets) or len(self.word_run) != len(self.onsets):
            raise ValueError("words, onsets and word_run must have the same length")
        if len(self.tr_run) != len(self.data):
            raise ValueError(
                f"tr_run has {len(self.tr_run)} entries, data has {len(self.data)} TRs"
            )
        starts = np.flatnonzero(np.r_[True, self.tr_run[1:] != self.tr_run[:-1]])
        if len(starts) != len(np.unique(self.tr_run)):
            raise ValueError(
                "tr_run must list each run's TRs as one contiguous block (in time order), got "
                f"runs in the order {self.tr_run[starts].tolist()}"
            )
        missing = sorted(set(np.unique(self.word_run).tolist()) - set(self.tr_run.tolist()))
        if missing:
            raise ValueError(f"word_run names runs {missing} that have no TRs in tr_run")
        if self.categories is not None and len(self.categories) != len(self.words):
            raise ValueError("categories must have one entry per word")
        for r in np.unique(self.word_run):
            on = self.onsets[self.word_run == r]
            if np.any(np.diff(on) <= 0):
                raise ValueError(f"onsets must be strictly increasing within run {r}")
            span = self.tr * np.sum(self.tr_run == r)
            if on.min() < 0 or on.max() >= span:
                raise ValueError(
                    f"onsets of run {r} must lie in [0, {span}) s (its TRs), got "
                    f"[{on.min()}, {on.max()}]"
                )
        sd = self.data.std(axis=0)
        bad = sd == 0
        if bad.any():
            warnings.warn(f"dropping {int(bad.sum())} zero-variance voxel(s)", stacklevel=2)
            self.data = self.data[:, ~bad]
            self.extras["dropped_voxels"] = np.flatnonzero(bad)
        self.tr_local = _local_index(self.tr_run)


def _local_index(tr_run: np.ndarray) -> np.ndarray:
    """Index of each TR within its run (runs in any order, each one contiguous block)."""
    local = np.zeros(len(tr_run), dtype=int)
    for r in np.unique(tr_run):
        idx = np.flatnonzero(tr_run == r)
        local[idx] = np.arange(len(idx))
    return local


def fmri(
    *,
    n_runs: int = 4,
    n_trs: int = 2000,
    n_voxels: int = 200,
    n_noise: int = 50,
    tr: float = 2.0,
    word_rate: float = 0.5,
    dim: int = 8,
    signal_r: float = 0.8,
    noun_spread: float = 0.5,
    seed: SeedLike = 0,
) -> RunData:
    """Synthetic runs: grammar words every ``word_rate`` s, ``n_trs`` TRs in all, planted nouns.

    ``n_noise`` of the ``n_voxels`` voxels carry no signal (``0 <= n_noise < n_voxels``)."""
    n_runs = check_positive_int(n_runs, "n_runs")
    n_trs = check_positive_int(n_trs, "n_trs", minimum=n_runs)
    n_voxels = check_positive_int(n_voxels, "n_voxels")
    n_noise = check_positive_int(n_noise, "n_noise", minimum=0)
    if n_noise >= n_voxels:
        raise ValueError(
            f"n_noise must be < n_voxels = {n_voxels} (at least one signal voxel), got {n_noise}"
        )
    dim = check_positive_int(dim, "dim")
    check_positive(tr, "tr")
    check_positive(word_rate, "word_rate")
    check_positive(noun_spread, "noun_spread", strict=False)
    check_in_interval(signal_r, "signal_r", 0, 1)
    seed = int_from_seed(seed, "seed", bits=52)  # the runs' corpora take seed * 1000 + r
    rng = np.random.default_rng(seed)
    per = n_trs // n_runs
    n_w = int(per * tr / word_rate)
    from ._grammar import NOUNS, TOPICS

    nouns = [n for t in TOPICS for n in NOUNS[t]]
    u = rng.standard_normal((len(TOPICS), dim))
    s = np.repeat(u, len(nouns) // len(TOPICS), axis=0) + noun_spread * rng.standard_normal(
        (len(nouns), dim)
    )
    beta = rng.standard_normal((dim, n_voxels))
    beta[:, n_voxels - n_noise :] = 0.0
    words, onsets, wrun, cats, tr_run, ys, stems = [], [], [], [], [], [], []
    for r in range(n_runs):
        c = grammar_corpus(n_w + 50, seed=seed * 1000 + r + 10)
        w = c.words[:n_w]
        on = np.arange(n_w) * word_rate
        sig = np.zeros((per, n_voxels))
        t = np.arange(per) * tr
        for i, (wi, ci) in enumerate(zip(w, c.categories[:n_w], strict=True)):
            if ci.startswith("noun"):
                stem = wi[:-1] if ci == "noun_pl" else wi
                k = nouns.index(stem)
                sig += hrf(t - on[i])[:, None] * (s[k] @ beta)[None, :]
        ys.append(sig)
        words += w
        onsets.append(on)
        wrun.append(np.full(n_w, r))
        cats += c.categories[:n_w]
        tr_run.append(np.full(per, r))
        stems += [x for x in w]
    sig = np.concatenate(ys)
    vs = sig.var(axis=0)
    noise_sd = np.where(vs > 0, np.sqrt(vs * (1 / signal_r**2 - 1)), 1.0)
    data = sig + rng.standard_normal(sig.shape) * noise_sd
    rd = RunData(
        words, np.concatenate(onsets), np.concatenate(wrun), data, tr, np.concatenate(tr_run), cats
    )
    rd.extras.update(
        signal=sig,
        signal_voxels=np.arange(n_voxels - n_noise),
        noise_voxels=np.arange(n_voxels - n_noise, n_voxels),
        number_flip=number_flip(),
    )
    return rd


def planted_words(rd: RunData, tr_index: int, delays: tuple[int, ...] = (1, 2, 3, 4)) -> list[int]:
    """Word indices (into ``rd.words``) of P_j: topic nouns with onset in TRs j−d (d in delays)
    whose HRF weight at t_j is ≥ 10% of the HRF peak."""
    if rd.categories is None:
        raise ValueError("planted_words needs categories")
    r = rd.tr_run[tr_index]
    j = rd.tr_local[tr_index]
    peak = hrf(np.linspace(0.01, 30, 3000)).max()
    out = []
    idx = np.flatnonzero(rd.word_run == r)
    for i in idx:
        b = int(rd.onsets[i] // rd.tr)
        if (j - b) in delays and rd.categories[i].startswith("noun"):
            if hrf(np.asarray(j * rd.tr - rd.onsets[i])) >= 0.1 * peak:
                out.append(int(i))
    return out
