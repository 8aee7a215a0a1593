"""One package's headline experiment in its own process (used by ``icml26 reproduce
--jobs``): ``python -m icml26_tools.worker NAME [--quick] [--out reports]``.

Prints the result's table to stdout and exits 0 when the experiment ran (its checks are read
from ``result.json`` by the parent), 2 when it raised (traceback on stderr and in
``<out>/<NAME>/error.txt``).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m icml26_tools.worker")
    ap.add_argument("name")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="reports")
    a = ap.parse_args(argv)
    from .cli import _select

    ep = _select([a.name])[a.name]
    out = Path(a.out) / a.name
    try:
        result = ep.load().run(quick=a.quick, out_dir=out, progress=False)
    except Exception:
        tb = traceback.format_exc()
        out.mkdir(parents=True, exist_ok=True)
        (out / "error.txt").write_text(tb)
        print(tb, file=sys.stderr)
        return 2
    print(result.to_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
