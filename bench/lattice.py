"""P3 benchmark: the LLM-built LATTICE tree (time, LLM calls, tokens, fallbacks) and LATTICE search speed (seconds,
LLM calls and tokens per query at the default budget, and nDCG@10 on those queries) on a SciFact slice, with the configured LLM.

    python bench/lattice.py build  --out stores/p3/tree_scifact1k_topdown_llm.json [--docs 1000] [--slice-queries 100]
                                   [--doc-summarizer extractive|llm] [--partition-tokens N] [--strategy top-down] [--llm-depth D]
                                   [--partitioner llm|kmeans]
    python bench/lattice.py search --tree stores/p3/tree_scifact1k_topdown_llm.json [--queries 5] [--scorer pointwise]
    python bench/lattice.py route  --tree stores/p3/tree_scifact1k_topdown_llm.json [--queries 6] [--scorer pointwise|embedding]
                                   [--desc summary|titles|central] [--json results/p3_routing.json]
    python bench/lattice.py hybrid [--datasets scifact financebench] [--slice-queries 200] [--llm-queries 20] [--llm-docs 10]
                                   [--budget 1500] [--slate-tokens 800] [--json results/p3_hybrid.json]
    python bench/lattice.py scorer [--datasets scifact financebench] [--per-half 25] [--json results/p3_scorer_choice.json]

The slice: the gold abstracts of the first `--slice-queries` judged SciFact train queries plus seeded random
distractors, `--docs` in all (the same slice as nbs/experiments/p3_lattice.ipynb). `build` prints the up-front estimate
(`estimate_build`), shows progress, and writes the tree with its build statistics; LLM answers are cached on disk
(finrag.llm), so an interrupted build resumes: rerun the same command and the finished calls are cache hits (the
summary prints how many). Point the LLM at a server with FINRAG_LLM_BASE_URL / FINRAG_LLM_MODEL (e.g. the 0.5B tier
on one thread). `route` walks from the root to each gold abstract of the first `--queries` queries and scores every
slate on that path as the search would (same scorer, same slate descriptions, but without the reference leaves the
search adds for calibration): the share of slates where the gold
branch is ranked first / within the beam (ties count for the gold branch), per depth, against a random choice — where
the routing goes wrong, independent of the budget. `--desc` shows internal nodes differently (up to 4 member titles,
one per child round-robin, or their most central member document) to test whether the scorer routes better on other descriptions.
`hybrid` builds an LLM-free tree (k-means partitions, extractive summaries: seconds) per dataset (the SciFact
slice with the gold of `--slice-queries` judged train queries, FinanceBench by `finrag.datasets.load_dev`), splits the
judged queries in halves (`finrag.protocol.split_queries(ds, 0.5, seed=0)`), chooses on the development half
the embedding LATTICE's node descriptions and beam and LATTICE++'s fusion (weighted RRF k 60/30/10 or z-scores, weights
per member, the members alone included: never below its best member there), and reports on the test half: nDCG@10
with n and bootstrap 95 % CI, paired CIs against dense and the best baseline, s/query and LLM calls/query. LATTICE with
hybrid routing (LLM's P(yes) on slates of nodes covering at most `--llm-docs` documents, embeddings above) runs on a
seeded subset of `--llm-queries` test queries. Per-query LATTICE runs are cached under `<cache_dir>/bench/p3_hybrid/`
(resumable; delete it after changing the search). The study is `finrag.lattice.studies.hybrid_routing_study`
(nbs/37c_lattice.studies.ipynb; nbs/experiments/p3_lattice.ipynb runs it too); `hybrid` writes what it returns.
`search` prints per-query latency, calls and tokens; cached calls cost ~nothing, so the latency of
a rerun is not a benchmark (the cache hits are printed). Numbers are printed, never asserted.
"""
import argparse, os, statistics, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np
from finrag.config import get_settings, redact
from finrag.beir import BeirDataset
from finrag.datasets import load_dev


