"""The papermill experiment notebooks run end to end with reduced parameters (the same code path, less data).

Overrides live in tests/overrides/<notebook>.json; an override that names a parameter the notebook does not declare
fails the test (a silently ignored override would test nothing). Outputs (executed copy, figures, results) go to a
temp dir, never into nbs/, figures/ or results/.
"""
import json
from pathlib import Path
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXP = ROOT / "nbs" / "experiments"
# Per-notebook checks on the results files written with the quick overrides (filename -> parsed JSON).
def _p1_graph(out): assert any(v.get("chunks", 0) > 0 and v.get("tickers", 0) > 0 for v in out.values()), out
CHECKS = {"p1_fnspid_graph": _p1_graph}
CASES = sorted(p.stem for p in (ROOT / "tests" / "overrides").glob("*.json"))


@pytest.mark.parametrize("name", CASES)
def test_experiment_notebook(name, tmp_path):
    nb = EXP / f"{name}.ipynb"
    overrides = json.loads((ROOT / "tests" / "overrides" / f"{name}.json").read_text())
    declared = set(pm.inspect_notebook(str(nb)))
    params = {**overrides, "store_dir": str(tmp_path / "store"), "figures_dir": str(tmp_path / "figures"),
              "results_dir": str(tmp_path / "results")}
    unknown = set(params) - declared
    assert not unknown, f"overrides name parameters {name}.ipynb does not declare: {sorted(unknown)}"
    pm.execute_notebook(str(nb), str(tmp_path / f"{name}.ipynb"), parameters=params, cwd=str(ROOT), kernel_name="python3",
                        progress_bar=False)
    figs = sorted(p.name for p in (tmp_path / "figures").glob("*.png"))
    results = list((tmp_path / "results").glob("*.json"))
    assert figs and results, (figs, results)
    out = {p.name: json.loads(p.read_text()) for p in results}
    assert all(out.values()), f"empty results files: {[k for k, v in out.items() if not v]}"
    check = CHECKS.get(name)
    if check: check(out)
