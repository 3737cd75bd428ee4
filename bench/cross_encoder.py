"""P2 stage 2 with the cross-encoder finrag trained (nbs/06c_train): candidates chosen on the choosing halves, reported on the other halves.

    python bench/cross_encoder.py [--model DIR] [--fp32 DIR] [--queries 150] [--out results/train_cross_encoder.json]

Protocol (`finrag.protocol`). Each development corpus (`finrag.datasets.load_dev`: FinanceBench, FinQA, TAT-QA dev,
SciFact) is split by `split_queries(ds, 0.5, seed=0)` into a choosing half and a reporting half (at most `--queries` of
each, seeded sample; all where fewer). The cross-encoder never saw any of them (it is trained on `tatqa-train-a` and
`financial-qa-10k`). Candidates, each a `HierarchicalRetriever` through the one evaluation loop
(`finrag.evaluation.eval_retrieval`): stage 1 alone (`[hierarchical] stage1`), and stage 1 then the cross-encoder over
stage 1's best 20, its scores alone (interp weight 1) or interpolated with stage 1's (min-max, weight 0.5), reading the
raw query and documents, and the interpolation gated (`--gates`: where the model's best score of the 20 is below the
gate it is unsure, and stage 1's order stands). `choose_never_below` picks on the choosing halves (nDCG@10, each corpus weighing
the same, never more than 0.005 below stage 1 on any corpus: by the mean, or with `--rule ci` by the paired CI's lower
bound, the reporting gate's own test); `report_vs` reports the choice against stage 1 and against
the best single retriever (BM25, dense) on the reporting halves with paired bootstrap 95 % CIs, per corpus and pooled.
The int8 model is compared with its fp32 export on the reporting halves (the chosen candidate). Speed (nothing else
running is the caller's job): ms per pair int8 vs fp32 on 640 real pairs, stage-2 ms/query at N = 20, 50, 100 on 30
queries. Per-query values are cached under `<cache_dir>/bench/cross_encoder/<model tag>/` (the run resumes).
"""
import argparse, json, os, sys, time, warnings, logging
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
from finrag.protocol import best_mean, record
import numpy as np

KS = (10, 20)
DATASETS = ["financebench", "finqa", "tatqa", "scifact"]
CANDIDATES = {"ce@20": (20, 1.0), "ce@20+interp": (20, 0.5)}   # + `--gates` (ce@20+interp, unsure below the gate: stage 1's order)


SHARED = ("stage1", "bm25", "dense")   # runs that do not depend on the cross-encoder: cached once for every model


def measure(ds, label, build, cache: Path) -> dict:
    "{method, ms_per_query, per_query {qid: {ndcg@10, ndcg@20}}} of one retriever on `ds`, cached."
    f = (cache.parent/"shared" if label in SHARED else cache)/f"{ds.name}.n{len(ds.queries)}.{label}.json"
    if f.exists(): return json.loads(f.read_text())
    from finrag.evaluation import eval_retrieval
    r = eval_retrieval(ds, build, k=KS, progress=True) if isinstance(build, str) else eval_retrieval(ds, build(), k=KS, progress=True)
    out = {"method": r.method, "ms_per_query": round(r.ms_per_query, 1),
           "per_query": {q: {m: round(v[m], 6) for m in (f"ndcg@{k}" for k in KS)} for q, v in r.per_query.items()}}
    f.parent.mkdir(parents=True, exist_ok=True); tmp = f.with_suffix(".tmp"); tmp.write_text(json.dumps(out)); os.replace(tmp, f)
    print(f"  {ds.name} {label}: {r.method} nDCG@10 {r.metrics['ndcg@10']:.4f}, {r.ms_per_query:.0f} ms/query", flush=True)
    return out


def dev_sets(name, data, cap):
    "(the development set, [its choosing half, its reporting half]): `finrag.protocol.split_queries`, at most `cap` queries each."
    from finrag.datasets import load_dev
    from finrag.protocol import split_queries
    ds = load_dev(name, data).judged()
    out = split_queries(ds, 0.5, seed=0, cap=cap)
    for h, part in zip(("choose", "report"), out): part.name = f"{name}.{h}"
    return ds, list(out)


def per_query(m, metric="ndcg@10"): return {q: v[metric] for q, v in m["per_query"].items()}


def rnd(d): return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}


