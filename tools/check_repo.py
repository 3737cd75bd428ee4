"""`make check`: the notebooks are clean and the library is their export, checked on a copy (the checkout is untouched).

1. `nbdev-clean` on a copy of nbs/ must leave every notebook byte for byte unchanged (no outputs' noise, execution
   counts or metadata that nbdev-clean would strip: notebooks are committed clean);
2. `nbdev-export` on a copy of the repository must regenerate finrag/ byte for byte (nobody edits finrag/ by hand).
Exit 1 listing the files that differ, 0 when both hold.
"""
import filecmp, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
IGNORE = shutil.ignore_patterns(".venv", ".git", ".cache", ".ruff_cache", "runs", "stores", "site", "_build", "_docs",
                                "*.egg-info", "__pycache__", ".ipynb_checkpoints")


def changed(a:Path, b:Path, pattern:str) -> list[str]:
    "Files matching `pattern` under `a` that differ from, or are missing in, `b` (paths relative to `a`)."
    out = []
    for p in sorted(a.rglob(pattern)):
        if any(part in (".ipynb_checkpoints", "__pycache__") for part in p.parts): continue
        q = b/p.relative_to(a)
        if not q.exists() or not filecmp.cmp(p, q, shallow=False): out.append(str(p.relative_to(a)))
    out += [str(q.relative_to(b)) for q in sorted(b.rglob(pattern)) if "__pycache__" not in q.parts and not (a/q.relative_to(b)).exists()]
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d)/"repo"
        shutil.copytree(ROOT, copy, ignore=IGNORE, symlinks=True)
        problems = []
        r = subprocess.run([str(BIN/"nbdev-clean")], cwd=copy, capture_output=True, text=True)
        if r.returncode: problems.append(f"nbdev-clean failed: {r.stderr.strip()[-500:]}")
        problems += [f"not clean (run nbdev-clean --fname {f}): {f}" for f in changed(ROOT/"nbs", copy/"nbs", "*.ipynb")]
        r = subprocess.run([str(BIN/"nbdev-export")], cwd=copy, capture_output=True, text=True)
        if r.returncode: problems.append(f"nbdev-export failed: {r.stderr.strip()[-500:]}")
        problems += [f"not the export of the notebooks (edit the notebook, run make export): finrag/{f}"
                     for f in changed(ROOT/"finrag", copy/"finrag", "*.py")]
    for p in problems: print(p)
    print("make check: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__": sys.exit(main())
