"""Every library notebook in nbs/ is executed as a test (its example cells are its tests), one pytest item each.

Cells flagged `#| notest` or `#| slow` (real large models, real datasets) are skipped, as `nbdev-test` does.
Folders holding a `.notest` file (the papermill experiment notebooks) are tested elsewhere with small overrides.
"""
from pathlib import Path
import pytest
from nbdev.test import test_nb as run_notebook

NBS = Path(__file__).resolve().parent.parent / "nbs"


def _tested(p: Path) -> bool:
    rel = p.relative_to(NBS)
    if p.name.startswith("_") or ".ipynb_checkpoints" in rel.parts: return False
    return not any((NBS / d / ".notest").exists() for d in rel.parents)


NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb") if _tested(p))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb):
    ok, secs = run_notebook(nb, skip_flags=["notest", "slow"], showerr=True)
    assert ok, f"{nb.name} failed (see the cell error above)"
