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
    # quick overrides: the made-up BEIR sample (40 documents) as the SciFact slice and as the FinanceRAG set, tiny LLM tier
    r = out["p3_quick_lattice.json"]
    sf, main = r["scifact"], r["scifact"]["main"]
    assert list(main) == ["bm25", "dense", "hybrid", "lattice pointwise", "lattice++ pointwise"], main
    assert all(0.0 <= v[m] <= 1.0 for v in main.values() for m in ("ndcg@10", "recall@100")), main
    assert main["bm25"]["ndcg@10"] > 0 and main["dense"]["ndcg@10"] > 0, main      # gold documents are in the slice
    assert sf["n_docs"] == 40 and sf["n_queries"] == 2, sf
    c = sf["cost"]["lattice pointwise"]
    assert c["queries"] == 2 and c["calls"] >= 1 and c["prompt_tokens"] >= 1, c   # the LLM scored slate items
    assert set(sf["ablations_llm"]["ndcg"]) == {"full", "no calibration", "no path relevance", "beam 1", "beam 2"}, sf["ablations_llm"]
    assert set(sf["fusion_variants"]) >= {"rrf k=60 (LATTICE, BM25, dense)", "rrf, LATTICE x2"}, sf["fusion_variants"]
    assert set(map(int, sf["tree_shape_embedding"])) == {4, 8}, sf["tree_shape_embedding"]
    assert sf["listwise"]["queries"] == 1 and sf["listwise"]["cost"]["calls"] >= 1, sf["listwise"]
    assert set(r["trees"]) == {"scifact main", "scifact bottom-up"}, r["trees"]
    fb = r["financebench"]
    assert fb["n_queries"] == 1 and "lattice++ pointwise" in fb["main"], fb
    # the P3 studies (finrag.lattice.studies): hybrid routing / LATTICE++ chosen on dev without the LLM (hybrid_llm_queries 0), the grown tree
    h = r["hybrid"]                                          # the studies, in the notebook's own results file
    assert list(h) == ["scifact", "deviations", "financebench"], list(h)
    assert (h["scifact"]["dataset"], h["scifact"]["n_dev"] + h["scifact"]["n_test"]) == ("beir_sample-slice40", 4), h["scifact"]["dataset"]
    assert h["financebench"]["n_dev"] + h["financebench"]["n_test"] == 32 and not any("hybrid" in R for R in (h["scifact"], h["financebench"]))
    for R in (h["scifact"], h["financebench"]):
        assert R["fusion_chosen"]["candidates"] == 176 and R["dev"]["methods"]["lattice++ (embedding)"]["ndcg@10"] == R["fusion_chosen"]["dev_ndcg@10"], R["fusion_chosen"]
        assert all(v["ci"][0] <= v["ndcg@10"] <= v["ci"][1] and v["n"] == R["n_test"] for v in R["test"]["methods"].values()), R["test"]
    g = r["grow"]
    assert (g["n_docs"], g["n_added"], g["batches"], g["stale_share"]["tried"], g["tree"]["grown_problems"]) == (40, 8, 2, [0.0, 0.5], []), g
    assert g["n_queries"] + g["stale_share"]["n_dev_queries"] == 4 and g["tree"]["grown"]["n_leaves"] == 40, g["tree"]
