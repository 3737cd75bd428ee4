"""The settings records and their ranges: settings.ini's defaults are the choices the experiments
recorded in results/*.json, the CLI and the library build the same LATTICE tree from the same record, and the CLI's
options go through the ranges of the settings (one line, exit 2)."""
from dataclasses import replace
from pathlib import Path
import pytest
from cli_helpers import run_cli
from finrag.config import get_settings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"


def results(name: str) -> dict:
    "The numbers (`result`) of results/NAME (an envelope, `finrag.protocol.record`)."
    from finrag.protocol import read_record
    return read_record(RESULTS / name)["result"]


def test_p2_defaults_are_the_recorded_choices():
    h, r = get_settings().hierarchical, results("p2_financerag.json")
    assert h.stage1 == results("p2_stage1_fusion.json")["default_stage1"] == results("p2_stage1_fusion.json")["choice"]["chosen"] == "zsum"
    assert r["params"]["stage1"] == "hybrid"          # the committed P2 experiment ran the previous stage 1 (RRF); its numbers say so
    assert (h.stage1_keep, h.final_k) == (r["params"]["stage1_keep"], r["params"]["final_k"])
    assert r["choice"]["stage2_default"] is None          # the committed P2 experiment ran stage 1 alone; stage 2 is now the cross-encoder's decision (below)
    assert h.fusion == r["choice"]["fusion"].split(":")[0] == "interp"
    j = r["llm_stage2_choice"]                                                    # the LLM judge's own settings
    kind, w = j["variant"].split()
    assert (h.llm_cut, "interp", h.llm_weight) == (j["cut"], kind, float(w))
    from finrag.hierarchical.pipeline import scorer_settings
    assert scorer_settings("llm", h).weight == h.llm_weight and scorer_settings("llm-yesno", h).cut == j["cut"]


def test_p2_fusion_weight_is_the_recorded_choice():
    h, r = get_settings().hierarchical, results("p2_financerag.json")
    assert h.weight == float(r["choice"]["fusion"].split(":")[1])


def test_p3_build_defaults_are_the_recorded_tree():
    lat, tree = get_settings().lattice, results("p3_lattice.json")["trees"]["scifact main"]
    assert (lat.strategy, lat.summarizer, lat.doc_summarizer, lat.partitioner) == \
        (tree["strategy"], tree["summarizer"], tree["doc_summarizer"], tree["partitioner"])
    assert tree["branching"]["max"] <= lat.branching


def _tree_dict(path) -> dict:
    from finrag.lattice.tree import SemanticTree
    t = SemanticTree.load(path)
    stats = {k: v for k, v in t.stats.items() if k != "seconds"}
    return {"root": t.root.to_dict(), "stats": stats}


def test_cli_and_library_build_the_same_tree(capsys, tmp_path):
    "`finrag lattice build` and `build_tree` take every default from the same [lattice] record (LLM-free options on both sides)."
    from finrag.beir import beir_corpus
    from finrag.lattice.build import build_tree
    beir = ROOT / "data" / "sample" / "beir_sample"
    code, out, err = run_cli(capsys, "lattice", "build", "--data", beir, "--out", tmp_path / "cli.json",
                             "--summarizer", "extractive", "--partitioner", "kmeans", "--no-progress")
    assert code == 0, err
    lib = build_tree(beir_corpus(beir, "test", None).corpus, summarizer="extractive", partitioner="kmeans", progress=False)
    lib.save(tmp_path / "lib.json")
    a, b = _tree_dict(tmp_path / "cli.json"), _tree_dict(tmp_path / "lib.json")
    assert a["stats"]["n_docs"] == 40 and a["stats"]["doc_summarizer"] == get_settings().lattice.doc_summarizer
    assert a == b
    # a variant of the record changes the tree (the comparison above can fail)
    other = build_tree(beir_corpus(beir, "test", None).corpus, summarizer="extractive", partitioner="kmeans", progress=False,
                       config=replace(get_settings().lattice, branching=3, max_leaf_docs=3))
    assert other.root.to_dict() != lib.root.to_dict()


@pytest.mark.parametrize("tau", ["2.5", "nan", "-1", "inf"])
def test_ask_tau_out_of_range(capsys, tmp_path, tau):
    code, out, err = run_cli(capsys, "ask", "Who supplies Apple?", "--store", tmp_path / "none", "--tau", tau, "--no-llm")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--tau {float(tau)!r} must be in [0, 1]" in err, err


