"""Repository invariants: the library is the export of the notebooks; settings.ini is complete."""
import filecmp, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_nbdev_export_leaves_library_unchanged(tmp_path):
    "`nbdev-export` must regenerate finrag/ byte for byte: nobody edits finrag/ by hand."
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", ".cache", "runs", "stores", "*.egg-info", "__pycache__"))
    exe = Path(sys.executable).parent / "nbdev-export"
    subprocess.run([str(exe)], cwd=copy, check=True, capture_output=True)
    cmp = filecmp.dircmp(ROOT / "finrag", copy / "finrag", ignore=["__pycache__"])
    def diffs(c):
        out = [f"{c.left}/{f}" for f in c.diff_files + c.left_only + c.right_only]
        for sub in c.subdirs.values(): out += diffs(sub)
        return out
    assert diffs(cmp) == [], "finrag/ differs from `nbdev-export` output; edit the notebooks, then run `make export`"


def test_every_module_has_a_notebook():
    mods = {p.stem for p in (ROOT / "finrag").glob("*.py") if not p.stem.startswith("_")}
    src = " ".join(p.read_text() for p in (ROOT / "nbs").glob("*.ipynb"))
    missing = [m for m in mods if f"default_exp {m}" not in src]
    assert missing == [], f"modules without a source notebook: {missing}"