def speed(ce8, ce32, ds, n_queries=30):
    "ms/pair of the int8 and fp32 models on real pairs; stage-2 ms/query at N = 20, 50, 100 (the int8 model, fresh memo)."
    from finrag.hierarchical.pipeline import HierarchicalRetriever, load_ce_scorer
    from finrag.retrieval import doc_text
    qs = sorted(ds.queries)[:n_queries]
    hr = HierarchicalRetriever(ds.corpus, stage2="none")
    first = {q: [d for d, _ in hr.rank(ds.queries[q])][:100] for q in qs}
    pairs = [(ds.queries[q], doc_text(ds.corpus[d])) for q in qs for d in first[q][:20]][:640]
    out = {"pairs": len(pairs)}
    for lab, path in (("int8", ce8), ("fp32", ce32)):
        if path is None: continue
        sc = load_ce_scorer(path)
        sc.score(pairs[0][0], [pairs[0][1]])                   # warm-up
        sc._memo.clear(); t0 = time.perf_counter()
        for q, d in pairs: sc.score(q, [d])
        out[f"ms_per_pair_{lab}_one_at_a_time"] = round(1000*(time.perf_counter() - t0)/len(pairs), 2)
        sc._memo.clear(); t0 = time.perf_counter()
        for q in qs: sc.score(ds.queries[q], [doc_text(ds.corpus[d]) for d in first[q][:20]])
        out[f"ms_per_pair_{lab}_batched"] = round(1000*(time.perf_counter() - t0)/(20*len(qs)), 2)
    sc = load_ce_scorer(ce8)
    for n in (20, 50, 100):
        sc._memo.clear(); t0 = time.perf_counter()
        for q in qs: sc.score(ds.queries[q], [doc_text(ds.corpus[d]) for d in first[q][:n]])
        out[f"stage2_ms_per_query_N{n}"] = round(1000*(time.perf_counter() - t0)/len(qs), 1)
    return out


def redecide(out: Path):
    "Re-apply `finrag.protocol.rule_verdict` to the recorded reporting-half comparison of the best candidate on the choosing halves; the envelope is rewritten with `decision` (its other numbers unchanged)."
    from finrag.protocol import read_record, rule_verdict
    env = read_record(out); res = env["result"]
    table = res["choose_ndcg@10"]
    cand = best_mean({c: table[c]["macro"] for c in ["stage1", *[c for c in table if c != "stage1"]]})
    v = rule_verdict(res["report_ndcg@10"][f"{cand}-stage1"]) if cand != "stage1" else {"replaces": False, "reason": "stage 1 best on the choosing halves"}
    res.setdefault("never_below", {"chosen": res["chosen"], "rule": res.get("rule")})
    if env.get("note"): res.setdefault("envelope_note", env["note"])
    res["decision"] = {"metric": "ndcg@10", "incumbent": "stage1", "candidate": cand, "chosen": cand if v["replaces"] else "stage1", "verdict": v,
                       "how": "bench/cross_encoder.py --redecide: the rule applied to the recorded reporting-half comparison"}
    res["chosen"], res["rule"] = res["decision"]["chosen"], "gain"
    record(out.stem, res, env["params"], folder=out.parent, seconds=env.get("seconds"))
    print(json.dumps(res["decision"], indent=1)); print(f"wrote {out}")


def speed_only(a):
    "Re-measure `speed` (the shipped or `--model` int8 model, `--fp32` beside it) on FinanceBench's reporting half; the envelope's other numbers unchanged."
    from finrag.hierarchical.pipeline import finetuned_ce_dir
    from finrag.protocol import read_record
    out = Path(a.out); env = read_record(out); res = env["result"]
    new = speed(Path(a.model) if a.model else finetuned_ce_dir(), a.fp32, dev_sets("financebench", a.data, a.queries)[1][1])
    res["speed"] = {**res.get("speed", {}), **new, "loadavg": [round(x, 2) for x in os.getloadavg()]}   # keys not re-measured (fp32 without --fp32) kept
    print(json.dumps(res["speed"], indent=1))
    record(out.stem, res, env["params"], folder=out.parent, seconds=env.get("seconds"))
    print(f"wrote {out}")


COMPARE = {"alone@20": (20, 1.0), "interp@20": (20, 0.5), "interp@50": (50, 0.5)}   # how each model is tried as stage 2


