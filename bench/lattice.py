"""P3 benchmark: LATTICE tree build (time, LLM calls, tokens) and search (per-query latency, LLM calls, tokens) on a
SciFact slice, on this machine with the configured LLM (default: the packaged SmolLM2-135M, in-process llama.cpp).

    python bench/lattice.py [--docs 1000] [--queries 3] [--iterations 4] [--beam 2] [--partitioner llm|kmeans]
                            [--summarizer extractive|llm] [--full]

The slice holds the gold abstracts of the first judged train queries, then the corpus in its order. LLM answers are
cached on disk (finrag.llm): cached calls cost ~nothing, so the per-call latency is taken over the uncached calls only
and the cache hits are printed. Without --full, the full-corpus (5,183 abstracts) numbers are EXTRAPOLATED from the
slice (calls scale with the number of internal nodes, i.e. linearly in the documents; a query's cost depends on the
iterations and beam, not on the corpus size) and printed as such. Numbers are printed, never asserted.
"""
import argparse, os, statistics, sys, time
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import numpy as np
from finrag.core import project_root
from finrag.config import get_settings
from finrag.data import scifact_to_beir
from finrag.lattice_tree import build_tree
from finrag.lattice_search import LatticeRetriever

SCIFACT = project_root().parent / "shared/data/beir_scifact/data"


def slice_corpus(ds, n):
    qids = [q for q, rel in ds.qrels.items() if any(g > 0 for g in rel.values())]
    ids = list(dict.fromkeys([d for q in qids for d in ds.qrels[q]]))[:n]
    ids += [d for d in ds.corpus if d not in set(ids)][: max(0, n - len(ids))]
    return {d: ds.corpus[d] for d in ids}, qids


def build(corpus, args):
    t0 = time.perf_counter()
    t = build_tree(corpus, args.strategy, summarizer=args.summarizer, partitioner=args.partitioner, progress=False)
    wall = time.perf_counter() - t0
    s, u = t.stats, t.stats["llm"]
    fresh = u["calls"] - u["cache_hits"]
    llm_s = s["seconds"].get("build", 0) + (s["seconds"].get("summaries", 0) if args.summarizer == "llm" else 0)
    print(f"build {args.strategy} over {len(corpus):,} docs (summaries {args.summarizer}, partitions {args.partitioner}): "
          f"{wall:.1f} s wall  [" + ", ".join(f"{k} {v:.1f} s" for k, v in s["seconds"].items()) + "]")
    print(f"  tree: depth {s['depth']}, {s['n_internal']} internal nodes, branching mean {s['branching']['mean']}, "
          f"partitions: {s['partition_llm']} LLM, {s['partition_fallbacks']} fell back to k-means, {s['partition_kmeans']} k-means")
    print(f"  LLM: {u['calls']} calls ({u['cache_hits']} cached, {fresh} computed), {u['prompt_tokens']:,} prompt + "
          f"{u['completion_tokens']:,} completion tokens, {u['parse_failures']} unparsed, {u['refused']} refused, {u['timeouts']} timed out")
    per_call = llm_s / fresh if fresh else None
    if per_call: print(f"  {per_call:.1f} s per computed LLM call (build stage time / computed calls)")
    return t, wall, per_call


