"""Every member builds with `uv build --no-sources` and its wheel installs into an empty venv
with only its declared dependencies (icml26-shared coming from its own freshly built wheel),
then imports. This proves each package declares what it imports.

Then, as a pip user would: each method package's wheel is installed alone into a fresh venv
with the extras its README's install block names, and the README's first example runs there
from an empty cache and home, within 60 CPU-seconds; where the README names a backend the
default path takes, that path is checked too."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# Minutes of building and installing: `.ci/run` runs these after the default suite
# (`uv run pytest -m wheels`); the parsers below stay in the default suite.
wheels = pytest.mark.wheels

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


def _fresh_venv(venv: Path, target: str, dist_dir: Path) -> tuple[Path, str | None]:
    """A new Python 3.11 venv at ``venv`` with ``target`` installed from ``dist_dir``'s wheels
    (and PyPI); its python and the install error, or None."""
    subprocess.run([UV, "venv", "-q", "--python", "3.11", str(venv)], check=True)
    python = venv / "bin" / "python"
    cmd = [UV, "pip", "install", "-q", "--python", str(python), "--find-links", str(dist_dir)]
    install = subprocess.run([*cmd, target], capture_output=True, text=True)
    return python, (install.stderr[-2000:] if install.returncode != 0 else None)


def _install_and_import(dist: str, module: str, dist_dir: Path, tmp_path: Path) -> str | None:
    """Install ``dist``'s wheel into a fresh venv and import ``module``; the error, or None."""
    wheel = next(dist_dir.glob(f"{dist.replace('-', '_')}-*.whl"))
    python, error = _fresh_venv(tmp_path / f"venv-{dist}", str(wheel), dist_dir)
    if error:
        return f"{dist}: {error}"
    run = subprocess.run(
        [str(python), "-c", f"import {module}; print({module}.__all__)"],
        capture_output=True,
        text=True,
    )
    return None if run.returncode == 0 else f"{dist}: {run.stderr[-2000:]}"


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory) -> Path:
    """Every member's wheel, built once for this module (each in its own isolated build)."""
    if UV is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [UV, "build", "--all-packages", "--no-sources", "--wheel", "-q", "-o", str(out)],
        cwd=ROOT,
        check=True,
    )
    return out


@wheels
def test_every_member_builds_and_imports_from_its_wheel(dist_dir, tmp_path):
    members = _members()
    built = {w.name.split("-")[0] for w in dist_dir.glob("*.whl")}
    assert built == {d.replace("-", "_") for d, _, _ in members}, built
    # the venvs are independent: install and import two at a time
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = pool.map(lambda m: _install_and_import(m[0], m[1], dist_dir, tmp_path), members)
        failures = [e for e in errors if e]
    assert not failures, "\n".join(failures)