def scifact_slice(root, n_docs, slice_queries, seed=0) -> BeirDataset:
    "The experiment's slice (`finrag.lattice.studies.lattice_slice`): gold abstracts of the first judged train queries + seeded random distractors."
    from finrag.lattice.studies import lattice_slice
    return lattice_slice(load_dev("scifact", root), n_docs=n_docs, n_queries=slice_queries, seed=seed)


def build(args):
    from finrag.llm import LLMClient
    from finrag.lattice.build import build_tree
    from finrag.lattice.estimate import estimate_build
    sl = scifact_slice(args.data_root, args.docs, args.slice_queries)
    llm = LLMClient(timeout=args.timeout)   # FINRAG_LLM_BASE_URL / FINRAG_LLM_MODEL, else the local tier
    kw = dict(strategy=args.strategy, summarizer="llm", doc_summarizer=args.doc_summarizer, partitioner=args.partitioner,
              branching=args.branching, max_leaf_docs=args.branching, partition_tokens=args.partition_tokens,
              llm_depth=args.llm_depth)
    est = estimate_build(sl.corpus, **kw, model=llm.model)
    print(f"{sl}; LLM {llm.model} at {redact(llm.base_url) if llm.base_url else 'local'}; load {os.getloadavg()[0]:.1f}")
    print(f"estimate: ~{est['calls']} LLM calls, ~{est['prompt_tokens']:,} prompt + {est['completion_tokens']:,} completion tokens, "
          f"~{est['seconds'] / 60:.0f} min at {est['speed'][0]:g}/{est['speed'][1]:g} tokens/s (prompt/decode)", flush=True)
    t0 = time.perf_counter()
    t = build_tree(sl.corpus, **kw, llm=llm, progress=True)
    wall = time.perf_counter() - t0
    t.save(args.out)
    s, u = t.stats, t.stats["llm"]
    print(f"wrote {args.out}: {wall:.0f} s wall [" + ", ".join(f"{k} {v:.0f} s" for k, v in s["seconds"].items()) + "]")
    print(f"  tree: depth {s['depth']}, {s['n_internal']} internal nodes, branching {s['branching']}, leaf slates {s['leaf_slate_size']}")
    print(f"  LLM: {u['calls']} calls ({u['cache_hits']} cached = resumed), {u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} "
          f"completion tokens, {u['parse_failures']} unparsed, {u['refused']} refused, {u['timeouts']} timed out")
    print(f"  partitions: {s['partition_llm']} by the LLM, {s['partition_fallbacks']} fell back to k-means; summaries {s['summaries']}")
    print(f"  deviations: {s['deviations']}")


