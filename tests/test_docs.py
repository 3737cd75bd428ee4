"""The docs site (`make docs`): it builds offline, every notebook and module has a page, the README is the home page, every
internal link and image resolves, and no page loads anything from the web."""
import re, subprocess, sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_docs  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out, stage = tmp_path_factory.mktemp("site"), tmp_path_factory.mktemp("stage") / "docs"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_docs.py"), "--out", str(out), "--stage", str(stage)],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    return out


class _Refs(HTMLParser):
    "href/src of a page (a, link, img, script), and whether a stylesheet or script comes from the web."
    def __init__(self):
        super().__init__(); self.refs, self.remote = [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("href", "src"):
            v = a.get(k)
            if not v: continue
            self.refs.append(v)
            if re.match(r"(https?:)?//", v) and (tag == "script" or tag == "img" or (tag == "link" and "stylesheet" in (a.get("rel") or ""))):
                self.remote.append(v)


def test_every_notebook_and_module_has_a_page(site):
    for nb in build_docs.notebooks():
        page = site / nb.relative_to(ROOT).with_suffix(".html")
        assert page.exists(), f"no page for {nb.relative_to(ROOT)}"
        html = page.read_text(encoding="utf-8")
        assert "jp-Notebook" in html or "jupyter-wrapper" in html, f"{page.name} is not a rendered notebook"
    for m in build_docs.modules():
        page = site / "api" / f"{m}.html"
        assert page.exists() and f"finrag.{m}" in page.read_text(encoding="utf-8"), f"no API page for finrag.{m}"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "The two commands" in home                                # the README is the home page
    for page in ("workshop", "stack", "data", "references", "design"): assert (site / "docs" / f"{page}.html").exists()


def test_api_reference_comes_from_docstrings(site):
    html = (site / "api" / "config.html").read_text(encoding="utf-8")
    assert "get_settings" in html and "re-read when" in html          # get_settings' docstring


def test_internal_links_resolve_and_nothing_loads_from_the_web(site):
    broken, remote, n = [], [], 0
    for page in site.rglob("*.html"):
        p = _Refs(); p.feed(page.read_text(encoding="utf-8"))
        remote += [f"{page.relative_to(site)}: {r}" for r in p.remote]
        for ref in p.refs:
            u = urlsplit(ref)
            if u.scheme or ref.startswith(("//", "#")) or not u.path: continue
            n += 1
            base = site if u.path.startswith("/") else page.parent      # 404.html links from the site root
            target = (base / unquote(u.path).lstrip("/")).resolve()
            if target.is_dir(): target = target / "index.html"
            if not target.exists(): broken.append(f"{page.relative_to(site)} -> {ref}")
    assert n > 500, n
    assert broken == [], f"{len(broken)} broken internal links: {broken[:20]}"
    assert remote == [], f"pages load from the web: {remote[:10]}"
