"""The built documentation site, read as a visitor reads it: no raw reST roles, doctests only in
code blocks, every image and internal link resolving, a figure on every package page."""

import html
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
RAW_ROLE = re.compile(r":(math|class|func|meth|mod|attr|data|obj|exc):`")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    mkdocs = shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed")
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [mkdocs, "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def _pages(site: Path) -> list[Path]:
    return [p for p in sorted(site.rglob("*.html")) if p.name != "404.html"]


def _outside_code(text: str) -> str:
    text = re.sub(r"<pre\b.*?</pre>", "", text, flags=re.S)
    return re.sub(r"<code\b.*?</code>", "", text, flags=re.S)


def _target(page: Path, site: Path, ref: str) -> Path | None:
    """The file a relative ``href``/``src`` of ``page`` points to (None: external)."""
    parsed = urlparse(ref)
    if parsed.scheme or parsed.netloc or ref.startswith(("mailto:", "javascript:")):
        return None
    path = unquote(parsed.path)
    if not path:
        return page  # an anchor on the same page
    base = site if path.startswith("/") else page.parent
    target = (base / path.lstrip("/")).resolve()
    return target / "index.html" if target.is_dir() or path.endswith("/") else target


def test_no_raw_rest_roles_or_loose_doctests(site):
    bad = []
    for page in _pages(site):
        text = _outside_code(page.read_text())
        visible = html.unescape(re.sub(r"<[^>]+>", "", text))
        if RAW_ROLE.search(visible):
            bad.append(f"{page.relative_to(site)}: {RAW_ROLE.search(visible).group(0)}")
        if ">>>" in visible:
            bad.append(f"{page.relative_to(site)}: >>> outside a code block")
    assert not bad, "\n".join(bad)


def test_every_image_and_internal_link_resolves(site):
    bad = []
    for page in _pages(site):
        text = page.read_text()
        for src in re.findall(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", text):
            target = _target(page, site, html.unescape(src))
            if target is None or not target.is_file():
                bad.append(f"{page.relative_to(site)}: image {src}")
        for href in re.findall(r"<a\b[^>]*\bhref=\"([^\"]+)\"", text):
            target = _target(page, site, html.unescape(href))
            if target is not None and not target.exists():
                bad.append(f"{page.relative_to(site)}: link {href}")
    assert not bad, "\n".join(bad[:40])


def test_every_package_page_shows_a_figure_and_its_api(site):
    names = sorted(p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml"))
    for name in names:
        page = (site / "packages" / name / "index.html").read_text()
        assert re.search(r"<img\b[^>]*src=\"[^\"]+\.png\"", page), f"{name}: no figure"
        assert 'class="doc doc-' in page, f"{name}: no API reference"
    assert (site / "getting-started" / "index.html").is_file()
    assert (site / "notebooks" / "index.html").is_file()
