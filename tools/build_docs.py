"""Build the offline documentation site (`make docs`): README as the home page, docs/*.md, one page per notebook
(prose, code and the outputs committed in it) and an API reference from the docstrings.

    python tools/build_docs.py [--out site] [--stage _build/docs]

Stages everything under `--stage` (README.md → index.md, docs/, nbs/, figures/, results/, generated api/*.md), writes
`_build/mkdocs.yml` = the repository's mkdocs.yml + docs_dir/site_dir + a navigation built from the files, and runs
`mkdocs build --strict`, so a broken internal link or a page missing from the navigation fails the build.
No network at build or read time: the theme's fonts are off and no page loads a script or style from the web.
"""
from __future__ import annotations
import argparse, json, os, re, shutil, subprocess, sys
from pathlib import Path
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOC_ORDER = ["workshop", "stack", "design", "references", "data", "style"]   # docs/*.md in this order, others after


def notebooks() -> list[Path]:
    "Every notebook of nbs/ (library lessons and experiments), as the tests see them: no `_` files, no checkpoints."
    nbs = ROOT / "nbs"
    return sorted(p for p in nbs.rglob("*.ipynb")
                  if not p.name.startswith("_") and ".ipynb_checkpoints" not in p.parts)


def nb_title(nb: dict, default: str) -> str:
    "The first markdown `# Title` of a notebook."
    for c in nb["cells"]:
        if c["cell_type"] != "markdown": continue
        m = re.search(r"^#\s+(.+)$", "".join(c["source"]), re.M)
        if m: return m.group(1).strip()
    return default


_DIRECTIVE = re.compile(r"^\s*#\s*\|.*$\n?", re.M)


def reader_copy(src: Path, dst: Path) -> str:
    "Write a copy of notebook `src` for the web: drop `#| hide` cells and the `default_exp` cell, strip `#|` lines. Returns its title."
    nb = json.loads(src.read_text(encoding="utf-8"))
    cells = []
    for c in nb["cells"]:
        s = "".join(c["source"])
        if c["cell_type"] == "code":
            if re.search(r"^\s*#\s*\|\s*(hide|default_exp)\b", s, re.M): continue
            s = _DIRECTIVE.sub("", s)
            if not s.strip() and not c.get("outputs"): continue
        c["source"] = s
        cells.append(c)
    nb["cells"] = cells
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return nb_title(nb, src.stem)


def modules() -> list[str]:
    "Public modules and subpackages of the package, dotted below `finrag` (`core`, `graphrag`, `graphrag.rag`): no `_` names."
    lib, out = ROOT / "finrag", []
    for p in lib.rglob("*.py"):
        parts = p.relative_to(lib).with_suffix("").parts
        if parts[-1] == "__init__": parts = parts[:-1]              # a subpackage: its __init__.py
        if parts and not any(x.startswith("_") for x in parts): out.append(".".join(parts))
    return sorted(out)


def module_notebook(mod: str) -> Path | None:
    "The notebook whose `#| default_exp` is `mod` (a subpackage's: `mod.__init__`)."
    for p in (ROOT / "nbs").glob("*.ipynb"):
        if re.search(rf"default_exp\s+{re.escape(mod)}(\.__init__)?(?![\w.])", p.read_text(encoding="utf-8")): return p
    return None


def stage(dst: Path) -> list:
    "Copy the sources into `dst` and return the mkdocs navigation."
    if dst.exists(): shutil.rmtree(dst)
    dst.mkdir(parents=True)
    shutil.copy(ROOT / "README.md", dst / "index.md")
    shutil.copy(ROOT / "LICENSE", dst / "LICENSE")
    for d in ("figures", "results"):
        if (ROOT / d).is_dir(): shutil.copytree(ROOT / d, dst / d)
    docs = sorted((ROOT / "docs").glob("*.md"), key=lambda p: (DOC_ORDER.index(p.stem) if p.stem in DOC_ORDER else 99, p.stem))
    (dst / "docs").mkdir()
    guide = []
    for p in docs:
        shutil.copy(p, dst / "docs" / p.name)
        m = re.search(r"^#\s+(.+)$", p.read_text(encoding="utf-8"), re.M)
        guide.append({(m.group(1).strip() if m else p.stem): f"docs/{p.name}"})
    lessons, experiments = [], []
    for p in notebooks():
        rel = p.relative_to(ROOT).as_posix()
        title = reader_copy(p, dst / rel)
        (experiments if "experiments" in p.parts else lessons).append({f"{p.stem.split('_')[0]} {title}" if p.stem[:2].isdigit() else title: rel})
    api = []
    (dst / "api").mkdir()
    for m in modules():
        nb = module_notebook(m)
        src = f"Source notebook: [{nb.relative_to(ROOT).as_posix()}](../{nb.relative_to(ROOT).as_posix()}).\n\n" if nb else ""
        (dst / "api" / f"{m}.md").write_text(f"# finrag.{m}\n\n{src}::: finrag.{m}\n", encoding="utf-8")
        api.append({f"finrag.{m}": f"api/{m}.md"})
    return [{"Home": "index.md"}, {"Guide": guide}, {"Lessons": lessons}, {"Experiments": experiments}, {"API reference": api}]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "site"), help="where the site goes (default: site/)")
    ap.add_argument("--stage", default=str(ROOT / "_build" / "docs"), help="staging folder for the sources")
    a = ap.parse_args(argv)
    stage_dir, out = Path(a.stage).resolve(), Path(a.out).resolve()
    nav = stage(stage_dir)
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    cfg.update(docs_dir=str(stage_dir), site_dir=str(out), nav=nav)
    cfg_path = stage_dir.parent / "mkdocs.yml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True), encoding="utf-8")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([str(mkdocs), "build", "--strict", "-q", "-f", str(cfg_path)], cwd=ROOT, env=env)
    if r.returncode == 0: print(f"site: {out}/index.html ({len(notebooks())} notebook pages, {len(modules())} API pages)")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
