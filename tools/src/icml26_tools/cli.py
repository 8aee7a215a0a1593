"""The ``icml26`` command line: list, reproduce, bench and report across packages.

Packages are found through the entry-point group ``icml26.experiments``: every method package
registers its :class:`icml26_shared.experiment.Experiment` there, so adding a package needs no
edit here.

    icml26 list
    icml26 reproduce [PKG ...] [--quick] [--set KEY=VALUE] [--record] [--out reports] [--jobs N]
                     [--timeout S]
    icml26 bench [PKG ...] [--quick] [--out reports]
    icml26 report [--out reports] [--readme [README.md]] [--docs [--record]]

``icml26 list`` reads only metadata (no package is imported, so neither torch nor jax is).
``icml26 reproduce`` exits 1 when an experiment raises *or* any of its checks fails, and names
them. ``icml26 report --readme`` rewrites the repository README's first line (how many methods
exist) and its package table from ``reports/*/result.json`` (see :mod:`icml26_tools.readme`);
``icml26 report --docs`` writes the docs site's pages and every package README's results block
from the runs recorded under ``packages/<name>/docs/`` (``--record`` first records the newer
runs of ``reports/``; see :mod:`icml26_tools.docs`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from icml26_shared.experiment import Experiment, ExperimentResult

from .parallel import Outcome, cores, run_parallel
from .readme import update_readme
from .report import write_report

__all__ = ["discover", "find_repo_root", "main"]

GROUP = "icml26.experiments"


def discover() -> dict[str, metadata.EntryPoint]:
    """Entry points of the group ``icml26.experiments``, keyed by package name, sorted."""
    eps = metadata.entry_points(group=GROUP)
    return {ep.name: ep for ep in sorted(eps, key=lambda e: e.name)}


def _select(requested: Sequence[str]) -> dict[str, metadata.EntryPoint]:
    found = discover()
    if not requested:
        return found
    unknown = [p for p in requested if p not in found]
    if unknown:
        known = ", ".join(found) or "none installed"
        raise SystemExit(f"icml26: unknown package(s) {', '.join(unknown)}; known: {known}")
    return {p: found[p] for p in requested}


def find_repo_root(start: Path | None = None) -> Path | None:
    """The nearest folder above ``start`` (default: cwd) whose pyproject declares the workspace."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        py = folder / "pyproject.toml"
        if py.is_file() and "[tool.uv.workspace]" in py.read_text():
            return folder
    return None


def _version(ep: metadata.EntryPoint) -> str:
    try:
        return metadata.version(ep.dist.name) if ep.dist else "?"
    except metadata.PackageNotFoundError:
        return "?"


def _summary(ep: metadata.EntryPoint) -> str:
    try:
        return (ep.dist.metadata["Summary"] or "") if ep.dist else ""
    except (KeyError, metadata.PackageNotFoundError):  # pragma: no cover - broken metadata
        return ""


def cmd_list(args: argparse.Namespace) -> int:
    # Metadata only: loading the entry points would import every package (and torch, jax).
    out = Path(args.out)
    rows = []
    for name, ep in discover().items():
        result = out / name / "result.json"
        status = "not run"
        if result.is_file():
            data = json.loads(result.read_text())
            status = ("pass" if data.get("passed") else "FAIL") + (
                " (quick)" if data.get("quick") else ""
            )
        rows.append((name, _version(ep), status, _summary(ep)))
    if not rows:
        print("no icml26 packages installed")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    return 0


def _finish(
    out: Path, results: dict[str, ExperimentResult], errors: dict[str, str], total: float
) -> int:
    report = write_report(out, results=results, errors=errors)
    print(f"\nreport written to {report}")
    failed = {n: r for n, r in results.items() if not r.passed}
    for name, r in failed.items():
        bad = [k for k, ok in r.checks.items() if not ok] or ["no check was recorded"]
        print(f"{name}: checks failing: " + "; ".join(bad))
    if failed:
        print(f"checks failing in: {', '.join(failed)} (see the report)")
    if errors:
        print(f"experiments that raised or timed out: {', '.join(errors)}")
    n_ok = sum(sum(r.checks.values()) for r in results.values())
    n_all = sum(len(r.checks) for r in results.values())
    print(
        f"total {total:.0f} s wall for {len(results) + len(errors)} package(s); "
        f"{n_ok}/{n_all} checks pass"
    )
    return 1 if errors or failed else 0


