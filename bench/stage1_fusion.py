"""P2 stage 1: is the default first stage ever below its best member? nDCG@10/@20 with paired CIs per development corpus.

    python bench/stage1_fusion.py [--data ../shared/data] [--datasets financebench finqa tatqa scifact] [--out results/p2_stage1_fusion.json]

Per development corpus (`finrag.datasets.load_dev`: FinanceBench, FinQA subset, TAT-QA dev, SciFact train), over ALL
judged queries, the methods exactly as `finrag eval retrieval` runs them (`finrag.evaluation.eval_retrieval`):

- `bm25+pre`: `--method bm25` (rule-based pre-retrieval on, its default);
- `dense`: `--method dense` (MiniLM on the raw text);
- `rrf`: `--method hierarchical --stage1 hybrid`, stage 1 alone: RRF of BM25 (pre-retrieved text) and MiniLM (raw text), the old default;
- `default`: `--method hierarchical` with its defaults (stage 1 `[hierarchical] stage1`, no stage 2);
- `zsum:auto[:power]` (a candidate): z-sum with each member's z-scores weighted by its label-free pseudo-query MRR@10 on that
  corpus (`finrag.hierarchical.pseudo.pseudo_weights`: held-out sentences / table rows searched for their source document);
- `splade` (reported, not a member of the criterion): `--stage1 splade`, splade-tiny on the raw text (the `splade` extra;
  `--no-splade` skips it and the candidates that use it: `zsum3`, `rrf3`, `agree3`).

The queries are split in halves (`finrag.protocol.split_queries(ds, 0.5, seed=0)`): the stage-1 fusion is chosen
on the `train` halves (the candidates of `--candidates`, rule: the best worst-case difference to the best member over the
corpora) and reported on the `test` halves; both halves and all queries are in the JSON, and every candidate's test-half
and all-query difference to the best member under `candidates`. For each: n, the mean per method,
and the default minus the best of {bm25+pre, dense, rrf} on that half (paired bootstrap 95 % CI over queries,
`finrag.stats.paired_bootstrap_ci`; sign-flip randomisation p, `paired_randomisation_test`). Per-query values are cached under
`<cache_dir>/bench/stage1_fusion/` by dataset and method (the run resumes where it stopped; delete that folder after changing a
method's code; corpus embeddings are cached by `corpus_embeddings`). Two shared cores: about 20 minutes with cached embeddings,
plus about 16 minutes to embed SciFact's 5,183 documents once with MiniLM and as long again with SPLADE.
"""
import argparse, json, os, sys, time, warnings
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
from finrag.protocol import best_mean, best_worst_case, record
import numpy as np

MEMBERS = ("bm25+pre", "dense", "rrf")
METHODS = {"bm25+pre": ("bm25", {}), "dense": ("dense", {}), "rrf": ("hierarchical", {"stage1": "hybrid", "stage2": None}),
           "default": ("hierarchical", {"stage2": None})}
EXTRA = {"splade": ("hierarchical", {"stage1": "splade", "stage2": None})}   # a third member (splade extra), reported, not in the criterion
KS = (10, 20)


def per_query(ds, label, method, opts, cache: Path) -> dict:
    "{qid: {ndcg@10, ndcg@20}} of one method on all judged queries, from the cache or measured (progress bar)."
    from finrag.methods import eval_retrieval   # every paper's methods registered (hierarchical)
    from finrag.config import get_settings
    DEFAULT_STAGE1 = get_settings().hierarchical.stage1
    f = cache/f"{ds.name}.{label if label != 'default' else 'default-' + DEFAULT_STAGE1}.json"   # a new default is measured anew
    if f.exists(): return json.loads(f.read_text())
    t0 = time.perf_counter()
    r = eval_retrieval(ds, method, k=KS, progress=True, **opts)
    out = {"method": r.method, "seconds": round(time.perf_counter() - t0, 1), "ms_per_query": round(r.ms_per_query, 2),
           "per_query": {q: {m: round(v[m], 6) for m in (f"ndcg@{k}" for k in KS)} for q, v in r.per_query.items()}}
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp"); tmp.write_text(json.dumps(out)); os.replace(tmp, f)
    print(f"  {ds.name} {label}: {r.method} nDCG@10 {r.metrics['ndcg@10']:.4f} ({out['seconds']} s)", flush=True)
    return out