def _p2_financerag(out):
    # quick overrides: the made-up BEIR sample (data/sample/beir_sample), 6 queries per half, judged docs + 12 others,
    # the LLM stage 2 on 2 queries with the tiny tier (both document cuts), no answers
    r = out["p2_quick.json"]
    methods = ["bm25", "dense", "bm25 + pre", "dense + pre", "bm25 (default)", "dense (default)", "stage 1", "stage 2", "fused"]
    assert list(r["ndcg@20"])[:9] == methods and set(list(r["ndcg@20"])[9:]) <= {"adaptive"}, list(r["ndcg@20"])
    assert all(set(v) == {"beir_sample", "mean"} and all(0.0 <= x <= 1.0 for x in v.values())
               for v in r["ndcg@20"].values()), r["ndcg@20"]
    assert len(r["rows"]) == len(r["ndcg@20"]) and all(row["n_queries"] == 6 for row in r["rows"]), r["rows"]
    assert all(s["queries"] == 6 and s["dev_queries"] == 6 and s["docs"] <= 6 + 12 for s in r["sizes"].values()), r["sizes"]
    assert r["ndcg@20"]["bm25"]["mean"] > 0.5 and r["ndcg@20"]["dense"]["mean"] > 0.5, r["ndcg@20"]   # measured 0.877, 0.760 (held-out 6 of the sample)
    assert r["params"]["stage1_keep"] == 100 and r["params"]["final_k"] == 20, r["params"]
    c = r["choice"]
    assert c["fusion"] in r["params"]["fusions"] and set(c["preretrieval_default"]) == {"bm25", "dense"}, c
    # the chosen fusion is never below stage 1 on a dev half when some fusion qualifies
    dev = c["dev_fusion_ndcg@20"]
    if any(dev[f]["min diff vs stage 1"] >= 0 for f in r["params"]["fusions"]): assert dev[c["fusion"]]["min diff vs stage 1"] >= 0, dev
    assert len(r["ablation_dev_ndcg@20"]) == 2 * (2 + 2 * 6), sorted(r["ablation_dev_ndcg@20"])   # bm25/dense x (none, all, only/all but 6 steps)
    assert set(r["llm_rerank"]) == {"head", "query"} and r["answers"] == {}, list(r["llm_rerank"])
    for cut, res in r["llm_rerank"].items():
        x = res["beir_sample"]
        assert x["queries"] == 2 and x["per_query"]["calls"] + x["per_query"]["cache_hits"] >= 1, x
        assert {"stage 1", "llm", "rrf(stage 1, llm)", "interp 0.3", "adaptive<0.2"} <= set(x["ndcg@10"]), x["ndcg@10"]
        assert all(0.0 <= v <= 1.0 for v in x["ndcg@10"].values()) and x["adaptive_weight"] in (0.1, 0.2, 0.3, 0.5), x
    ch = r["llm_stage2_choice"]
    assert ch is None or (ch["cut"] in ("head", "query") and ch["variant"] != "stage 1"), ch
    # every table re-ranks the same pool: stage 1's NDCG@10 is one number across both cuts and the zero-call baseline
    z = r["stage2_zero_call"]   # stage 1 re-fused with its own BM25: the zero-call baseline beside the LLM
    s1 = {res["beir_sample"]["ndcg@10"]["stage 1"] for res in r["llm_rerank"].values()} | {z["dev"]["beir_sample"]["stage 1"]}
    assert len(s1) == 1, s1
    assert {"bm25", "rrf(stage 1, bm25)", "bm25 interp 0.2"} <= set(z["dev"]["beir_sample"]) and z["best"] in z["dev"]["beir_sample"], z
    for cut, res in r["llm_rerank"].items():   # the adaptive rule: no LLM call -> stage 1's order; a call on every query -> the interpolation
        x = res["beir_sample"]; sh = x["adaptive_llm_share"]
        assert list(sh) == ["0.02", "0.05", "0.1", "0.2"] and all(0.0 <= v <= 1.0 for v in sh.values()), sh
        assert list(sh.values()) == sorted(sh.values()), sh   # a larger margin threshold calls the LLM at least as often
        for t, v in sh.items():
            if v == 0.0: assert x["ndcg@10"][f"adaptive<{t}"] == x["ndcg@10"]["stage 1"], (cut, t, x["ndcg@10"])
            if v == 1.0: assert x["ndcg@10"][f"adaptive<{t}"] == x["ndcg@10"][f"interp {x['adaptive_weight']:g}"], (cut, t, x["ndcg@10"])
    ho = r["llm_stage2_heldout"]   # the development choice (else the best-mean LLM variant) on 2 held-out queries
    assert ho["qualified_on_dev"] == (ch is not None) and ho["cut"] in ("head", "query"), ho
    if ch: assert (ho["cut"], ho["variant"]) == (ch["cut"], ch["variant"]), (ho, ch)
    hx = ho["per_dataset"]["beir_sample"]
    assert hx["queries"] == 2 and len(hx["ndcg@10"]) == 3 and z["best"] in hx["ndcg@10"], hx   # stage 1, the LLM variant, the BM25 one
    assert all(0.0 <= v <= 1.0 for v in hx["ndcg@10"].values()) and 0.0 <= hx["llm_share"] <= 1.0, hx
    assert hx["per_query"]["calls"] + hx["per_query"]["cache_hits"] >= 1, hx
    assert {"stage1_ms", "stage2_ms"} <= set(r["timings"]["beir_sample"]), r["timings"]
