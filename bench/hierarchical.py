"""P2 benchmark: per-stage query latency and throughput of the hierarchical retriever on each development dataset.

    python bench/hierarchical.py [--data ../shared/data] [--queries 20] [--stage2 maxsim ce] [--llm-queries 0] [--threads 1] [--emb-cache DIR] [--json OUT]

Per dataset (FinanceBench 180 docs, FinQA subset 87 docs, TAT-QA dev 278 docs; every query scores the WHOLE corpus
in stage 1): the query's pre-retrieval steps (rule-based, no LLM), stage 1 (bm25, biencoder, hybrid, zsum over all
documents, keep 100), stage 2 (each `--stage2` scorer over the 100, keep 20), the whole cascade without LLM
steps (the default stage 1, then the stage 2), **the default pipeline** exactly as `finrag eval retrieval --method
hierarchical` builds it (`HierarchicalRetriever(corpus)`, every setting from `[hierarchical]`), and with
`--llm-queries N` the LLM stage 2 (`--stage2 llm`: the judge's P(yes) over stage 1's best `llm_pool`) on N queries of
FinanceBench, in s/query with LLM calls and tokens per query (uncached calls unless the LLM cache holds them). Latency p50/p95 in ms per query, throughput in queries/s (1 / mean). Warm: corpus vectors are computed before
timing (cached on disk), MaxSim's document token vectors are computed before timing; the cross-encoder's pair memo is cleared before each query so stage 2 is really scored.
Numbers are printed, never asserted (targets from the P2 issue: stage 1 over a few hundred documents <= 50 ms/query;
the whole cascade without LLM <= 1 s/query).
"""
import argparse, os, random, time, warnings, logging
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
from finrag.protocol import record
import numpy as np