def half_table(pq: dict, qids: list, new: str, resamples: int) -> dict:
    "n, means, the best member and new − best member (paired CI, randomisation p) over `qids`."
    from finrag.stats import paired_bootstrap_ci, paired_randomisation_test
    row = {"n": len(qids)}
    for k in KS:
        m = f"ndcg@{k}"
        x = {lab: np.array([pq[lab]["per_query"][q][m] for q in qids]) for lab in pq}
        row[m] = {lab: round(float(v.mean()), 4) for lab, v in x.items()}
        best = best_mean({lab: x[lab].mean() for lab in MEMBERS})
        ci = paired_bootstrap_ci(x[new], x[best], n_resamples=resamples)
        rt = paired_randomisation_test(x[new], x[best])
        row[f"{m}:best_member"] = best
        row[f"{m}:{new}-best"] = {"mean_diff": round(ci["mean_diff"], 4), "ci95": [round(ci["ci_low"], 4), round(ci["ci_high"], 4)],
                                  "p_randomisation": round(rt["p"], 4)}
        if new != "rrf":
            ci_r = paired_bootstrap_ci(x[new], x["rrf"], n_resamples=resamples)
            row[f"{m}:{new}-rrf"] = {"mean_diff": round(ci_r["mean_diff"], 4), "ci95": [round(ci_r["ci_low"], 4), round(ci_r["ci_high"], 4)]}
    row["meets@10"] = bool(row["ndcg@10"][new] >= row["ndcg@10"][row["ndcg@10:best_member"]] - 0.005)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="shared data folder (default: ../shared/data next to the repo)")
    ap.add_argument("--datasets", nargs="+", default=["financebench", "finqa", "tatqa", "scifact"])
    ap.add_argument("--candidates", nargs="+", default=["hybrid", "zsum", "zsum:1.5", "zsum:2", "zsum:auto", "zsum3", "rrf3", "agree3"],
                    help="stage-1 fusions compared on the train halves (make_scorer names; zsum3/rrf3/agree3 and --splade need the splade extra)")
    ap.add_argument("--no-splade", action="store_true", help="skip the SPLADE member and the candidates that use it")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    ap.add_argument("--out", default="results/p2_stage1_fusion.json")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    from finrag.config import get_settings
    from finrag.datasets import load_dev
    DEFAULT_STAGE1 = get_settings().hierarchical.stage1
    from finrag.protocol import split_queries
    cache = get_settings().cache_dir/"bench"/"stage1_fusion"
    print(f"cache {cache}; load average {os.getloadavg()[0]:.1f} (2 shared cores)", flush=True)
    same = {"hybrid": "rrf", DEFAULT_STAGE1: "default"}            # candidates measured already as a method
    if a.no_splade: a.candidates = [c for c in a.candidates if c not in ("zsum3", "rrf3", "agree3", "splade")]
    methods = dict(METHODS) | ({} if a.no_splade else EXTRA) | {f"cand:{c}": ("hierarchical", {"stage1": c, "stage2": None}) for c in a.candidates if c not in same}
    cand = {c: same.get(c, f"cand:{c}") for c in a.candidates}
    res = {"protocol": __doc__.split("\n\n", 2)[2].strip(), "default_stage1": DEFAULT_STAGE1, "datasets": {}, "choice": {}}
    splits, pqs = {}, {}
    for name in a.datasets:
        ds = load_dev(name, a.data).judged()
        pq = {lab: per_query(ds, lab, m, o, cache) for lab, (m, o) in methods.items()}
        tr, te = split_queries(ds, 0.5, seed=0)
        splits[name], pqs[name] = (list(ds.queries), list(tr.queries), list(te.queries)), pq
    # the choice, on the train halves only: candidate - best member, worst corpus first
    for c in a.candidates:
        diffs = {}
        for name in a.datasets:
            t = half_table(pqs[name], splits[name][1], cand[c], a.resamples)
            diffs[name] = t["ndcg@10"][cand[c]] - t["ndcg@10"][t["ndcg@10:best_member"]]
        res["choice"][c] = {"train_ndcg@10_minus_best_member": {n: round(v, 4) for n, v in diffs.items()}, "worst": round(min(diffs.values()), 4)}
    res["choice"]["chosen"] = best_worst_case({c: res["choice"][c]["train_ndcg@10_minus_best_member"] for c in a.candidates})
    # every candidate on the test halves and on all queries (reported; the choice above saw only the train halves)
    res["candidates"] = {}
    for c in a.candidates:
        res["candidates"][c] = {}
        for name in a.datasets:
            all_q, tr, te = splits[name]
            pq = {lab: v for lab, v in pqs[name].items() if not lab.startswith("cand:") or lab == cand[c]}
            res["candidates"][c][name] = {}
            for h, qs in (("test", te), ("all", all_q)):
                t = half_table(pq, qs, cand[c], a.resamples)
                res["candidates"][c][name][h] = {"n": t["n"], "ndcg@10": t["ndcg@10"][cand[c]], "best_member": t["ndcg@10:best_member"],
                                                 "minus_best": t[f"ndcg@10:{cand[c]}-best"], "meets": t["meets@10"]}
        print(f"candidate {c}: test " + "  ".join(f"{n} {v['test']['ndcg@10']:.3f} ({v['test']['minus_best']['mean_diff']:+.3f} "
                                                   f"{v['test']['minus_best']['ci95']})" for n, v in res["candidates"][c].items()), flush=True)
    for name in a.datasets:
        pq = {lab: v for lab, v in pqs[name].items() if not lab.startswith("cand:")}
        all_q, tr, te = splits[name]
        res["datasets"][name] = {"method_names": {lab: v["method"] for lab, v in pq.items()},
                                 "ms_per_query": {lab: v["ms_per_query"] for lab, v in pq.items()},
                                 **{h: half_table(pq, qs, "default", a.resamples) for h, qs in (("all", all_q), ("train", tr), ("test", te))}}
        d = res["datasets"][name]
        print(f"{name}: n {d['all']['n']} (test {d['test']['n']})  " + "  ".join(f"{lab} {d['test']['ndcg@10'][lab]:.3f}" for lab in METHODS) +
              f"  test default-best {d['test']['ndcg@10:default-best']}", flush=True)
    res["criterion"] = {h: {n: res["datasets"][n][h]["meets@10"] for n in a.datasets} for h in ("all", "train", "test")}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    record(Path(a.out).stem, res, vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"chosen on the train halves: {res['choice']['chosen']}; criterion (default >= best member - 0.005 nDCG@10): {res['criterion']}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