def test_lattice_build_max_leaf_docs_zero(capsys, tmp_path):
    beir = ROOT / "data" / "sample" / "beir_sample"
    code, out, err = run_cli(capsys, "lattice", "build", "--data", beir, "--out", tmp_path / "t.json", "--max-leaf-docs", "0",
                             "--summarizer", "extractive", "--partitioner", "kmeans", "--no-progress")
    assert code == 2 and "ZeroDivisionError" not in err and "--max-leaf-docs 0 must be >= 1 document" in err, err
    from finrag.core import InputError
    from finrag.lattice.estimate import estimate_build
    with pytest.raises(InputError, match="max_leaf_docs 0 must be >= 1"):
        estimate_build({"a": "x"}, max_leaf_docs=0)                     # was ZeroDivisionError


@pytest.mark.parametrize("key,old,new,message", [
    ("beam", "beam = 4\n", "beam = 0\n", "[lattice] beam = 0 must be in [1, 1000] nodes"),
    ("path_alpha", "path_alpha = 0.5", "path_alpha = nan", "[lattice] path_alpha = nan must be in [0, 1]"),
    ("budget_chunks", "budget_chunks = 5", "budget_chunks = 0", "[graphrag] budget_chunks = 0 must be in [1, 1000] chunks"),
    ("llm_timeout", "llm_timeout = 240", "llm_timeout = nan", "[models] llm_timeout = nan must be > 0 seconds"),
    ("llm_timeout", "llm_timeout = 240", "llm_timeout = inf", "[models] llm_timeout = inf must be > 0 seconds")])
def test_settings_out_of_range_cli(capsys, tmp_path, monkeypatch, key, old, new, message):
    "A bad settings value stops any command with one line naming the file, the section and the key."
    src = (ROOT / "settings.ini").read_text(encoding="utf-8")
    assert old in src
    p = tmp_path / "settings.ini"; p.write_text(src.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("FINRAG_SETTINGS", str(p))
    code, out, err = run_cli(capsys, "ask", "q?", "--store", tmp_path / "none", "--no-llm")
    assert code == 2 and str(p) in err and message in err and "Traceback" not in err, err


def test_settings_percent_and_binary(capsys, tmp_path, monkeypatch):
    from finrag.config import load_settings
    from finrag.core import InputError
    src = (ROOT / "settings.ini").read_text(encoding="utf-8")
    p = tmp_path / "pct.ini"; p.write_text(src.replace("cache_dir = .cache/finrag", "cache_dir = .cache/50%off"), encoding="utf-8")
    assert load_settings(p).models.cache_dir == ".cache/50%off"               # was InterpolationSyntaxError
    b = tmp_path / "bin.ini"; b.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match="not a UTF-8 text file"): load_settings(b)   # was UnicodeDecodeError
    monkeypatch.setenv("FINRAG_SETTINGS", str(b))
    code, out, err = run_cli(capsys, "ask", "q?", "--store", tmp_path / "none", "--no-llm")
    assert code == 2 and str(b) in err and "not a UTF-8 text file" in err and "Traceback" not in err, err


@pytest.mark.parametrize("case,old,new,message", [
    ("bad key", "beam = 4\n", "beam = 4\nbeams = 4\n", "unknown key(s) ['beams'] in [lattice]"),
    ("bad value", "beam = 4\n", "beam = 0\n", "[lattice] beam = 0 must be in [1, 1000] nodes"),
    ("unreadable", None, None, "not a UTF-8 text file")])
