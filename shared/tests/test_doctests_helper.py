"""The shared doctest helper finds modules with examples and reports failing ones."""

import sys

from icml26_shared.doctests import modules_with_examples, run_examples


def test_finds_runs_and_catches_failures(tmp_path, monkeypatch):
    pkg = tmp_path / "docpkg_tmp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text('"""\n>>> 1 + 1\n3\n"""\n')
    (pkg / "good.py").write_text(
        'def f():\n    """\n    >>> f()\n    [1, 2, ..., 9]\n    """\n    return list(range(1, 10))\n'
    )
    (pkg / "bad.py").write_text('def g():\n    """\n    >>> g()\n    2\n    """\n    return 1\n')
    (pkg / "plain.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert modules_with_examples("docpkg_tmp") == ["docpkg_tmp.bad", "docpkg_tmp.good"]
        good = run_examples("docpkg_tmp.good")
        assert good.attempted == 1 and good.failed == 0
        bad = run_examples("docpkg_tmp.bad")
        assert bad.attempted == 1 and bad.failed == 1
    finally:
        for name in [m for m in sys.modules if m.startswith("docpkg_tmp")]:
            del sys.modules[name]