@wheels
def test_every_wheel_ships_the_licence_and_its_project_urls(dist_dir):
    licence = (ROOT / "LICENSE").read_text()
    for dist, _, folder in _members():
        assert (folder / "LICENSE").read_text() == licence, (
            f"{folder}/LICENSE differs from the root's"
        )
        wheel = next(dist_dir.glob(f"{dist.replace('-', '_')}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            shipped = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
            assert shipped, f"{wheel.name} ships no LICENSE"
            assert z.read(shipped[0]).decode() == licence
            meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "License-Expression: MIT" in meta, dist
        urls = dict(re.findall(r"^Project-URL: ([^,]+), (\S+)$", meta, re.M))
        assert {"Repository", "Documentation"} <= set(urls), (dist, urls)
        if (folder / "CHANGELOG.md").is_file():
            assert urls.get("Changelog", "").endswith(f"{folder.relative_to(ROOT)}/CHANGELOG.md")


def test_package_readmes_link_by_absolute_address():
    """A README is also the PyPI page: a relative link there leads nowhere."""
    for readme in sorted((ROOT / "packages").glob("*/README.md")):
        text = re.sub(r"```.*?```", "", readme.read_text(), flags=re.S)  # code is not a link
        relative = [
            t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"https?:|#|mailto:", t)
        ]
        assert not relative, f"{readme.relative_to(ROOT)} links relatively: {relative}"


# What each README's first example must have used, checked in the same venv after it ran: the
# backend the README says the default path takes.
BACKEND_CHECKS = {
    "dxpp": (
        "import dxpp, proxsuite\n"
        "sol = dxpp.solve_qp(*dxpp.random_dense_qp(20, seed=0))\n"
        "assert sol.solver == 'proxqp', sol.solver\n"
    ),
}
EXAMPLE_CPU_SECONDS = 60.0

# Runs the example and reports its CPU seconds (this process's threads and any children).
_RUNNER = """
import json, resource, runpy, sys
runpy.run_path(sys.argv[1], run_name="__main__")
cpu = 0.0
for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
    r = resource.getrusage(who)
    cpu += r.ru_utime + r.ru_stime
open(sys.argv[2], "w").write(json.dumps({"cpu_s": cpu}))
"""


def readme_install_extras(readme: str, dist: str) -> list[str]:
    """The extras named in the README's first code block that holds ``pip install``."""
    for block in re.findall(r"```[^\n]*\n(.*?)```", readme, flags=re.S):
        if "pip install" in block:
            found = re.findall(rf"{re.escape(dist)}\[([^\]]+)\]", block)
            return sorted({e.strip() for group in found for e in group.split(",")})
    return []


def readme_first_example(readme: str) -> str | None:
    """The README's first ``python`` code block."""
    m = re.search(r"```python\n(.*?)```", readme, flags=re.S)
    return m.group(1) if m else None


def test_readme_parsers_read_the_install_block_and_the_first_example():
    text = "x\n```\npip install a\npip install 'a[torch]'\npip install a[jax, plot]\n```\n"
    text += "```python\nprint(1)\n```\n```python\nprint(2)\n```\n"
    assert readme_install_extras(text, "a") == ["jax", "plot", "torch"]
    assert readme_first_example(text) == "print(1)\n"


def _run_first_example(dist: str, folder: Path, dist_dir: Path, tmp_path: Path) -> str | None:
    """Install ``dist`` with its README's extras into a fresh venv, run the first example
    there from an empty home and cache; the failure, or None."""
    readme = (folder / "README.md").read_text()
    example = readme_first_example(readme)
    if example is None:
        return f"{dist}: the README has no ```python example"
    extras = readme_install_extras(readme, dist)
    wheel = next(dist_dir.glob(f"{dist.replace('-', '_')}-*.whl"))
    work = tmp_path / dist
    home = work / "home"
    home.mkdir(parents=True)
    target = f"{dist}[{','.join(extras)}] @ {wheel.as_uri()}" if extras else str(wheel)
    python, error = _fresh_venv(work / "venv", target, dist_dir)
    if error:
        return f"{dist}: install of {target} failed: {error}"
    (work / "example.py").write_text(example + "\n" + BACKEND_CHECKS.get(dist, ""))
    (work / "runner.py").write_text(_RUNNER)
    env = {
        "PATH": f"{python.parent}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MPLBACKEND": "Agg",
        **{k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")},
    }
    run = subprocess.run(
        [str(python), "runner.py", "example.py", "cpu.json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode != 0:
        return f"{dist}: the README's first example failed:\n{run.stderr[-3000:]}"
    cpu = json.loads((work / "cpu.json").read_text())["cpu_s"]
    print(f"{dist}: first example {cpu:.1f} CPU-s (extras {extras})", file=sys.stderr)
    if cpu > EXAMPLE_CPU_SECONDS:
        return (
            f"{dist}: the README's first example took {cpu:.0f} CPU-s (> {EXAMPLE_CPU_SECONDS:.0f})"
        )
    return None


@wheels
def test_readme_first_examples_run_from_the_wheels(dist_dir, tmp_path):
    """One example at a time, as a user runs one: two at once would share the cores, and
    torch's or XLA's spinning thread pools would then bill CPU time that no user pays."""
    packages = [(d, f) for d, _, f in _members() if f.parent.name == "packages"]
    errors = [_run_first_example(d, f, dist_dir, tmp_path) for d, f in packages]
    failures = [e for e in errors if e]
    assert not failures, "\n\n".join(failures)
