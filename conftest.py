"""Root pytest hooks shared by the whole workspace.

Notebooks under notebooks/ are executed through nbmake when the plugin is installed (the root
`dev` group has it); a member's isolated test run (`uv run --package X --group test pytest
packages/X`) does not need it.
"""

import importlib.util


def pytest_configure(config):
    if importlib.util.find_spec("nbmake") is not None and hasattr(config.option, "nbmake"):
        config.option.nbmake = True
