"""P2 `finrag answer` abstention: which cheap score tells "the retrieved documents answer this" from "they do not", and where to cut.

    python bench/p2_abstention.py [--data ../shared/data] [--datasets financebench finqa tatqa] [--max-fa 0.05] [--out results/p2_abstention.json]

Per development corpus (`finrag.datasets.load_dev`: FinanceBench, FinQA subset, TAT-QA dev), every judged query is asked
twice against P2's retriever exactly as `finrag answer` builds it (`HierarchicalRetriever(corpus)`: rule-based
pre-retrieval, stage 1 `[hierarchical] stage1`, no stage 2), keeping the top `[hierarchical] final_k`:

- **answerable**: against the whole corpus;
- **unanswerable**: with its gold documents removed (`rank(excluded=gold)`); for FinanceBench also with every passage of the
  gold's company removed (the title's company, e.g. `3M_2018_10K` -> `3M`: the query is about a company absent from the
  corpus, the case a review found); and `--foreign` (150) queries of the other corpora asked against this one (`other_corpus`:
  financial questions about other reports).

The candidate scores are `finrag.hierarchical.longcontext.evidence_scores`: stage 1's top score (`stage1_top`, z units),
the MiniLM cosine of the raw question to stage 1's top document (`cosine_top1`), the best cosine over the top k
(`cosine_max`) and the IDF-weighted share of the question's terms found in the top k (`term_coverage`; document
frequencies without the removed documents). The queries are split in halves (`finrag.protocol.split_queries(ds, 0.5, seed=0)`, queries
sharing a gold document together; a foreign query keeps its own half). On the `train` halves the score with the larger ROC
AUC (`finrag.hierarchical.eval.roc_auc`) averaged over the corpora is chosen, and its threshold is the largest that abstains on at most `--max-fa` of the
answerable train queries; on the `test` halves the false-abstention rate (answerable queries abstained on) and the
correct-abstention rate (unanswerable queries abstained on) are reported per corpus and pooled, with n and Wilson 95 % CIs
(`scipy.stats.binomtest(...).proportion_ci`). Cheap: two retrievals per query (about 0.06 s each); a few minutes in all.
"""
import argparse, os, sys, time, warnings
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
from finrag.protocol import best_mean, record
import numpy as np

SCORES = ("stage1_top", "cosine_top1", "cosine_max", "term_coverage")


def company(title: str) -> str:
    "FinanceBench's company from a passage title (`3M_2018_10K` -> `3M`; `AMERICANEXPRESS_2022_10K` -> `AMERICANEXPRESS`)."
    parts = title.split("_")
    return "_".join(p for p in parts[:-2]) if len(parts) >= 3 else title


def measure(ds, k: int, name: str, foreign: dict | None = None) -> list[dict]:
    "One row per (query, condition): the candidate scores; `foreign` {qid: text}: other corpora's queries (condition `other_corpus`)."
    from finrag.hierarchical.pipeline import HierarchicalRetriever
    from finrag.hierarchical.longcontext import evidence_scores
    hr = HierarchicalRetriever(ds.corpus, stage2="none")
    by_company = {}
    if name == "financebench":
        for d, v in ds.corpus.items(): by_company.setdefault(company(v.get("title", "")), set()).add(d)
    rows = []
    for i, (q, text) in enumerate(ds.queries.items()):
        gold = {d for d, g in ds.qrels.get(q, {}).items() if g > 0}
        conds = [("answerable", set()), ("gold_removed", gold)]
        if by_company:
            conds.append(("company_removed", set().union(*(by_company.get(company(ds.corpus[d].get("title", "")), {d}) for d in gold if d in ds.corpus))))
        for cond, ex in conds:
            r = hr.rank(text, excluded=ex, scores=True)[:k]
            s = evidence_scores(text, [d for d, _, _ in r], [ds.corpus[d] for d, _, _ in r], hr, [sc for _, sc, _ in r], [ds.corpus[d] for d in ex if d in ds.corpus])
            rows.append({"qid": q, "condition": cond, "n_excluded": len(ex), "top": r[0][0] if r else None, **{n: round(float(s[n]), 5) for n in SCORES}})
        if i % 200 == 0: print(f"  {name}: {i}/{len(ds.queries)}", flush=True)
    for q, text in (foreign or {}).items():
        r = hr.rank(text, scores=True)[:k]
        s = evidence_scores(text, [d for d, _, _ in r], [ds.corpus[d] for d, _, _ in r], hr, [sc for _, sc, _ in r])
        rows.append({"qid": q, "condition": "other_corpus", "n_excluded": 0, "top": r[0][0] if r else None, **{n: round(float(s[n]), 5) for n in SCORES}})
    return rows


