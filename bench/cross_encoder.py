"""P2 stage 2 (issue 26): the cross-encoder of `finrag train cross-encoder` over stage 1's best 20, against stage 1 alone, on the test halves.

    python bench/cross_encoder.py [--data ../shared/data] [--queries 100] [--pool 20] [--out results/p2_cross_encoder.json]

Per development corpus (`finrag.datasets.load_dev`): the test half of `split_queries(ds, 0.5, seed=0)` (the cross-encoder
was trained on the other half only), at most `--queries` of it (seeded sample; all where fewer). Through the one
evaluation loop (`finrag.retrieval.eval_retrieval` of a `HierarchicalRetriever`):

- `stage1`: the default pipeline, stage 1 alone (`[hierarchical] stage1`, no stage 2);
- `ce`: stage 1, then the cross-encoder re-scores stage 1's best `--pool` (raw query and documents, the query window of
  its recipe), its order alone (`fusion none`);
- `ce+interp`: the same scores interpolated with stage 1's (min-max, `[hierarchical] weight` of stage 2 = 0.2: not
  tuned on these queries).

For each: n, nDCG@10, nDCG@20, ms/query, and the difference to `stage1` (paired bootstrap 95 % CI over queries,
`finrag.stats.paired_bootstrap_ci`; sign-flip randomisation p). The cross-encoder becomes a default only if its CI is
above stage 1 on every corpus. Per-query values are cached under `<cache_dir>/bench/cross_encoder/` by model, dataset
and variant (the run resumes; delete the folder after retraining).
"""
import argparse, json, os, random, sys, warnings, logging
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
import numpy as np

KS = (10, 20)


def measure(ds, label, build, cache: Path) -> dict:
    "{method, ms_per_query, per_query {qid: {ndcg@10, ndcg@20}}} of one retriever, cached."
    f = cache/f"{ds.name}.{label}.json"
    if f.exists(): return json.loads(f.read_text())
    from finrag.retrieval import eval_retrieval
    r = eval_retrieval(ds, build(), k=KS, progress=True)
    out = {"method": r.method, "ms_per_query": round(r.ms_per_query, 1),
           "per_query": {q: {m: round(v[m], 6) for m in (f"ndcg@{k}" for k in KS)} for q, v in r.per_query.items()}}
    f.parent.mkdir(parents=True, exist_ok=True); tmp = f.with_suffix(".tmp"); tmp.write_text(json.dumps(out)); os.replace(tmp, f)
    print(f"  {ds.name} {label}: {r.method} nDCG@10 {r.metrics['ndcg@10']:.4f}, {r.ms_per_query:.0f} ms/query", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="shared data folder (default: ../shared/data next to the repo)")
    ap.add_argument("--datasets", nargs="+", default=["financebench", "finqa", "tatqa", "scifact"])
    ap.add_argument("--queries", type=int, default=100, help="test-half queries per corpus at most (seeded sample)")
    ap.add_argument("--pool", type=int, default=20, help="stage 1's best documents the cross-encoder re-scores")
    ap.add_argument("--model", default=None, help="cross-encoder folder (default: finrag.hierarchical.pipeline.finetuned_ce_dir())")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--out", default="results/p2_cross_encoder.json")
    a = ap.parse_args()
    import torch, transformers
    torch.set_num_threads(a.threads)
    transformers.logging.set_verbosity_error(); logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    from finrag.config import get_settings
    from finrag.datasets import load_dev
    from finrag.hierarchical.pipeline import HierarchicalRetriever, finetuned_ce_dir, make_scorer
    from finrag.hierarchical.rerank import split_queries
    from finrag.stats import paired_bootstrap_ci, paired_randomisation_test
    model = Path(a.model) if a.model else finetuned_ce_dir()
    info = json.loads((model/"finrag_finetune.json").read_text())
    tag = f"{model.name}-{int((model/'finrag_finetune.json').stat().st_mtime)}"
    cache = get_settings().cache_dir/"bench"/"cross_encoder"/tag
    h = get_settings().hierarchical
    res = {"protocol": __doc__.split("\n\n", 2)[2].strip(), "model": {k: info.get(k) for k in
           ("base_model", "n_pairs", "n_positive", "epochs", "lr", "max_length", "window", "steps", "train_loss", "seconds", "per_dataset", "recipe")},
           "stage1": h.stage1, "pool": a.pool, "threads": a.threads, "loadavg_start": os.getloadavg(), "datasets": {}}
    for name in a.datasets:
        ds = load_dev(name, a.data).judged()
        _, te = split_queries(ds, 0.5, seed=0)
        qs = sorted(te.queries)
        te = te.subset(sorted(random.Random(0).sample(qs, a.queries))) if len(qs) > a.queries else te
        ce = make_scorer(f"ce:{model}", ds.corpus) if a.model else make_scorer("ce", ds.corpus)
        pq = {"stage1": measure(te, "stage1", lambda: HierarchicalRetriever(ds.corpus, stage2="none"), cache),
              "ce": measure(te, "ce", lambda: HierarchicalRetriever(ds.corpus, stage2=ce, stage2_pool=a.pool, fusion="none", stage2_raw=True), cache),
              "ce+interp": measure(te, "ce+interp", lambda: HierarchicalRetriever(ds.corpus, stage2=ce, stage2_pool=a.pool, fusion="interp",
                                                                                  stage2_raw=True), cache)}
        qids = list(te.queries)
        row = {"n": len(qids), "test_half_n": len(qs), "methods": {lab: v["method"] for lab, v in pq.items()},
               "ms_per_query": {lab: v["ms_per_query"] for lab, v in pq.items()}}
        for k in KS:
            m = f"ndcg@{k}"
            x = {lab: np.array([v["per_query"][q][m] for q in qids]) for lab, v in pq.items()}
            row[m] = {lab: round(float(v.mean()), 4) for lab, v in x.items()}
            for lab in ("ce", "ce+interp"):
                ci = paired_bootstrap_ci(x[lab], x["stage1"], n_resamples=a.resamples)
                row[f"{m}:{lab}-stage1"] = {"mean_diff": round(ci["mean_diff"], 4), "ci95": [round(ci["ci_low"], 4), round(ci["ci_high"], 4)],
                                            "p_randomisation": round(paired_randomisation_test(x[lab], x["stage1"])["p"], 4)}
        res["datasets"][name] = row
        print(f"{name}: n {row['n']}  " + "  ".join(f"{lab} {row['ndcg@10'][lab]:.3f}" for lab in pq) +
              f"  ce-stage1 {row['ndcg@10:ce-stage1']}  ce+interp-stage1 {row['ndcg@10:ce+interp-stage1']}", flush=True)
    res["loadavg_end"] = os.getloadavg()
    res["default"] = {lab: all(res["datasets"][n][f"ndcg@10:{lab}-stage1"]["ci95"][0] > 0 for n in a.datasets) for lab in ("ce", "ce+interp")}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"above stage 1 on every corpus (CI > 0): {res['default']}; wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
