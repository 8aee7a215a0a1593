"""House conventions that are cheap to check: the version comes from the installed metadata
and the benchmark script imports only public names of the package."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
from pathlib import Path

import bittokens

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def test_version_is_the_installed_distribution_version():
    assert bittokens.__version__ == importlib.metadata.version("bittokens")


def test_benchmark_imports_only_public_names():
    tree = ast.parse(BENCH.read_text())
    seen = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bittokens"):
            assert not any(part.startswith("_") for part in node.module.split(".")), node.module
            for alias in node.names:
                assert not alias.name.startswith("_"), f"{node.module}.{alias.name}"
                mod = importlib.import_module(node.module)
                public = getattr(mod, "__all__", None)
                assert public is not None and alias.name in public, f"{node.module}.{alias.name}"
                seen.append(alias.name)
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert not any(p.startswith("_") for p in alias.name.split(".")), alias.name
    assert {"encode", "decode", "fit", "TinyGPT"} <= set(seen)
    assert "icml26_shared.bench" in BENCH.read_text()