def rate(x: np.ndarray) -> dict:
    "n, k, the rate and its Wilson 95 % CI."
    from scipy.stats import binomtest
    n, k = int(len(x)), int(np.sum(x))
    if n == 0: return {"n": 0}
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return {"n": n, "k": k, "rate": round(k/n, 4), "ci95": [round(float(ci.low), 4), round(float(ci.high), 4)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="data root (default: finrag.download.data_root())")
    ap.add_argument("--datasets", nargs="+", default=["financebench", "finqa", "tatqa"])
    ap.add_argument("--max-fa", type=float, default=0.05, help="largest false-abstention rate allowed on the train halves")
    ap.add_argument("--foreign", type=int, default=150, help="other corpora's queries asked against each corpus (seeded sample)")
    ap.add_argument("--out", default="results/p2_abstention.json")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    from finrag.config import get_settings
    from finrag.datasets import load_dev
    from finrag.protocol import split_queries
    from finrag.hierarchical.eval import roc_auc
    k = get_settings().hierarchical.final_k
    print(f"load average {os.getloadavg()} (2 shared cores); k = {k}", flush=True)
    rows, half, dss = [], {}, {}
    t0 = time.perf_counter()
    for name in a.datasets:
        ds = dss[name] = load_dev(name, a.data).judged()
        tr, te = split_queries(ds, 0.5, seed=0)
        half |= {(name, q): "train" for q in tr.queries} | {(name, q): "test" for q in te.queries}
    import random
    for name, ds in dss.items():
        pool = sorted((o, q) for o in dss if o != name for q in dss[o].queries)
        pick = random.Random(0).sample(pool, min(a.foreign, len(pool)))
        t = time.perf_counter()
        rs = measure(ds, k, name, {f"{o}:{q}": dss[o].queries[q] for o, q in pick})
        for r in rs: r.update(dataset=name, half=half.get(tuple(r["qid"].split(":", 1)) if r["condition"] == "other_corpus" else (name, r["qid"])))
        rows += rs
        print(f"{name}: {len(ds.queries)} queries + {len(pick)} from the other corpora, {len(rs)} rows in {time.perf_counter() - t:.0f} s", flush=True)
    secs = time.perf_counter() - t0
    sel = lambda h, c, d=None: [r for r in rows if r["half"] == h and (r["condition"] == "answerable") == (c == "answerable")
                                and (c in ("answerable", "unanswerable") or r["condition"] == c) and (d is None or r["dataset"] == d)]
    auc = {s: {h: round(roc_auc([r[s] for r in sel(h, "answerable")], [r[s] for r in sel(h, "unanswerable")]), 4) for h in ("train", "test")} for s in SCORES}
    auc_d = {s: {d: roc_auc([r[s] for r in sel("train", "answerable", d)], [r[s] for r in sel("train", "unanswerable", d)]) for d in a.datasets} for s in SCORES}
    mean_auc = {s: round(float(np.mean(list(v.values()))), 4) for s, v in auc_d.items()}
    chosen = best_mean({s: mean_auc[s] for s in SCORES})        # each corpus counts once (TAT-QA has 6x the queries)
    pos = np.sort([r[chosen] for r in sel("train", "answerable")])
    thr = float(pos[int(np.floor(a.max_fa*len(pos)))])       # abstain when score < thr: at most max_fa of the train answerable below
    thr = float(np.floor(thr*1000)/1000)                     # a round setting, never above the measured quantile
    report = {}
    for h in ("train", "test"):
        report[h] = {}
        for d in [*a.datasets, None]:
            ans = np.array([r[chosen] < thr for r in sel(h, "answerable", d)])
            conds = {"unanswerable": sel(h, "unanswerable", d)} | {c: sel(h, c, d) for c in ("gold_removed", "company_removed", "other_corpus")}
            report[h][d or "pooled"] = {"false_abstention": rate(ans)} | {
                f"correct_abstention:{c}": rate(np.array([r[chosen] < thr for r in v])) for c, v in conds.items() if v}
    res = {"protocol": __doc__.split("\n\n", 2)[2].strip(), "k": k, "max_false_abstention_train": a.max_fa,
           "auc": auc, "train_mean_auc_over_corpora": mean_auc, "chosen_score": chosen, "threshold": thr, "rates": report,
           "per_dataset_auc_test": {d: {s: round(roc_auc([r[s] for r in sel("test", "answerable", d)], [r[s] for r in sel("test", "unanswerable", d)]), 4) for s in SCORES} for d in a.datasets},
           "seconds": round(secs, 1), "load_average": os.getloadavg(), "rows": rows}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    record(Path(a.out).stem, res, vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"AUC (train/test): {auc}\nchosen {chosen}, threshold {thr}")
    for d, v in report["test"].items(): print(f"test {d}: " + "  ".join(f"{m} {x.get('rate')} {x.get('ci95')} (n={x['n']})" for m, x in v.items()))
    print(f"wrote {a.out} ({secs:.0f} s; load average {os.getloadavg()})")


if __name__ == "__main__":
    sys.exit(main())
