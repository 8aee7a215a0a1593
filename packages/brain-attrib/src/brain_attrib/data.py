"""Loaders: user-supplied naturalistic-listening files and the :class:`RunData` container.

``data.npz``: ``data`` (TR × voxel), ``tr`` (s), optional ``run`` (per TR). ``words.tsv``: a header
line with ``word`` and ``onset`` (s from its run's start), optional ``run`` and ``category``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from icml26_shared.state import reading

from ._fmri import RunData

__all__ = ["RunData", "load_naturalistic"]


def load_naturalistic(data_npz: Path | str, words_tsv: Path | str) -> RunData:
    """Read ``data.npz`` + ``words.tsv`` into a :class:`RunData` (validated: increasing onsets
    within a run inside its TR span, TR > 0, finite data; zero-variance voxels dropped with a
    warning)."""
    with reading(data_npz, "an fMRI data.npz (arrays 'data', 'tr', optional 'run')"):
        with np.load(data_npz, allow_pickle=False) as z:
            if "data" not in z or "tr" not in z:
                raise ValueError(f"it must hold arrays 'data' and 'tr', has {sorted(z.files)}")
            data = np.asarray(z["data"], dtype=float)
            tr = float(np.asarray(z["tr"]).reshape(()))
            run = np.asarray(z["run"], dtype=int) if "run" in z else np.zeros(len(data), int)
    with reading(words_tsv, "a words.tsv (columns 'word', 'onset')"):
        with open(words_tsv, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or "word" not in rows[0] or "onset" not in rows[0]:
        raise ValueError(f"{words_tsv} must be a TSV with columns 'word' and 'onset'")
    words = [r["word"] for r in rows]
    onsets = np.array([float(r["onset"]) for r in rows])
    wrun = np.array([int(r.get("run") or 0) for r in rows])
    cats = [r["category"] for r in rows] if "category" in rows[0] else None
    return RunData(words, onsets, wrun, data, tr, run, cats)
