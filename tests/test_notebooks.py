"""Every library notebook in nbs/ is executed as a test (its example cells are its tests), one pytest item each.

Cells flagged `#| notest` or `#| slow` (real large models, real datasets) are skipped, as `nbdev-test` does.
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


@pytest.fixture(scope="session")
def fresh_kernel_env(tmp_path_factory):
    "The environment of the fresh kernels: the tiny tier (FINRAG_LLM, set in conftest.py), no endpoint overrides, an empty cache."
    sys.path.insert(0, str(NBS.parent / "tools"))
    import execute_notebooks
    return execute_notebooks.kernel_env(str(tmp_path_factory.mktemp("finrag-cache")), os.environ.get("FINRAG_LLM", "smollm2-135m"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb, request):
    if FRESH:
        env = request.getfixturevalue("fresh_kernel_env")      # puts tools/ on the path
        import execute_notebooks
        from nbclient.exceptions import CellExecutionError
        try: execute_notebooks.execute(nb, env)
        except CellExecutionError as e: pytest.fail(f"{nb.name} failed in a fresh kernel:\n{e}", pytrace=False)
        return
    ok, secs = run_notebook(nb, skip_flags=["notest", "slow"], showerr=True)
    assert ok, f"{nb.name} failed (see the cell error above)"
