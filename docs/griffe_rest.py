"""Griffe extension for the docs site: the packages' docstrings use a few reST habits that the
Google-style Markdown renderer does not read. Before rendering, each docstring is rewritten:

* ``:math:`x``` becomes ``$x$`` and a ``.. math::`` block ``$$ ... $$`` (rendered by
  ``pymdownx.arithmatex``);
* ``:class:`~pkg.Name``` (and ``:func:``, ``:meth:``, ``:mod:``, ``:attr:``, ``:data:``,
  ``:obj:``, ``:exc:``, ``:const:``) becomes a cross-reference ``[`Name`][pkg.Name]`` when the
  target is a public object of our packages, else the name as code;
* a section headed ``Example:`` is read as ``Examples:`` (its doctests become code);
* a doctest block (``>>>`` lines and their output) in the running text becomes a code block;
* a paragraph ending in ``::`` (a reST literal block) ends in ``:``.

Loaded by mkdocstrings (``extensions: [docs/griffe_rest.py]`` in ``mkdocs.yml``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|attr|data|obj|exc|const):`(~?)([^`]+)`")
MATH = re.compile(r":math:`([^`]+)`")
OURS = (
    "icml26_shared",
    "arm_ebm",
    "bittokens",
    "brain_attrib",
    "collab_cp",
    "costly_cp",
    "dlpt",
    "dxpp",
    "geomem",
    "gse_flow",
    "metastreet",
    "perturbedvae",
    "r4_rl",
    "rep_unlearn",
    "rsa_cp",
    "shnap",
    "up_ocp",
)


def _public_path(obj: griffe.Object, name: str) -> str | None:
    """The public dotted path the site renders for ``name`` seen from ``obj``, or None."""
    name = name.removesuffix("()")
    candidates = [name]
    try:
        candidates.append(obj.resolve(name.split(".")[0]) + name[len(name.split(".")[0]) :])
    except Exception:
        pass
    top = obj.package.path
    for path in candidates:
        root = path.split(".")[0]
        if root not in OURS:
            continue
        try:
            found = obj.modules_collection[path]
            if found.is_alias:  # a re-export: only link what this package itself renders
                found = found.final_target
            if found.package.name != root or found.is_attribute:
                return None  # another package's object, or a constant (rendered without anchor)
        except Exception:
            continue
        if any(part.startswith("_") for part in path.split(".")):
            # a private module's object: link its public re-export from the top level
            short = path.split(".")[-1]
            pkg = obj.modules_collection[root]
            if short.startswith("_") or short not in pkg.members:
                return None
            return f"{root}.{short}"
        return path
    # an unqualified name re-exported by this package's top level
    if "." not in name and name in obj.package.members and not name.startswith("_"):
        return f"{top}.{name}"
    return None


def _role(obj: griffe.Object, match: re.Match[str]) -> str:
    _kind, tilde, target = match.groups()
    shown = target.removesuffix("()").split(".")[-1] if tilde else target.removesuffix("()")
    path = _public_path(obj, target)
    return f"[`{shown}`][{path}]" if path else f"`{shown}`"


def _fence_doctests(lines: list[str]) -> list[str]:
    """Wrap each run of ``>>>`` lines at column 0 (with their output, up to a blank line) in a
    ``pycon`` code fence."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon", *block, "```"]
            continue
        out.append(lines[i])
        i += 1
    return out


def _math_blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == ".. math::":
            indent = line[: len(line) - len(line.lstrip())]
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(indent + " ")):
                body.append(lines[i].strip())
                i += 1
            while body and not body[-1]:
                body.pop()
            out += [f"{indent}$$", *(f"{indent}{b}" for b in body if b), f"{indent}$$", ""]
            continue
        out.append(line)
        i += 1
    return out


def rewrite(text: str, obj: griffe.Object) -> str:
    """The docstring ``text`` of ``obj`` in the Markdown the site renders."""
    lines = _math_blocks(text.splitlines())
    lines = [re.sub(r"^(\s*)Example::?\s*$", r"\1Examples:", ln) for ln in lines]
    lines = _fence_doctests(lines)
    lines = [re.sub(r"(\S)::$", r"\1:", ln) for ln in lines]
    out = "\n".join(lines)
    out = MATH.sub(lambda m: f"${m.group(1).strip()}$", out)
    return ROLE.sub(lambda m: _role(obj, m), out)


class ReSTToMarkdown(griffe.Extension):
    """Rewrite every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj.docstring.value, obj)
            stack += [m for m in obj.members.values() if not m.is_alias]
