"""Every member builds with `uv build --no-sources` and its wheel installs into an empty venv
with only its declared dependencies (icml26-shared coming from its own freshly built wheel),
then imports. This proves each package declares what it imports."""

import os
import shutil
import subprocess
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = os.environ.get("UV") or shutil.which("uv")


def _members() -> list[tuple[str, str, Path]]:
    """(distribution name, import name, folder) of every workspace member."""
    found = []
    for folder in [ROOT / "shared", ROOT / "tools", *sorted((ROOT / "packages").iterdir())]:
        py = folder / "pyproject.toml"
        if not py.is_file():
            continue
        meta = tomllib.loads(py.read_text())
        module = meta["tool"]["uv"]["build-backend"]["module-name"]
        found.append((meta["project"]["name"], module, folder))
    return found


def test_workspace_members_follow_the_layout():
    for dist, module, folder in _members():
        assert (folder / "README.md").is_file(), dist
        assert (folder / "src" / module / "__init__.py").is_file(), dist
        assert (folder / "src" / module / "py.typed").is_file(), dist
        meta = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
        assert meta["requires-python"] == ">=3.11", dist
        if folder.parent.name == "packages":
            assert (folder / "CHANGELOG.md").is_file(), dist
            deps = " ".join(meta["dependencies"])
            assert "icml26-shared>=0.1,<0.2" in deps, dist
            others = {d for d, _, f in _members() if f.parent.name == "packages"} - {dist}
            assert not any(
                dep.split("[")[0].split(">")[0].split("=")[0].strip() in others
                for dep in meta["dependencies"]
            ), f"{dist} depends on another method package"


def _install_and_import(dist: str, module: str, dist_dir: Path, tmp_path: Path) -> str | None:
    """Install ``dist``'s wheel into a fresh venv and import ``module``; the error, or None."""
    wheel = next(dist_dir.glob(f"{dist.replace('-', '_')}-*.whl"))
    venv = tmp_path / f"venv-{dist}"
    subprocess.run([UV, "venv", "-q", "--python", "3.11", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [
            UV,
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            "--find-links",
            str(dist_dir),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        return f"{dist}: {install.stderr[-2000:]}"
    run = subprocess.run(
        [str(python), "-c", f"import {module}; print({module}.__all__)"],
        capture_output=True,
        text=True,
    )
    return None if run.returncode == 0 else f"{dist}: {run.stderr[-2000:]}"


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_every_member_builds_and_imports_from_its_wheel(tmp_path):
    dist_dir = tmp_path / "dist"
    members = _members()
    # one build call for the whole workspace (each member still gets its own isolated build)
    subprocess.run(
        [UV, "build", "--all-packages", "--no-sources", "--wheel", "-q", "-o", str(dist_dir)],
        cwd=ROOT,
        check=True,
    )
    built = {w.name.split("-")[0] for w in dist_dir.glob("*.whl")}
    assert built == {d.replace("-", "_") for d, _, _ in members}, built
    # the venvs are independent: install and import two at a time
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = pool.map(lambda m: _install_and_import(m[0], m[1], dist_dir, tmp_path), members)
        failures = [e for e in errors if e]
    assert not failures, "\n".join(failures)
