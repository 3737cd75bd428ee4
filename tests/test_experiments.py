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
def _p3_lattice(out):
    # quick overrides: the made-up BEIR sample (40 documents), 4 queries
    r = out["p3_quick_lattice.json"]
    nd = r["ndcg@10"]
    assert set(nd) == {"bm25", "dense", "hybrid", "lattice-emb"} and all(0.0 <= v <= 1.0 for v in nd.values()), nd
    assert nd["bm25"] > 0 and nd["dense"] > 0, nd            # gold documents are in the slice: the baselines find some
    assert r["n_queries"] == 4 and r["n_docs"] == 40, r
    assert "lattice-llm" in r["ndcg@10_llm_queries"] and r["lattice"]["lattice-llm"]["mean_per_query"]["calls"] >= 1, r["lattice"]
    ab = r["ablations"]
    assert set(ab) == {"top-down vs bottom-up", "calibration", "path relevance", "depth vs width"}, ab
    assert set(map(int, ab["depth vs width"]["branching"])) == {4, 8} and set(map(int, ab["depth vs width"]["beam"])) == {1, 2}, ab
    assert r["lattice"]["lattice-emb"]["mean_per_query"]["prompt_tokens"] >= 1, r["lattice"]["lattice-emb"]
def _p2_financerag(out):
    # quick overrides: the made-up BEIR sample (data/sample/beir_sample), 6 queries, judged docs + 12 others
    r = out["p2_quick.json"]
    methods = ["bm25", "dense", "bm25 + pre", "dense + pre", "single reranker", "hierarchical"]
    assert list(r["ndcg@20"]) == methods, list(r["ndcg@20"])
    assert all(set(v) == {"beir_sample", "mean"} and all(0.0 <= x <= 1.0 for x in v.values())
               for v in r["ndcg@20"].values()), r["ndcg@20"]
    assert len(r["rows"]) == 6 and all(row["n_queries"] == 6 for row in r["rows"]), r["rows"]
    assert all(s["queries"] == 6 and s["docs"] <= 6 + 12 for s in r["sizes"].values()), r["sizes"]
    assert r["ndcg@20"]["bm25"]["mean"] > 0.5 and r["ndcg@20"]["dense"]["mean"] > 0.5, r["ndcg@20"]   # easy made-up queries
    assert r["params"]["stage1_keep"] == 100 and r["params"]["final_k"] == 20, r["params"]
    assert set(r["gains"]) >= {"preretrieval_dense_pct", "hierarchical_vs_single_pct"}, r["gains"]
    assert {"preretrieval.query", "stage1", "stage2"} <= set(r["timings"]["beir_sample"]["hierarchical_stage_ms"]), r["timings"]
CHECKS = {"p1_fnspid_graph": _p1_graph, "p2_financerag": _p2_financerag, "p3_lattice": _p3_lattice}
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
