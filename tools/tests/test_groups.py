"""Each member's isolated test job (``uv run --isolated --package X --group test pytest
packages/X``) runs what the workspace runs: every module a member's tests import-or-skip is
installed by that member's own dependencies and ``test`` group, read from the lock. A module the
workspace itself lacks (a peer with no wheel for this platform) skips everywhere and is not
counted."""

import functools
import importlib.metadata
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_IMPORT = re.compile(r"importorskip\(\s*[\"']([A-Za-z0-9_.]+)[\"']")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock() -> dict[str, list[dict]]:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    by_name: dict[str, list[dict]] = {}
    for pkg in lock["package"]:
        by_name.setdefault(_norm(pkg["name"]), []).append(pkg)
    return by_name


def installed_by(member: str, group: str = "test") -> set[str]:
    """Distributions ``uv run --package member --group group`` installs (normalised names)."""
    lock = _lock()
    todo: list[tuple[str, tuple[str, ...]]] = [(_norm(member), ())]
    for entry in lock[_norm(member)][0].get("dev-dependencies", {}).get(group, []):
        todo.append((_norm(entry["name"]), tuple(entry.get("extra", ()))))
    seen: set[tuple[str, tuple[str, ...]]] = set()
    names: set[str] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        names.add(name)
        for pkg in lock.get(name, []):
            deps = list(pkg.get("dependencies", []))
            for extra in extras:
                deps += pkg.get("optional-dependencies", {}).get(extra, [])
            todo += [(_norm(d["name"]), tuple(d.get("extra", ()))) for d in deps]
    return names


@functools.cache
def _top_level_owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distribution_of(module: str) -> str | None:
    top = module.split(".")[0]
    dists = _top_level_owners().get(top)
    return _norm(dists[0]) if dists else None


def _members() -> list[tuple[str, Path]]:
    out = []
    for py in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        out.append((tomllib.loads(py.read_text())["project"]["name"], py.parent))
    return out


@pytest.mark.parametrize(("dist", "folder"), _members(), ids=[d for d, _ in _members()])
def test_member_test_group_installs_every_module_its_tests_import_or_skip(dist, folder):
    wanted = set()
    for test in (folder / "tests").rglob("*.py"):
        wanted |= set(SKIP_IMPORT.findall(test.read_text()))
    have = installed_by(dist)
    missing = []
    for module in sorted(wanted):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            continue  # the workspace lacks it too: it skips everywhere
        source = _distribution_of(module)
        if source is not None and source not in have:
            missing.append(f"{module} (from {source})")
    assert not missing, (
        f"{dist}'s isolated test job would skip tests for: {', '.join(missing)}; "
        f"add them to [dependency-groups] test in {folder.relative_to(ROOT)}/pyproject.toml"
    )


def test_the_lock_reader_follows_extras():
    assert "matplotlib" in installed_by("icml26-shared")  # its test group asks for [plot]
    assert "torch" not in installed_by("rsa-cp")