def _progress_line(name: str, seconds: float, result: ExperimentResult | None) -> str:
    if result is None:
        return f"[{name}] ERROR after {seconds:.1f} s"
    n_ok = sum(result.checks.values())
    return f"[{name}] done in {seconds:.1f} s, {n_ok}/{len(result.checks)} checks pass"


def cmd_reproduce(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    selected = _select(args.packages)
    jobs = args.jobs if args.jobs is not None else cores()
    if jobs < 1:
        raise SystemExit(f"icml26 reproduce: --jobs must be >= 1, got {jobs}")
    if args.timeout is not None and args.timeout <= 0:
        raise SystemExit(f"icml26 reproduce: --timeout must be > 0 seconds, got {args.timeout}")
    if args.set and len(selected) != 1:
        raise SystemExit("icml26 reproduce: --set changes one package's config; name that package")
    if args.set and args.record:
        raise SystemExit("icml26 reproduce: --record keeps runs of the presets only, not --set")
    if args.set:
        (ep,) = selected.values()
        try:
            ep.load().config(quick=args.quick, overrides=args.set)
        except (TypeError, ValueError) as exc:
            raise SystemExit(f"icml26 reproduce: {exc}") from None
    t0 = time.perf_counter()
    if jobs == 1 or len(selected) == 1:
        results, errors = _reproduce_serial(selected, args, out)
    else:
        results, errors = _reproduce_parallel(list(selected), args, out, jobs)
    code = _finish(out, results, errors, time.perf_counter() - t0)
    if args.record:
        record(out)
    return code


def record(out: Path) -> None:
    """Record the runs of ``out`` as the packages' ``docs/<mode>_result.json`` (where newer),
    then regenerate everything generated from the records: the site's pages, each package
    README's results block and the repository README's table."""
    root = find_repo_root()
    if root is None:
        raise SystemExit("icml26 reproduce --record: run it inside the icml26 repository")
    from .docs import generate, record_results, update_package_readmes

    for path in record_results(root, out):
        print(f"recorded {path.relative_to(root)}")
    generate(root)
    for path in update_package_readmes(root):
        print(f"results block rewritten in {path.relative_to(root)}")
    update_readme(root / "README.md", root)
    print("README.md: package table rewritten from the records")


def _reproduce_serial(
    selected: dict[str, metadata.EntryPoint], args: argparse.Namespace, out: Path
) -> tuple[dict[str, ExperimentResult], dict[str, str]]:
    from tqdm.auto import tqdm

    results: dict[str, ExperimentResult] = {}
    errors: dict[str, str] = {}
    bar = tqdm(selected.items(), desc="icml26 reproduce", unit="pkg", file=sys.stderr)
    for name, ep in bar:
        bar.set_postfix_str(name)
        start = time.perf_counter()
        try:
            experiment: Experiment = ep.load()
            result = experiment.run(
                quick=args.quick,
                out_dir=out / name,
                progress=False if args.no_progress else None,
                overrides=args.set,
            )
            results[name] = result
            tqdm.write(result.to_text(), file=sys.stdout)
            tqdm.write(_progress_line(name, time.perf_counter() - start, result))
        except Exception:
            errors[name] = traceback.format_exc()
            (out / name).mkdir(parents=True, exist_ok=True)
            (out / name / "error.txt").write_text(errors[name])
            tqdm.write(f"{name}: ERROR after {time.perf_counter() - start:.1f} s\n{errors[name]}")
    return results, errors


def _reproduce_parallel(
    names: list[str], args: argparse.Namespace, out: Path, jobs: int
) -> tuple[dict[str, ExperimentResult], dict[str, str]]:
    results: dict[str, ExperimentResult] = {}
    errors: dict[str, str] = {}
    threads = max(1, cores() // jobs)
    print(
        f"icml26 reproduce: {len(names)} packages, {jobs} at a time, {threads} thread(s) each",
        flush=True,
    )

    def on_done(o: Outcome) -> None:
        result = None
        if o.code == 0:
            try:
                result = ExperimentResult.from_json((out / o.name / "result.json").read_text())
            except (OSError, ValueError) as exc:
                o.error = f"no readable result.json: {exc}"
        if result is None:
            errors[o.name] = o.error or o.stderr or "failed"
            (out / o.name).mkdir(parents=True, exist_ok=True)
            (out / o.name / "error.txt").write_text(errors[o.name])
            print(f"{_progress_line(o.name, o.seconds, None)}\n{errors[o.name]}", flush=True)
            return
        results[o.name] = result
        print(o.stdout.rstrip(), flush=True)
        print(_progress_line(o.name, o.seconds, result), flush=True)

    run_parallel(names, jobs=jobs, quick=args.quick, out=out, timeout=args.timeout, on_done=on_done)
    return results, errors


def cmd_bench(args: argparse.Namespace) -> int:
    root = find_repo_root()
    if root is None:
        raise SystemExit(
            "icml26 bench: run it inside the icml26 repository (benchmarks are not installed)"
        )
    out = Path(args.out) / "bench"
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in _select(args.packages):
        script = root / "packages" / name / "benchmarks" / "run.py"
        if not script.is_file():
            print(f"{name}: no benchmarks/run.py, skipped")
            continue
        cmd = [sys.executable, str(script), "--out", str(out / f"{name}.json")]
        if args.quick:
            cmd.append("--quick")
        print(f"== {name}: {' '.join(cmd)}", flush=True)
        code = subprocess.call(cmd, cwd=root)
        if code != 0:
            print(f"{name}: benchmark exited with {code}")
            status = 1
    return status


def cmd_report(args: argparse.Namespace) -> int:
    path = write_report(Path(args.out))
    print(f"report written to {path}")
    if args.docs:
        root = find_repo_root()
        if root is None:
            raise SystemExit("icml26 report --docs: run it inside the icml26 repository")
        from .docs import generate, record_results, update_package_readmes

        if args.record:
            for path in record_results(root, Path(args.out)):
                print(f"recorded {path.relative_to(root)}")
        pages = generate(root)
        print(f"docs: {len(pages)} pages written under {root / 'docs'}")
        for path in update_package_readmes(root):
            print(f"results block rewritten in {path.relative_to(root)}")
    if args.readme is not None:
        readme = Path(args.readme)
        root = find_repo_root(readme.resolve().parent) or readme.resolve().parent
        text = update_readme(readme, root)
        print(f"{readme}: {text.partition(chr(10))[0]!r}; package table rewritten")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icml26", description=(__doc__ or "icml26").splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="installed packages, versions, last check status")
    p.add_argument("--out", default="reports", help="where earlier results live")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("reproduce", help="run headline experiments and write REPORT.md")
    p.add_argument("packages", nargs="*", help="package names (default: all)")
    p.add_argument("--quick", action="store_true", help="reduced sizes (minutes on 2 cores)")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--no-progress", action="store_true", help="hide the packages' progress bars")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field of the one named package's config (repeatable; "
        "`python -m <pkg> reproduce --show-config` lists the fields)",
    )
    p.add_argument(
        "--record",
        action="store_true",
        help="record each run as packages/<pkg>/docs/<mode>_result.json (where newer) and "
        "regenerate the README table, the package READMEs' results blocks and the site's pages",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        help="packages run at once, each in its own process with its share of the cores' "
        "threads, longest first (default: the number of cores; 1 runs them in this process)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds after which a package's worker is stopped and reported (--jobs > 1)",
    )
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("bench", help="run packages/<pkg>/benchmarks/run.py side by side with peers")
    p.add_argument("packages", nargs="*", help="package names (default: all)")
    p.add_argument("--quick", action="store_true", help="reduced sizes")
    p.add_argument("--out", default="reports", help="JSON goes to <out>/bench/<pkg>.json")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("report", help="rebuild REPORT.md from the saved result.json files")
    p.add_argument("--out", default="reports")
    p.add_argument(
        "--readme",
        nargs="?",
        const="README.md",
        default=None,
        help="also rewrite this README's first line and package table (default README.md)",
    )
    p.add_argument(
        "--docs",
        action="store_true",
        help="also write the docs site's pages (docs/index.md, docs/packages/*.md) and each "
        "package README's results block, all from the packages' docs/*result.json",
    )
    p.add_argument(
        "--record",
        action="store_true",
        help="with --docs: first copy each reports/<pkg>/result.json that is newer than the "
        "package's recorded run into packages/<pkg>/docs/<mode>_result.json",
    )
    p.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