def search(args):
    from finrag.lattice.search import LatticeRetriever
    sl = scifact_slice(args.data_root, args.docs, args.slice_queries)
    r = LatticeRetriever(args.tree, scorer=args.scorer, relevance="scifact", progress=False,
                         **({"token_budget": args.budget} if args.budget is not None else {}))
    print(f"LATTICE search: {r!r}, budget {r.token_budget} prompt tokens/query, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    lat, run = [], {}
    for q in list(sl.queries)[: args.queries]:
        t0 = time.perf_counter(); run |= r.search({q: sl.queries[q]}, k=100); lat.append(time.perf_counter() - t0)
        st = r.query_stats[q]
        print(f"  query {q}: {lat[-1]:6.1f} s, {st['calls']} calls ({st['cache_hits']} cached), {st['prompt_tokens']:,} prompt + "
              f"{st['completion_tokens']:,} completion tokens, {st['iterations']} iterations, {st['leaves_scored']} leaves scored", flush=True)
    qs = list(r.query_stats.values())
    print(f"latency p50 {statistics.median(lat):.1f} s, mean {np.mean(lat):.1f} s, max {max(lat):.1f} s per query; "
          f"{np.mean([s['calls'] for s in qs]):.1f} calls, {np.mean([s['prompt_tokens'] for s in qs]):,.0f} prompt tokens per query")
    from finrag.evaluation import evaluate
    m = evaluate(run, {q: sl.qrels[q] for q in run}, k=(10,), recall_k=(100,))
    print(f"quality on these {len(run)} queries: nDCG@10 {m['ndcg@10']:.4f}, recall@100 {m['recall@100']:.4f} (leaves reached per query: "
          f"{[s['leaves_scored'] for s in qs]})")


def route(args):
    from finrag.lattice.search import LatticeRetriever
    sl = scifact_slice(args.data_root, args.docs, args.slice_queries)
    r = LatticeRetriever(args.tree, scorer=args.scorer, relevance="scifact", progress=False)
    root = r.tree.root
    parent, stack = {}, [root]
    while stack:
        n = stack.pop()
        for c in n.children: parent[id(c)] = n; stack.append(c)
    leaf = {n.doc_id: n for n in root.leaves()}
    from finrag.lattice.scorers import slate_descriptions
    describe = lambda nodes: slate_descriptions(nodes, getattr(r.scorer, "slate_tokens", None))
    if args.desc == "titles":   # an internal node shown as its topic and member titles (one per child, round-robin), not its summary
        def titles(n, k=4):
            heads = [c.leaves() if not c.is_leaf else [c] for c in n.children]
            out = [h[i].summary["short"] for i in range(max(map(len, heads))) for h in heads if i < len(h) and h[i].summary]
            return f"{n.summary['topic']}: " + "; ".join(out[:k]) if n.summary else n.desc
        base = describe
        describe = lambda nodes: [titles(n) if not n.is_leaf else d for n, d in zip(nodes, base(nodes))]
    central_leaf = {}
    if args.desc == "central":  # an internal node shown as its most central member document (nearest its leaves' mean embedding)
        from finrag.models import get_embedder
        from finrag.relevance import truncate_tokens
        leaves = root.leaves(); emb = get_embedder()
        vec = dict(zip([l.doc_id for l in leaves], np.asarray(emb.encode([l.desc for l in leaves]), dtype=np.float32)))
        def central(n):
            if id(n) not in central_leaf:
                ls = n.leaves(); m = np.stack([vec[l.doc_id] for l in ls]); c = m.mean(0)
                central_leaf[id(n)] = ls[int(np.argmax(m @ c))]
            return central_leaf[id(n)]
        budget = getattr(r.scorer, "slate_tokens", None) or 1600
        describe = lambda nodes: [truncate_tokens((central(n) if not n.is_leaf else n).desc, budget // max(1, len(nodes))) for n in nodes]
    per_depth, whole, calls = {}, [], 0
    print(f"gold-path routing: {r.tree.stats.get('strategy', '?')} tree {args.tree}, scorer {args.scorer}, beam {r.beam}")
    for q in list(sl.queries)[: args.queries]:
        for d in [d for d, g in sl.qrels[q].items() if g > 0 and d in leaf]:
            path, n = [], leaf[d]
            while id(n) in parent: path.append((parent[id(n)], n)); n = parent[id(n)]
            ok, ranks = True, []
            for depth, (p, child) in enumerate(reversed(path)):
                s = r.scorer(sl.queries[q], describe(p.children), args.desc == "central" or all(c.is_leaf for c in p.children))
                calls += getattr(s, "calls", 0)
                sc = [-1.0 if x is None else x for x in s.scores]
                rank = 1 + sum(x > sc[p.children.index(child)] for x in sc)
                per_depth.setdefault(depth, []).append((rank, len(sc))); ranks.append(f"{rank}/{len(sc)}")
                ok &= rank <= r.beam
            whole.append(ok)
            print(f"  query {q} gold {d}: rank of the gold branch along the path {' '.join(ranks)}", flush=True)
    for k in sorted(per_depth):
        v = per_depth[k]
        print(f"  depth {k}: {len(v)} slates of {np.mean([n for _, n in v]):.1f} items; gold first {np.mean([rk == 1 for rk, _ in v]):.2f}, "
              f"within beam {np.mean([rk <= r.beam for rk, _ in v]):.2f}, random first {np.mean([1 / n for _, n in v]):.2f}")
    print(f"gold path kept within the beam at every depth: {np.mean(whole):.2f} of {len(whole)} gold abstracts; {calls} LLM calls")
    if args.json:   # one entry per (tree, scorer, desc) in a shared results file
        from pathlib import Path
        from finrag.protocol import read_record, record
        out = Path(args.json); res = read_record(out)["result"] if out.exists() else {}
        res[f"{Path(args.tree).stem} | {args.scorer} | {args.desc}"] = {
            "tree": Path(args.tree).name, "scorer": args.scorer, "desc": args.desc, "beam": r.beam, "queries": args.queries,
            "gold_abstracts": len(whole), "kept_at_every_depth": float(np.mean(whole)), "llm_calls": calls,
            "depth": {str(k): {"slates": len(v), "items": float(np.mean([n for _, n in v])), "first": float(np.mean([rk == 1 for rk, _ in v])),
                               "within_beam": float(np.mean([rk <= r.beam for rk, _ in v])), "random_within_beam": float(np.mean([min(1.0, r.beam / n) for _, n in v]))}
                      for k, v in sorted(per_depth.items())}}
        out = record(out.stem, res, {"last_entry": vars(args)}, folder=out.parent); print(f"wrote {out}")


# ---------------------------------------------------------------------------------------------------------------------
# `hybrid`: LATTICE with hybrid routing and LATTICE++ with a fusion chosen on development queries —
# the study is `finrag.lattice.studies.hybrid_routing_study` (nbs/37c_lattice.studies.ipynb); this writes its result.
def hybrid(args):
    from pathlib import Path
    from finrag.lattice.studies import HYBRID_DEVIATIONS, hybrid_routing_study
    from finrag.protocol import read_record, record
    out_path = Path(args.json); res = read_record(out_path)["result"] if out_path.exists() else {}
    for name in args.datasets:
        if name == "scifact": ds, rel = scifact_slice(args.data_root, args.docs, args.slice_queries), "scifact"
        else: ds, rel = load_dev("financebench", args.data_root), "finance"
        R = hybrid_routing_study(ds, relevance=rel, llm_queries=args.llm_queries, llm_docs=args.llm_docs, budget=args.budget,
                                 slate_tokens=args.slate_tokens, progress=True)   # per-query runs cached under <finrag cache>/bench/p3_hybrid/<dataset>/
        res[name] = R; res["deviations"] = HYBRID_DEVIATIONS
        record(out_path.stem, res, vars(args), folder=out_path.parent)   # after each dataset: a partial run keeps what it measured
        print(f"  wrote {out_path} [{name}] in {R['seconds_total']:.0f} s", flush=True)


# `scorer`: the `[lattice] scorer` choice — `finrag.lattice.studies.scorer_choice_study` (nbs/37c); this writes its result.
SCORER_CANDIDATES = {"pointwise": {"scorer": "pointwise", "beam": 2},   # the LLM's P(yes) per item at the public code's beam, [lattice] budget
                     "embedding (titles, beam 2)": {"scorer": "embedding", "embed_desc": "titles", "beam": 2},
                     "embedding (titles, beam 4)": {"scorer": "embedding", "embed_desc": "titles", "beam": 4}}   # results/p3_ce.json's


def scorer(args):
    from pathlib import Path
    from finrag.lattice.studies import scorer_choice_study
    from finrag.protocol import record
    t0, load0 = time.perf_counter(), os.getloadavg()
    data = {"scifact": lambda: (scifact_slice(args.data_root, args.docs, args.slice_queries), "scifact"),
            "financebench": lambda: (load_dev("financebench", args.data_root), "finance")}   # only the corpora asked for are loaded
    lat = get_settings().lattice   # the incumbent: --incumbent, else the candidate that is today's [lattice] setting
    inc = args.incumbent or next((c for c, kw in SCORER_CANDIDATES.items() if all(getattr(lat, k) == v for k, v in kw.items())), None)
    if inc not in SCORER_CANDIDATES: sys.exit(f"error: --incumbent {inc!r}: one of {', '.join(SCORER_CANDIDATES)}")
    S = scorer_choice_study({n: data[n]() for n in args.datasets}, SCORER_CANDIDATES, inc, per_half=args.per_half)
    n = {c: {"choose": e["n_choose"], "report": e["n_report"]} for c, e in S["corpora"].items()}
    out = Path(args.json)
    f = record(out.stem, S, vars(args), n=n, seconds=time.perf_counter() - t0, loadavg_start=load0, folder=out.parent)
    for c, e in S["corpora"].items():
        for m, v in e["test"].items():
            print(f"  {c:<22} {m:<28} n {v['n']:>3} nDCG@10 {v['ndcg@10']:.4f} {v['ci']} recall@100 {v['recall@100']:.3f} "
                  f"{v['s_per_query']:.2f} s/q {v['llm_calls_per_query']:.1f} calls/q")
    print(f"chosen: {S['chosen']} ({S['choice']['verdict']}) -> {f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("build", "search", "route", "hybrid", "scorer"):
        p = sub.add_parser(name)
        p.add_argument("--data-root", default=None, help="data root holding beir_scifact/ (default: ../shared/data)"); p.add_argument("--docs", type=int, default=1000)
        p.add_argument("--slice-queries", type=int, default=200 if name in ("hybrid", "scorer") else 100)
        if name == "scorer":
            p.add_argument("--json", default="results/p3_scorer_choice.json")
            p.add_argument("--datasets", nargs="+", default=["scifact", "financebench"], choices=["scifact", "financebench"])
            p.add_argument("--per-half", type=int, default=25, help="seeded queries of each half per corpus (the LLM scorer's minutes)")
            p.add_argument("--incumbent", default=None, help="the candidate that is the default (the recorded run: pointwise); default: today's [lattice] setting")
            continue
        if name == "hybrid":
            p.add_argument("--json", default="results/p3_hybrid.json"); p.add_argument("--datasets", nargs="+", default=["scifact", "financebench"])
            p.add_argument("--llm-queries", type=int, default=20, help="test queries (seeded subset) for LATTICE with hybrid routing (LLM); 0 = skip")
            p.add_argument("--llm-docs", type=int, default=10, help="hybrid: slates of nodes covering at most this many documents go to the LLM")
            p.add_argument("--budget", type=int, default=1500, help="hybrid: LLM prompt tokens per query, then embeddings alone")
            p.add_argument("--slate-tokens", type=int, default=800, help="hybrid: description tokens of one LLM slate")
            continue
        if name == "build":
            p.add_argument("--out", required=True); p.add_argument("--strategy", default="top-down")
            p.add_argument("--doc-summarizer", default="extractive"); p.add_argument("--partition-tokens", type=int, default=None)
            p.add_argument("--branching", type=int, default=10)
            p.add_argument("--partitioner", default="llm", choices=["llm", "kmeans"], help="top-down splits: llm (the paper) | kmeans (LLM summaries of k-means clusters)")
            p.add_argument("--llm-depth", type=int, default=None, help="LLM partitions/summaries only above this depth (root = 0); default every level")
            p.add_argument("--timeout", type=float, default=900, help="seconds per LLM call (a loaded CPU reads ~10 tokens/s)")
        else:
            p.add_argument("--tree", required=True); p.add_argument("--queries", type=int, default=5)
            p.add_argument("--scorer", default="pointwise"); p.add_argument("--budget", type=int, default=None)
        if name == "route":
            p.add_argument("--json", default=None, help="add the result to this JSON file (e.g. results/p3_routing.json)")
            p.add_argument("--desc", default="summary", choices=["summary", "titles", "central"],
                           help="internal nodes shown by their summary (as the search does), their topic + up to 4 member titles (one per child, round-robin), or their most central member document (judged as a document)")
    args = ap.parse_args()
    return {"build": build, "search": search, "route": route, "hybrid": hybrid, "scorer": scorer}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
