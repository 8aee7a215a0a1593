"""The house conventions of issue 25, checked on the tree itself (source scans, no imports).

A package not yet converted by its owner can be listed in the ``_params`` table with a strict
xfail: the test turns red the day it is fixed, so the list only shrinks (it is empty today).
"""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFORMAL = ["up-ocp", "rsa-cp", "costly-cp", "collab-cp"]


def _packages() -> list[tuple[str, str, Path]]:
    found = []
    for py in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        meta = tomllib.loads(py.read_text())
        module = meta["tool"]["uv"]["build-backend"]["module-name"]
        found.append((meta["project"]["name"], module, py.parent))
    return found


def _params(pending: dict[str, str]):
    out = []
    for dist, module, folder in _packages():
        marks = [pytest.mark.xfail(strict=True, reason=pending[dist])] if dist in pending else []
        out.append(pytest.param(dist, module, folder, marks=marks, id=dist))
    return out


def _sources(folder: Path) -> dict[Path, str]:
    return {p: p.read_text() for p in sorted((folder / "src").rglob("*.py"))}


# -- item 1: one conformal core ---------------------------------------------------------------
RANK_COPIES = [
    # ceil((1 - a) * (n + 1)) and ceil((n + 1) * (1 - a)), any spacing / float literal
    re.compile(r"ceil\([^\n]*\(\s*1(\.0)?\s*-\s*[\w.]+\s*\)\s*\*\s*\(\s*[\w.]+\s*\+\s*1\s*\)"),
    re.compile(r"ceil\([^\n]*\(\s*[\w.]+\s*\+\s*1\s*\)\s*\*\s*\(\s*1(\.0)?\s*-\s*[\w.]+\s*\)"),
    re.compile(r"ceil\([^\n]*\(\s*[\w.]+\s*\+\s*1\s*\)\s*\*\s*(level|coverage|confidence)"),
]
SCORE_COPIES = [
    re.compile(r"def _?(lac|aps)_scores\("),
    re.compile(r"put_along_axis\(\s*\w+\s*,\s*order\s*,\s*cum\s*,"),
]


@pytest.mark.parametrize("dist", CONFORMAL)
def test_no_conformal_rank_or_score_copy_outside_shared(dist):
    folder = ROOT / "packages" / dist
    for path, text in _sources(folder).items():
        code = "\n".join(
            line
            for line in text.splitlines()
            if not line.lstrip().startswith(("#", "``", ":math:"))
        )
        for pattern in RANK_COPIES:
            assert not pattern.search(code), (
                f"{path}: a copy of the conformal rank ({pattern.pattern})"
            )
        for pattern in SCORE_COPIES:
            hit = pattern.search(code)
            # costly-cp's aps_scores is a thin deprecation wrapper calling the shared one
            if hit and not (dist == "costly-cp" and "_shared_aps(" in code):
                raise AssertionError(f"{path}: a copy of the LAC/APS scores ({pattern.pattern})")
    # and the shared core is what they call
    assert any("icml26_shared.conformal" in t for t in _sources(folder).values()), dist


def test_the_scans_catch_the_old_copies():
    old = [
        "    k = np.ceil((1.0 - a) * (n + 1))",
        "    k = math.ceil(round((n + 1) * level, 9))",
        "    k = np.ceil((m_arr + 1) * (1.0 - alpha) - 1e-9)",
    ]
    for line in old:
        assert any(p.search(line) for p in RANK_COPIES), line
    assert SCORE_COPIES[0].search("def _aps_scores(p):")
    assert SCORE_COPIES[1].search("    np.put_along_axis(out, order, cum, axis=1)")


# -- item 2: one convention -------------------------------------------------------------------
def test_public_names_shared_by_two_conformal_packages_mean_one_thing():
    import importlib

    seen: dict[str, tuple[str, object]] = {}
    for dist in CONFORMAL:
        module = importlib.import_module(dist.replace("-", "_"))
        for sub in [
            module,
            *(getattr(module, s) for s in ("baselines", "data") if hasattr(module, s)),
        ]:
            for name in sub.__all__:
                obj = getattr(sub, name)
                if isinstance(obj, type(module)) or name.isupper():
                    continue  # submodules and constants
                if name in seen and seen[name][0] != dist:
                    assert seen[name][1] is obj, (
                        f"{name} means different things in {seen[name][0]} and {dist}"
                    )
                seen.setdefault(name, (dist, obj))


@pytest.mark.parametrize("dist", CONFORMAL)
def test_estimators_take_confidence_level_and_the_progress_flag_is_progress(dist):
    import importlib
    import inspect

    module = importlib.import_module(dist.replace("-", "_"))
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) and any(
            hasattr(obj, v) for v in ("conformalize", "predict_interval", "run")
        ):
            params = inspect.signature(obj).parameters
            assert "alpha" not in params or params["alpha"].default is None, f"{name} takes alpha"
    for path, text in _sources(ROOT / "packages" / dist).items():
        for flag in ("verbose", "show_progress", "progress_bar:", "quiet"):
            assert f"{flag}" not in text.replace("progress as progress_bar", ""), f"{path}: {flag}"


@pytest.mark.parametrize("dist", CONFORMAL)
def test_no_generic_top_level_init_or_update(dist):
    import importlib

    module = importlib.import_module(dist.replace("-", "_"))
    assert not {"init", "update"} & set(module.__all__)


# -- item 6: hygiene ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dist", "module", "folder"),
    _params({}),
)
def test_version_is_read_from_metadata(dist, module, folder):
    init = folder / "src" / module / "__init__.py"
    if not init.is_file():
        pytest.skip(f"{dist} has no {init.relative_to(ROOT)} yet (the layout test reports it)")
    text = init.read_text()
    assert not re.search(r"^__version__\s*=\s*['\"]", text, re.M), dist
    assert "version(" in text, dist


@pytest.mark.parametrize(
    ("dist", "module", "folder"),
    _params({}),
)
def test_benchmarks_import_only_public_names(dist, module, folder):
    for script in sorted((folder / "benchmarks").glob("*.py")):
        text = script.read_text()
        private = re.findall(rf"(?:from|import)\s+{module}\.(_\w+)|{module}\.(_\w+)", text)
        assert not private, f"{script} uses private names {private}"


@pytest.mark.parametrize("dist", CONFORMAL)
def test_benchmarks_use_the_shared_timing_helper(dist):
    text = (ROOT / "packages" / dist / "benchmarks" / "run.py").read_text()
    assert "from icml26_shared.bench import BenchReport, time_call" in text
    assert "perf_counter" not in text and "json.dumps" not in text


def test_ci_checks_formatting():
    assert "ruff format --check ." in (ROOT / ".ci" / "run").read_text()
    assert "ruff format --check ." in (ROOT / ".github" / "workflows" / "ci.yml").read_text()


def test_ci_runs_the_wheel_checks_after_the_default_suite():
    run = (ROOT / ".ci" / "run").read_text()
    assert run.index("\nuv run pytest\n") < run.index("\nuv run pytest -m wheels")
    assert (
        "not wheels"
        in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
            "addopts"
        ][-1]
    )
