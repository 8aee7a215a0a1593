"""The ``icml26`` command line (never published): list, reproduce, bench and report."""

from importlib.metadata import version as _version

from .cli import discover as discover
from .cli import find_repo_root as find_repo_root
from .cli import main as main
from .readme import update_readme as update_readme
from .report import collect_results as collect_results
from .report import write_report as write_report

__all__ = ["collect_results", "discover", "find_repo_root", "main", "update_readme", "write_report"]
__version__ = _version("icml26-tools")
