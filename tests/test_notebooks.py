"""Every library notebook in nbs/ is executed as a test (its example cells are its tests), one pytest item each.

Cells flagged `#| notest` (they need a public dataset, or the local LLM) run too, with an empty data root
(`FINRAG_DATA_ROOT` = an empty temporary folder) and the tiny LLM tier: their guard (`finrag.download.have_data` /
`have`) prints what is missing and the notebook goes on, which checks that a lesson runs top to bottom (Run All) for
a user without the datasets. Cells flagged `#| slow` (a large model, a JVM server, minutes of LLM calls; guarded the
same way for Run All) are skipped, as `nbdev-test` skips both flags (pyproject `tst_flags`).
Folders holding a `.notest` file (the papermill experiment notebooks) are tested elsewhere with small overrides.

By default each notebook runs in a fresh IPython shell inside the test process (nbdev's `test_nb`): models and the
local LLM server loaded by one notebook are reused by the next, which keeps `make test` short. `FINRAG_NB_KERNEL=fresh`
(`make test-fresh`) runs every notebook in its own new Jupyter kernel instead, with an empty cache, exactly as
`make notebooks` executes them (tools/execute_notebooks.py) — no state from another notebook or a developer's run;
measured 2.5x slower (about 1,000 s vs 430 s for the lesson notebooks on two shared cores, load ~12).
"""
import os, sys
from pathlib import Path
import pytest
from nbdev.test import test_nb as run_notebook

NBS = Path(__file__).resolve().parent.parent / "nbs"
FRESH = os.environ.get("FINRAG_NB_KERNEL") == "fresh"


def _tested(p: Path) -> bool:
    rel = p.relative_to(NBS)
    if p.name.startswith("_") or ".ipynb_checkpoints" in rel.parts: return False
    return not any((NBS / d / ".notest").exists() for d in rel.parents)


NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb") if _tested(p))
SKIP = ["slow"]          # `#| notest` cells run (with no data), `#| slow` ones do not


@pytest.fixture(scope="session")
def empty_data_root(tmp_path_factory):
    "An empty data root: what a user who has not run `finrag data get` has."
    return tmp_path_factory.mktemp("no-data")


@pytest.fixture(scope="session")
def fresh_kernel_env(tmp_path_factory, empty_data_root):
    "The environment of the fresh kernels: the tiny tier (FINRAG_LLM, set in conftest.py), no endpoint overrides, an empty cache and data root."
    sys.path.insert(0, str(NBS.parent / "tools"))
    import execute_notebooks
    env = execute_notebooks.kernel_env(str(tmp_path_factory.mktemp("finrag-cache")), os.environ.get("FINRAG_LLM", "smollm2-135m"))
    return env | {"FINRAG_DATA_ROOT": str(empty_data_root)}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb, request, empty_data_root, monkeypatch):
    if FRESH:
        env = request.getfixturevalue("fresh_kernel_env")      # puts tools/ on the path
        import execute_notebooks
        from nbclient.exceptions import CellExecutionError
        try: execute_notebooks.execute(nb, env, flags=SKIP)
        except CellExecutionError as e: pytest.fail(f"{nb.name} failed in a fresh kernel:\n{e}", pytrace=False)
        return
    monkeypatch.setenv("FINRAG_DATA_ROOT", str(empty_data_root))
    ok, secs = run_notebook(nb, skip_flags=SKIP, showerr=True)
    assert ok, f"{nb.name} failed (see the cell error above)"


def test_flagged_cells_are_guarded():
    "Every `#| notest` / `#| slow` lesson cell checks what it needs first (`have_data` / `have`, or a flag set by one in an earlier cell), so Run All goes on without it."
    import re, nbformat
    unguarded = []
    for p in NOTEBOOKS:
        flags = set()                       # names assigned from a guard: `dev = have_data(...)`
        for c in nbformat.read(p, as_version=4).cells:
            if c.cell_type != "code": continue
            flags |= set(re.findall(r"^(\w+) = .*\bhave(?:_data)?\(", c.source, re.M))
            if not re.search(r"^#\|\s*(notest|slow)\b", c.source, re.M): continue
            guarded = re.search(r"\bhave(?:_data)?\(", c.source) or any(re.search(rf"^if {f}\b", c.source, re.M) for f in flags)
            if not guarded: unguarded.append(f"{p.name} cell {c.get('id')}")
    assert not unguarded, f"flagged cells without a have_data/have guard: {unguarded}"