def compare_models(a):
    """Trained cross-encoders against each other and the shipped one: each model alone (its order over stage 1's
    best 20) and as stage 2 interpolated with stage 1 over 20 and 50, on the choosing and reporting halves; the default
    (`shipped:interp@20`) is replaced by `finrag.protocol.choose_default`. Writes `--out` (train_cross_encoder_study)."""
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    import transformers
    transformers.logging.set_verbosity_error(); logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    from finrag.config import get_settings
    from finrag.hierarchical.pipeline import HierarchicalRetriever, finetuned_ce_dir, load_ce_scorer
    from finrag.protocol import choose_default, report_vs
    from finrag.train import file_sha256, machine
    models = {"shipped": finetuned_ce_dir()} | {Path(m).name.removesuffix("-int8"): Path(m) for m in a.compare}
    base = get_settings().cache_dir/"bench"/"cross_encoder"
    res = {"protocol": compare_models.__doc__, "configs": {k: {"pool": p, "weight": w} for k, (p, w) in COMPARE.items()},
           "stage1": get_settings().hierarchical.stage1, "machine": machine(), "models": {}, "datasets": {}}
    scorers = {}
    for tag, m in models.items():
        rec = json.loads((m/"finrag_train.json").read_text())
        res["models"][tag] = {"folder": str(m), "sha256": file_sha256(m/"model.onnx"), "bytes": (m/"model.onnx").stat().st_size,
                              "recipe": rec["recipe"], **{k: rec.get(k) for k in ("n_examples", "n_positive", "steps", "seconds", "examples_per_s", "train_loss", "sources")}}
        scorers[tag] = load_ce_scorer(m, min_best=0.0)
    choose, report = {}, {}
    for name in a.datasets:
        ds, (ch, rp) = dev_sets(name, a.data, a.queries)
        res["datasets"][name] = {"choose_n": len(ch.queries), "report_n": len(rp.queries)}
        for part, store in ((ch, choose), (rp, report)):
            store.setdefault("stage1", {})[name] = measure(part, "stage1", lambda: HierarchicalRetriever(ds.corpus, stage2="none"), base/"any")
            for tag, sc in scorers.items():
                for cfg, (pool, w) in COMPARE.items():
                    build = lambda sc=sc, pool=pool, w=w: HierarchicalRetriever(ds.corpus, stage2=sc, stage2_pool=pool, fusion="interp", weight=w, stage2_raw=True)
                    label = f"ce@{pool}" + ("" if w == 1.0 else "+interp")          # the file names of the single-model run's cache
                    store.setdefault(f"{tag}:{cfg}", {})[name] = measure(part, label, build, base/res["models"][tag]["sha256"][:12])
        for lab in ("bm25", "dense"):
            report.setdefault(lab, {})[name] = measure(rp, lab, lab, base/"any")
    for metric in ("ndcg@10", "ndcg@20"):      # the decision by nDCG@10 (as the incumbent's, results/train_cross_encoder.json); P2's own metric beside it
        sc_ch = {c: {n: per_query(v, metric) for n, v in per.items()} for c, per in choose.items()}
        sc_rp = {c: {n: per_query(v, metric) for n, v in per.items()} for c, per in report.items()}
        chosen, dec = choose_default(sc_ch, {c: v for c, v in sc_rp.items() if c in sc_ch}, "shipped:interp@20", n_resamples=a.resamples)
        if metric == "ndcg@10":
            res["decision"] = {"metric": metric, "incumbent": "shipped:interp@20", "candidate": dec["candidate"], "chosen": chosen, "verdict": dec["verdict"]}
        res[f"choose_{metric}"] = {c: {**{n: round(float(np.mean(list(v.values()))), 4) for n, v in per.items()}, "macro": dec["choose_macro"][c]} for c, per in sc_ch.items()}
        res[f"report_{metric}"] = {"means": {c: {n: round(float(np.mean(list(v.values()))), 4) for n, v in per.items()} for c, per in sc_rp.items()},
                                   "ms_per_query": {c: {n: v["ms_per_query"] for n, v in per.items()} for c, per in report.items()}}
        for c in sc_ch:
            if c == "stage1": continue
            for b in ("stage1", "shipped:interp@20"):
                if c != b: res[f"report_{metric}"][f"{c}-{b}"] = {k: (rnd(v) if isinstance(v, dict) else v) for k, v in report_vs(sc_rp, c, b, n_resamples=a.resamples).items()}
    print(json.dumps(res["decision"], indent=1), flush=True)
    record(Path(a.out).stem, res, vars(a), n=res["datasets"], folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"wrote {a.out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="data root (default: $FINRAG_DATA_ROOT, ../shared/data)")
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument("--queries", type=int, default=400, help="queries per half at most (seeded sample)")
    ap.add_argument("--model", default=None, help="the int8 ONNX cross-encoder folder (default: the shipped one)")
    ap.add_argument("--fp32", default=None, help="its fp32 export (int8 vs fp32 on the reporting halves)")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--speed-only", action="store_true", help="only re-measure the speed into the results file's `speed` (run it with nothing else on the cores); fp32 keys need --fp32, else the recorded ones stay")
    ap.add_argument("--gates", default="", help="extra candidates: ce@20+interp with these min_best gates (comma-separated), e.g. 0.1,0.2,0.3")
    ap.add_argument("--rule", default="mean", choices=("mean", "ci"), help="qualify candidates on the choosing halves by the mean or by the CI lower bound")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--out", default="results/train_cross_encoder.json")
    ap.add_argument("--compare", nargs="+", default=None, metavar="DIR", help="trained int8 cross-encoders to compare with the shipped one (writes --out, e.g. results/train_cross_encoder_study.json)")
    ap.add_argument("--redecide", action="store_true", help="only re-apply the protocol's rule to the reporting-half comparisons the results file holds (no run)")
    a = ap.parse_args()
    if a.redecide: return redecide(Path(a.out))
    if a.speed_only: return speed_only(a)
    if a.compare: return compare_models(a)
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    import transformers
    transformers.logging.set_verbosity_error(); logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    from finrag.config import get_settings
    from finrag.hierarchical.pipeline import HierarchicalRetriever, finetuned_ce_dir, load_ce_scorer
    from finrag.protocol import choose_default, choose_never_below, report_vs
    from finrag.train import file_sha256, machine
    model = Path(a.model) if a.model else finetuned_ce_dir()
    onnx_sha = file_sha256(model/"model.onnx")
    cache = get_settings().cache_dir/"bench"/"cross_encoder"/onnx_sha[:12]
    rec = json.loads((model/"finrag_train.json").read_text())
    res = {"protocol": __doc__.split("\n\n", 2)[2].strip(), "model": str(model), "model_sha256": onnx_sha,
           "recipe": rec["recipe"], "training": {k: rec.get(k) for k in ("sources", "n_examples", "n_positive", "steps", "seconds", "examples_per_s", "train_loss", "machine")},
           "stage1": get_settings().hierarchical.stage1, "candidates": {k: {"pool": p, "weight": w} for k, (p, w) in CANDIDATES.items()},
           "machine": machine(), "datasets": {}}
    ce8 = load_ce_scorer(model, min_best=0.0)
    ce32 = load_ce_scorer(a.fp32, min_best=0.0) if a.fp32 else None
    scorers = {}
    for g in [float(x) for x in a.gates.split(",") if x.strip()]:
        lab = f"ce@20+interp>gate{g:g}"
        CANDIDATES[lab] = (20, 0.5)
        sc = load_ce_scorer(model, min_best=g); sc._memo = ce8._memo     # the same scores, gated: nothing scored twice
        scorers[lab] = sc
    res["candidates"] = {k: {"pool": p, "weight": w, "min_best": getattr(scorers.get(k), "min_best", 0.0)} for k, (p, w) in CANDIDATES.items()}
    def cand(ds, pool, w, sc):
        return lambda: HierarchicalRetriever(ds.corpus, stage2=sc, stage2_pool=pool, fusion="interp", weight=w, stage2_raw=True)
    choose, report, corpora = {}, {}, {}
    for name in a.datasets:
        ds, (ch, rp) = dev_sets(name, a.data, a.queries)
        corpora[name] = ds
        res["datasets"][name] = {"choose_n": len(ch.queries), "report_n": len(rp.queries)}
        for part, store in ((ch, choose), (rp, report)):
            store.setdefault("stage1", {})[name] = measure(part, "stage1", lambda: HierarchicalRetriever(ds.corpus, stage2="none"), cache)
            for lab, (p, w) in CANDIDATES.items():
                store.setdefault(lab, {})[name] = measure(part, lab, cand(ds, p, w, scorers.get(lab, ce8)), cache)
        for lab in ("bm25", "dense"):
            report.setdefault(lab, {})[name] = measure(rp, lab, lab, cache)
    best = {}
    for metric in ("ndcg@10", "ndcg@20"):
        sc = {c: {n: per_query(v, metric) for n, v in per.items()} for c, per in choose.items()}
        best[metric], table = choose_never_below(sc, "stage1", ci=a.rule == "ci", n_resamples=a.resamples)
        res[f"choose_{metric}"] = {c: rnd(t) for c, t in table.items()}
    legacy = best["ndcg@10"]                               # the never-below pick, kept on record (`res["never_below"]`)
    res["never_below"] = {"chosen": legacy, "rule": a.rule}
    sc_ch = {c: {n: per_query(v) for n, v in per.items()} for c, per in choose.items()}
    sc_rp = {c: {n: per_query(v) for n, v in per.items()} for c, per in report.items() if c in choose}
    chosen, dec = choose_default(sc_ch, sc_rp, "stage1", n_resamples=a.resamples)    # the protocol's rule (finrag.protocol)
    res["decision"] = {"metric": "ndcg@10", "incumbent": "stage1", "candidate": dec["candidate"], "chosen": chosen, "verdict": dec["verdict"]}
    res["chosen"], res["rule"] = chosen, "gain"
    print(f"the default by the protocol's rule (nDCG@10): {chosen} ({dec['verdict']})", flush=True)
    for metric in ("ndcg@10", "ndcg@20"):
        sc = {c: {n: per_query(v, metric) for n, v in per.items()} for c, per in report.items()}
        res[f"report_{metric}"] = {"means": {c: {n: round(float(np.mean(list(v.values()))), 4) for n, v in per.items()} for c, per in sc.items()},
                                   "ms_per_query": {c: {n: v["ms_per_query"] for n, v in per.items()} for c, per in report.items()}}
        for base in ("stage1", "bm25", "dense"):
            if chosen == base: continue
            r = report_vs(sc, chosen, base, n_resamples=a.resamples)
            res[f"report_{metric}"][f"{chosen}-{base}"] = {k: (rnd(v) if isinstance(v, dict) else v) for k, v in r.items()}
        for c in CANDIDATES:
            if c != chosen:
                r = report_vs(sc, c, "stage1", n_resamples=a.resamples)
                res[f"report_{metric}"][f"{c}-stage1"] = {k: (rnd(v) if isinstance(v, dict) else v) for k, v in r.items()}
    table = res["choose_ndcg@10"]
    best_ce = best_mean({c: table[c]["macro"] for c in table if c != "stage1"})   # what `--stage2 ce` runs
    res["best_ce_candidate"] = best_ce
    compare = chosen if chosen != "stage1" else best_ce
    if ce32 is not None:
        p, w = CANDIDATES[compare]
        diffs = {}
        for name in a.datasets:
            ds = corpora[name]; rp = dev_sets(name, a.data, a.queries)[1][1]
            g32 = ce32
            if compare in scorers: g32 = load_ce_scorer(a.fp32, min_best=scorers[compare].min_best); g32._memo = ce32._memo
            m32 = measure(rp, f"{compare}.fp32", cand(ds, p, w, g32), cache)
            x8, x32 = per_query(report[compare][name]), per_query(m32)
            diffs[name] = {"int8": round(float(np.mean(list(x8.values()))), 4), "fp32": round(float(np.mean(list(x32.values()))), 4),
                           "int8-fp32": round(float(np.mean([x8[q] - x32[q] for q in x8])), 4), "n": len(x8)}
        res["int8_vs_fp32_ndcg@10"] = {"candidate": compare, **diffs}
        res["int8_within_0.005"] = all(abs(v["int8-fp32"]) <= 0.005 for v in diffs.values())
    for c in ["stage1", *CANDIDATES]:                      # stage 1 and every candidate against each single retriever, pooled
        sc10 = {k: {n: per_query(v) for n, v in per.items()} for k, per in report.items()}
        res["report_ndcg@10"][f"{c}-best_single"] = {b: report_vs(sc10, c, b, n_resamples=a.resamples)["pooled"] for b in ("bm25", "dense")}
    if not a.no_speed:
        res["speed"] = speed(model, a.fp32, dev_sets("financebench", a.data, a.queries)[1][1])
        res["speed"]["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    r10 = res["report_ndcg@10"]
    print(json.dumps({k: v for k, v in r10.items() if k != "ms_per_query"}, indent=1)[:4000])
    if "speed" in res: print(res["speed"])
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    record(Path(a.out).stem, res, vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