def search(t, queries, args):
    r = LatticeRetriever(t, scorer="llm", iterations=args.iterations, beam=args.beam, reasoning=False, relevance="scifact",
                         max_prompt_tokens=args.prompt_tokens, progress=False)
    lat = []
    for q, text in queries.items():
        t0 = time.perf_counter(); r.search({q: text}, k=10); lat.append(time.perf_counter() - t0)
        st = r.query_stats[q]
        print(f"  query {q}: {lat[-1]:6.1f} s, {st['calls']} calls ({st['cache_hits']} cached), {st['prompt_tokens']:,} prompt + "
              f"{st['completion_tokens']:,} completion tokens, {st['iterations']} iterations, {st['leaves_scored']} leaves scored, "
              f"{st['failed_slates']} failed / {st['recovered_slates']} recovered slates, calibration {st['seconds'].get('calibrate', 0):.1f} s")
    qs = list(r.query_stats.values())
    calls, fresh = sum(s["calls"] for s in qs), sum(s["calls"] - s["cache_hits"] for s in qs)
    score_s = sum(s["seconds"].get("score", 0) for s in qs)
    print(f"search (LLM scorer, {args.iterations} iterations, beam {args.beam}, prompts <= {args.prompt_tokens} tokens): "
          f"latency p50 {statistics.median(lat):.1f} s, mean {np.mean(lat):.1f} s, max {max(lat):.1f} s per query; "
          f"{calls / len(qs):.1f} calls, {np.mean([s['prompt_tokens'] for s in qs]):,.0f} prompt + "
          f"{np.mean([s['completion_tokens'] for s in qs]):,.0f} completion tokens per query")
    per_call = score_s / fresh if fresh else None
    if per_call: print(f"  {per_call:.1f} s per computed LLM call")
    re = LatticeRetriever(t, scorer="embedding", iterations=args.iterations, beam=args.beam, progress=False)
    t0 = time.perf_counter(); re.search(queries, k=10); e = (time.perf_counter() - t0) / len(queries)
    print(f"search (embedding scorer, same settings, no LLM): {e:.2f} s per query")
    return lat, calls / len(qs), per_call


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scifact", default=str(SCIFACT)); ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=3); ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--beam", type=int, default=2); ap.add_argument("--prompt-tokens", type=int, default=1500)
    ap.add_argument("--strategy", default="top-down"); ap.add_argument("--partitioner", default="llm")
    ap.add_argument("--summarizer", default="extractive"); ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    m = get_settings().models
    print(f"LATTICE bench: {os.cpu_count()} cores, LLM {m.llm} / {m.llm_model} (ctx {m.llm_ctx}), load {os.getloadavg()[0]:.1f}")
    p = Path(args.scifact)
    ds = scifact_to_beir(p/"scifact.zip", p/"scifact"/"queries_all_1109_reformatted.jsonl", p/"scifact"/"qrels"/"train.tsv")
    corpus, qids = slice_corpus(ds, args.docs)
    t, wall, build_call = build(corpus, args)
    queries = {q: ds.queries[q] for q in qids[: args.queries]}
    lat, calls_q, search_call = search(t, queries, args)
    n_full = len(ds.corpus)
    if args.full:
        build({d: ds.corpus[d] for d in ds.corpus}, args)
        return
    f = n_full / len(corpus)
    u = t.stats["llm"]
    print(f"\nfull SciFact corpus ({n_full:,} abstracts) - EXTRAPOLATED from the {len(corpus):,}-doc slice, not measured:")
    est_calls = u["calls"] * f
    est_build = wall * f if not build_call else (wall - (u['calls'] - u['cache_hits']) * build_call) * f + est_calls * build_call
    print(f"  build: ~{est_calls:,.0f} LLM calls, ~{est_build / 60:,.0f} min (all calls computed, none cached, at the slice's s/call)")
    if args.partitioner == "kmeans" and args.strategy != "bottom-up":
        n_split = t.stats["partition_kmeans"]
        print(f"  with LLM partitions (the paper's top-down): one call per split, {n_split} splits on the slice, ~{n_split * f:,.0f} "
              f"on the full corpus" + (f"; at the search's {search_call:.0f} s/call >= {n_split * f * search_call / 3600:,.1f} h "
              "(a lower bound: a partition answer lists every member, far longer than a score list)" if search_call else ""))
    if args.summarizer == "extractive":
        print(f"  with LLM document summaries: + {n_full:,} calls" + (f", ~{n_full * build_call / 3600:,.1f} h more" if build_call else ""))
    spq = calls_q * search_call if search_call else statistics.median(lat)
    print(f"  search: ~{calls_q:.0f} calls per query as on the slice (cost depends on iterations x beam, not corpus size), "
          f"~{spq:,.0f} s per query uncached; the paper's 20 iterations x beam 2: ~{calls_q * 40 / (args.iterations * args.beam):.0f} calls, "
          f"~{spq * 40 / (args.iterations * args.beam) / 60:,.1f} min per query")


if __name__ == "__main__":
    sys.exit(main())
