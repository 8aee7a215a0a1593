"""MkDocs hook: regenerate the package pages before every build (see icml26_tools.docs)."""

from pathlib import Path

from icml26_tools.docs import generate


def on_pre_build(config, **kwargs):
    generate(Path(config["config_file_path"]).parent, Path(config["docs_dir"]))