def stats(ts):
    a = np.array(ts)*1000
    return {"p50_ms": round(float(np.percentile(a, 50)), 1), "p95_ms": round(float(np.percentile(a, 95)), 1),
            "mean_ms": round(float(a.mean()), 1), "qps": round(1000/float(a.mean()), 2), "n": len(ts)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="shared data folder (default: ../shared/data next to the repo)")
    ap.add_argument("--queries", type=int, default=20, help="timed queries per dataset (after 2 warm-up queries)")
    ap.add_argument("--stage2", nargs="+", default=["maxsim", "ce"], help="stage-2 scorers to time")
    ap.add_argument("--ce-queries", type=int, default=5, help="timed queries for cross-encoder stage 2 (about 100 pairs each)")
    ap.add_argument("--llm-queries", type=int, default=0, help="time the LLM stage 2 on this many FinanceBench queries (0 = not)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--emb-cache", default=None, help="corpus-vector cache folder (default: the settings' cache_dir/emb)")
    ap.add_argument("--json", default=None, help="also write the numbers to this JSON file")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    import torch, transformers
    torch.set_num_threads(a.threads)
    transformers.logging.set_verbosity_error(); logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    from finrag.datasets import load_dev
    from finrag.hierarchical.preretrieval import preprocess_dataset
    from finrag.hierarchical.pipeline import make_scorer, HierarchicalRetriever
    from finrag.hierarchical.preretrieval import PreRetrievalConfig
    SHIPPED_PRERETRIEVAL = PreRetrievalConfig.from_settings()
    from finrag.models import get_embedder
    from finrag.retrieval import doc_text
    sets = {n: (lambda n=n: load_dev(n, a.data)) for n in ("financebench", "finqa", "tatqa")}   # finrag.datasets.DATASETS
    emb = get_embedder(); emb.encode(["warm-up"])
    print(f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.2f} (2 cores, shared)", flush=True)
    out = {"threads": a.threads, "loadavg_start": os.getloadavg(), "datasets": {}}
    for name, load in sets.items():
        ds = load()
        qids = random.Random(0).sample(sorted(ds.queries), min(a.queries + 2, len(ds.queries)))
        pre = preprocess_dataset(ds.subset(qids), SHIPPED_PRERETRIEVAL)
        hr = HierarchicalRetriever(ds.corpus, "bm25", "none")        # query-side pre-retrieval timing only
        res = {"docs": len(ds.corpus), "queries": len(qids) - 2}
        t = []
        for q in qids[2:]:
            t0 = time.perf_counter(); hr.query(ds.queries[q]); t.append(time.perf_counter() - t0)
        res["preretrieval_query"] = stats(t)
        ids = list(pre.corpus); texts = [doc_text(pre.corpus[d]) for d in ids]
        from finrag.config import get_settings
        default1 = get_settings().hierarchical.stage1
        s1s = {n: make_scorer(n, pre.corpus, emb, a.emb_cache, dense_corpus=ds.corpus) for n in dict.fromkeys(("bm25", "biencoder", "hybrid", "zsum", default1))}
        for n, sc in s1s.items():
            for q in qids[:2]: sc.score(pre.queries[q], texts, ids)
            t = []
            for q in qids[2:]:
                t0 = time.perf_counter(); sc.score(pre.queries[q], texts, ids); t.append(time.perf_counter() - t0)
            res[f"stage1:{n}"] = stats(t)
        # the default pipeline, as `finrag eval retrieval --method hierarchical` builds it
        dp = HierarchicalRetriever(ds.corpus, embedder=emb, cache_dir=a.emb_cache)
        dp.search({q: ds.queries[q] for q in qids[:2]}, k=20)
        t = []
        for q in qids[2:]:
            t0 = time.perf_counter(); dp.search({q: ds.queries[q]}, k=20); t.append(time.perf_counter() - t0)
        res[f"default:{dp.name}"] = stats(t)
        if a.llm_queries and name == "financebench":
            from finrag.llm import get_llm
            from dataclasses import asdict
            llm = get_llm(); st0 = asdict(llm.stats)
            lp = HierarchicalRetriever(ds.corpus, stage2="llm", embedder=emb, cache_dir=a.emb_cache, llm=llm)
            t = []
            for q in qids[2:2 + a.llm_queries]:
                t0 = time.perf_counter(); lp.search({q: ds.queries[q]}, k=20); t.append(time.perf_counter() - t0)
            used = llm.stats.since(st0, ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds"))
            res[f"llm:{lp.name}"] = stats(t) | {"per_query": {k: round(v/len(t), 1) for k, v in used.items()}}
        hy = s1s[default1]
        top = {}
        for q in qids:
            s = hy.score(pre.queries[q], texts, ids)
            top[q] = [ids[j] for j in np.argsort(-s, kind="stable")[:100]]
        for n in a.stage2:
            try: sc = make_scorer(n, pre.corpus, emb, a.emb_cache)
            except Exception as e: print(f"  stage2 {n}: skipped ({e})"); continue
            if n == "maxsim": sc.token_vectors(texts)                  # warm: every document's token vectors, like cached corpus vectors
            for q in qids[:2]: sc.score(pre.queries[q], [doc_text(pre.corpus[d]) for d in top[q]], top[q])
            timed = qids[2:2 + a.ce_queries] if n.startswith("ce") else qids[2:]
            t = []
            for q in timed:
                if hasattr(sc, "_memo") and n.startswith("ce"): sc._memo.clear()
                docs = [doc_text(pre.corpus[d]) for d in top[q]]
                t0 = time.perf_counter(); sc.score(pre.queries[q], docs, top[q]); t.append(time.perf_counter() - t0)
            res[f"stage2:{n}@{len(top[qids[0]])}"] = stats(t)
            # the whole cascade without LLM: query pre-retrieval + hybrid stage 1 + this stage 2 (fresh pair memo)
            full = HierarchicalRetriever(ds.corpus, hy, sc, preretrieval=SHIPPED_PRERETRIEVAL, **({"stage2_raw": True} if n.startswith("ce") else {}))
            full.search({q: ds.queries[q] for q in qids[:2]}, k=20)
            t = []
            for q in timed:
                if hasattr(sc, "_memo") and n.startswith("ce"): sc._memo.clear()
                t0 = time.perf_counter(); full.search({q: ds.queries[q]}, k=20); t.append(time.perf_counter() - t0)
            res[f"cascade(pre+{default1}@100>{n}@20)"] = stats(t)
        out["datasets"][name] = res
        print(f"\n{name}: {res['docs']} docs, {res['queries']} timed queries", flush=True)
        for k, v in res.items():
            if isinstance(v, dict): print(f"  {k:<36} p50 {v['p50_ms']:>8.1f} ms  p95 {v['p95_ms']:>8.1f} ms  {v['qps']:>7.2f} q/s", flush=True)
    out["loadavg_end"] = os.getloadavg()
    print(f"\nload average at the end {out['loadavg_end'][0]:.2f}")
    if a.json: record(Path(a.json).stem, out, vars(a), folder=Path(a.json).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)


if __name__ == "__main__":
    main()