def test_every_command_reads_the_settings(capsys, tmp_path, monkeypatch, case, old, new, message):
    "`eval retrieval --method bm25` reads no key of the settings, yet a broken settings file stops it (as every command) with one line and exit 2; --help still answers."
    p = tmp_path / "settings.ini"
    if old is None: p.write_bytes(bytes(range(256)) * 4)
    else:
        src = (ROOT / "settings.ini").read_text(encoding="utf-8")
        assert old in src
        p.write_text(src.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("FINRAG_SETTINGS", str(p))
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", ROOT / "data" / "sample" / "beir_sample", "--method", "bm25")
    assert code == 2 and str(p) in err and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    code, out, err = run_cli(capsys, "eval", "retrieval", "--help")
    assert code == 0 and "--set" in out, err


def test_p2_stage2_is_the_recorded_choice():
    "Stage 2 is the trained cross-encoder only if the protocol's rule chose it on the reporting halves (results/train_cross_encoder.json `decision`); the `ce_*` keys are its best configuration on the choosing halves (what `--stage2 ce` runs)."
    from finrag.protocol import rule_verdict
    h, r = get_settings().hierarchical, results("train_cross_encoder.json")
    ch, d = r["chosen"], r["decision"]
    assert ch == d["chosen"] and h.stage2 == ("none" if ch == "stage1" else "ce")
    if ch != "stage1": assert rule_verdict(r["report_ndcg@10"][f"{ch}-stage1"])["replaces"] and d["verdict"]["replaces"]
    table = r["choose_ndcg@10"]
    best = max((c for c in table if c != "stage1"), key=lambda c: table[c]["macro"])
    c = r["candidates"][ch if ch != "stage1" else best]
    assert (h.ce_pool, h.ce_weight, h.ce_min_best) == (c["pool"], c["weight"], c["min_best"])


def test_p3_lattice_plus_fusion_is_the_recorded_choice():
    "[lattice] fusion, fusion_weights (and fusion_rrf_k for RRF) are the LATTICE++ candidate results/p3_ce.json chose on development halves."
    import re
    lat, chosen = get_settings().lattice, results("p3_ce.json")["lattice++"]["chosen"]
    m = re.fullmatch(r"lattice\+\+ (z|rrf k=(\d+)) \(([\d., ]+)\)", chosen)
    assert m, chosen
    assert lat.fusion == ("z" if m.group(1) == "z" else "rrf")
    assert lat.fusion_weights == tuple(float(x) for x in m.group(3).split(","))
    if m.group(2): assert lat.fusion_rrf_k == float(m.group(2))


def test_p1_answer_format_is_the_recorded_choice():
    "[graphrag] answer_format is 'text' until results/p1_eval_answer_format.json records the protocol's choice of cited vs free-text answers, then that choice."
    f = RESULTS / "p1_eval_answer_format.json"
    chosen = results(f.name)["comparison"]["choice"]["default"] if f.exists() else "text"
    assert get_settings().graphrag.answer_format == chosen


def test_p3_scorer_is_the_recorded_choice():
    "[lattice] scorer (and the keys its candidate set, e.g. beam) are the candidate results/p3_scorer_choice.json's rule chose (`choose_default`)."
    f = RESULTS / "p3_scorer_choice.json"
    lat, r = get_settings().lattice, results(f.name)
    c = r["choice"]
    assert r["chosen"] == (c["candidate"] if c["candidate"] != r["incumbent"] and c["verdict"]["replaces"] else r["incumbent"])
    assert {k: getattr(lat, k) for k in r["candidates"][r["chosen"]]} == r["candidates"][r["chosen"]]


def test_p3_growth_defaults_are_the_recorded_choice():
    "[lattice] grow_route, grow_split, stale_share and spill are the setting results/p3_grow.json chose on the development half."
    lat, r = get_settings().lattice, results("p3_grow.json")
    assert (lat.grow_route, lat.grow_split, lat.stale_share, lat.spill) == \
        (r["route"]["chosen"], r["split"]["chosen"], r["stale_share"]["chosen"], r["spill"]["chosen"])


def test_p2_preretrieval_is_the_recorded_configuration():
    "`preretrieval=True` runs the steps the P2 experiment and stage 1's choice ran with (results/p2_financerag.json params)."
    from dataclasses import asdict
    from finrag.hierarchical.preretrieval import PreRetrievalConfig
    assert asdict(PreRetrievalConfig.from_settings()) == results("p2_financerag.json")["params"]["preretrieval"]


# module-level constants whose line mentions a measurement but that are not a default the settings should hold
NOT_A_MEASURED_DEFAULT = {
    "CITATION_JUDGES": "the candidate names bench/p1_citation_judges.py measures; the choice is [graphrag] citation_judge",
    "ABSTAIN_MIN_DOCS": "a fact about the development data (the smallest corpus abstain_below was measured on)",
    "AUTO_POWER": "a parameter of the zsum:auto candidate, not a default ([hierarchical] stage1 = zsum)",
    "PSEUDO_VERSION": "a cache version",
    "HYBRID_DEVIATIONS": "the deviations from the paper, in words",
    "GROW_SEARCH": "the growth study's fixed search (a study parameter copied from results/p3_hybrid.json), not a library default",
    "GROW_GRID": "the candidates grow_study tries; the choice is [lattice] grow_route, grow_split, stale_share and spill",
    "THREE_TOPIC_DOCS": "a test corpus (its text mentions a measurement)",
}
_MEASURED = r"results/|\bmeasured\b|\bchosen\b|\bchoice\b|\bbest\b"


def measured_constants(folder) -> dict:
    "{name: 'file:line'} of module-level UPPER_CASE constants whose assignment (or the comment line above it) names a measurement."
    import ast, re
    out = {}
    for f in sorted(Path(folder).rglob("*.py")):
        if f.name == "_modidx.py": continue
        text = f.read_text(encoding="utf-8"); lines = text.splitlines()
        for node in ast.parse(text).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if not (isinstance(t, ast.Name) and t.id.isupper() and len(t.id) > 1): continue
                above = lines[node.lineno - 2] if node.lineno > 1 and lines[node.lineno - 2].lstrip().startswith("#") else ""
                if re.search(_MEASURED, "\n".join([above] + lines[node.lineno - 1:node.end_lineno]), re.I):
                    out[t.id] = f"{f.name}:{node.lineno}"
    return out


def test_no_measured_choice_hides_in_a_module_constant():
    "A measured default lives in settings.ini with the results file that chose it, never in a module constant."
    found = measured_constants(ROOT / "finrag")
    assert set(found) - set(NOT_A_MEASURED_DEFAULT) == set(), found
    assert set(NOT_A_MEASURED_DEFAULT) <= set(found), "an allow-list entry no longer exists: remove it"


def test_the_measured_constant_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text('K = 3\nBEST_K = 5   # measured on dev (results/x.json)\n# the choice of\nFUSION = "z"\n')
    assert set(measured_constants(tmp_path)) == {"BEST_K", "FUSION"}


def test_setting_choices_are_the_registered_names():
    "One list per name set: the settings' allowed scorers are names the papers' code builds, and every registered method is a CLI choice."
    import importlib
    from dataclasses import fields
    from finrag.hierarchical.settings import HierarchicalSettings
    from finrag.hierarchical.pipeline import stage_scorer_names
    from finrag.lattice.settings import SLATE_SCORERS, LatticeSettings
    import finrag.methods as M
    choices = lambda cls, name: next(f for f in fields(cls) if f.name == name).metadata["range"]["choices"]
    assert set(choices(HierarchicalSettings, "stage1")) <= set(stage_scorer_names())
    assert choices(LatticeSettings, "scorer") is SLATE_SCORERS                # [lattice] scorer takes the registry's names: no second list
    for name, e in SLATE_SCORERS.items():                                      # every registered builder exists
        b = e.builder
        if isinstance(b, str): b = getattr(importlib.import_module(b.split(":")[0]), b.split(":")[1])
        assert callable(b), name
    assert get_settings().lattice.scorer in SLATE_SCORERS
    assert get_settings().hierarchical.stage2 in set(stage_scorer_names()) | {"none"}
    assert {"bm25", "dense", "hybrid", "hierarchical", "lattice", "lattice++"} <= set(M.methods())


def test_the_papers_sections_need_no_paper_import():
    "`import finrag.config` alone reads every paper's section (`sections()` imports each package's settings module), and the record pickles."
    import pickle, subprocess, sys
    code = ("import pickle; from finrag.config import get_settings; s = get_settings(); "
            "print(type(s.lattice).__module__, type(s.graphrag).__module__, s.hierarchical.final_k, pickle.loads(pickle.dumps(s)) == s)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["finrag.lattice.settings", "finrag.graphrag.settings", "20", "True"], p.stdout
    assert pickle.loads(pickle.dumps(get_settings())) == get_settings()


def test_p3_embed_desc_is_the_recorded_choice():
    "[lattice] embed_desc is the internal-node text the embedding LATTICE chose on both development halves (results/p3_hybrid.json)."
    r, desc = results("p3_hybrid.json"), get_settings().lattice.embed_desc
    for name in ("scifact", "financebench"):
        ch = r[name]["embedding_choice_dev"]
        assert max(ch, key=ch.get).startswith(f"lattice embedding ({desc},"), (name, ch)