def _p1_eval(out):
    # quick overrides: the made-up news sample, 4 questions (1 direct, 3 relational), one answered by the tiny LLM tier
    r = out["p1_eval_quick.json"]
    systems = ["vector", "graph", "vector@graph", "paper", "vector@paper", "auto", "hybrid@graph"]   # + the hybrid baseline at the graph's budget
    assert r["config"]["modes"] == systems and r["config"]["graph_mode"] == "budget", r["config"]
    assert "graph vs hybrid@graph" in r["pairs"], list(r["pairs"])
    assert r["metrics"][:2] == ["context_entity_recall", "support_recall"], r["metrics"]
    rows = {(x["question_id"], x["mode"]): x for x in r["rows"]}
    assert len(rows) == 4 * len(systems), len(rows)
    for (q, m), x in rows.items():
        assert 0 <= x["context_entity_recall"] <= 1 and 0 <= x["support_recall"] <= 1, x
        if m.startswith("vector@"):                                     # the fair baseline: never more chunks or tokens
            b = rows[q, m.split("@")[1]]
            assert x["n_contexts"] <= b["n_contexts"] and x["context_tokens"] <= b["context_tokens"], (x, b)
        if m == "graph": assert x["n_contexts"] <= r["config"]["budget_chunks"] and x["context_tokens"] <= r["config"]["budget_tokens"], x
        if m == "auto": assert x["chunk_ids"] == rows[q, x["route"]]["chunk_ids"], x
    assert r["router"]["n"] == 4 and 0 <= r["router"]["accuracy"] <= 1, r["router"]
    answered = [x for x in r["rows"] if x["answered"]]
    assert {x["mode"] for x in answered} == {"vector", "graph", "auto"} and len(answered) == 3, answered
    assert set(r["pairs"]) >= {"graph vs vector@graph", "paper vs vector@paper", "auto vs vector"}, list(r["pairs"])
    assert {a["system"] for a in r["tau_ablation"]} == {"vector", "graph", "vector@graph", "paper", "vector@paper"}
    assert r["boilerplate"]["raw"]["chunks"] >= r["boilerplate"]["clean"]["chunks"] > 0, r["boilerplate"]
    # the same 2 questions answered as free text and as cited JSON, in vector, graph and hybrid@graph
    f = out["p1_eval_quick_answer_format.json"]
    assert f["formats"] == ["text", "cited"] and f["systems"] == ["vector", "graph"], (f["formats"], f["systems"])
    assert {k: c["answer_format"] for k, c in f["config"].items()} == {"text": "text", "cited": "cited"}, f["config"]
    for fmt, rows in f["rows"].items():
        answered = [x for x in rows if x["answered"]]
        assert len(answered) == 2 * 2 and {x["mode"] for x in answered} == set(f["systems"]), answered
        assert all(x["answer_format"] == fmt and x["answer_format_used"] in ("text", "cited") for x in answered), answered
        assert all(x["cited_support_recall"] is None or 0 <= x["cited_support_recall"] <= 1 for x in answered), answered
        assert "cited_support_recall" in f["metrics"][fmt] and "supported_before" in f["metrics"][fmt], f["metrics"][fmt]
    c = f["comparison"]
    assert len(c["split"]["choose"]) == len(c["split"]["report"]) == 1, c["split"]      # one question chooses, one reports
    assert c["choice"]["default"] in ("text", "cited") and c["fallbacks"]["rows"] == 4, (c["choice"], c["fallbacks"])
    assert {x["metric"] for x in c["halves"]["report"]} >= {"sentences_cited", "semantic_similarity"}, c["halves"]["report"]
CHECKS = {"p1_fnspid_graph": _p1_graph, "p1_eval": _p1_eval, "p2_financerag": _p2_financerag, "p3_lattice": _p3_lattice}
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
    from finrag.protocol import read_record
    envs = {p.name: read_record(p) for p in results}                 # every results file is an envelope (finrag.protocol.record)
    assert all(e["writer"] == f"nbs/experiments/{name}.ipynb" and e["params"] for e in envs.values()), {k: e["writer"] for k, e in envs.items()}
    out = {k: e["result"] for k, e in envs.items()}
    assert all(out.values()), f"empty results files: {[k for k, v in out.items() if not v]}"
    check = CHECKS.get(name)
    if check: check(out)


@pytest.mark.parametrize("name", CASES)
def test_parameters_parse(name):
    "Every assignment in the parameters cell is a parameter papermill can set (a line it cannot parse is silently fixed)."
    import re
    cell = next(c for c in json.loads((EXP / f"{name}.ipynb").read_text())["cells"]
                if "parameters" in c.get("metadata", {}).get("tags", []))
    assigned = {m.group(1) for m in re.finditer(r"^(\w+)\s*(?::[^=\n]*)?=", "".join(cell["source"]), re.M)}
    assert assigned and assigned == set(pm.inspect_notebook(str(EXP / f"{name}.ipynb"))), name


@pytest.mark.parametrize("name", CASES)
def test_experiment_is_parameters_and_calls(name):
    "An experiment notebook holds parameters, library calls, tables and plots: at most 5 function/class definitions (the method lives in the library)."
    import ast
    cells = json.loads((EXP / f"{name}.ipynb").read_text())["cells"]
    tree = ast.parse("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code"))
    defs = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert len(defs) <= 5, f"{name}.ipynb defines {len(defs)} functions/classes ({', '.join(defs)}): move them into the library"
