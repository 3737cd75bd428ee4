"""Scaling benchmark: the P1 ingest on Ray, how ingest time and memory grow, and the vector index at 1 M.

Run under the heavy-job lock (it takes minutes of both cores): `flock /work/heavy.lock nice -n 5 python bench/scale.py`.

    python bench/scale.py [--sizes 1000,10000,100000] [--real-max 1000] [--throughput-articles 60]  -> results/scale.json
    python bench/scale.py --ivf [--n 1000000] [--queries 1000]                                        -> results/scale_ivf.json

Parts of results/scale.json:
- `throughput`: chunks per second of the real per-chunk work (spaCy NER + gazetteer, Loughran-McDonald sentiment,
  MiniLM ONNX embeddings) through `finrag.graphrag.ingest.ray_enrich` with 1 and 2 Ray workers on a local cluster,
  beside the local engine (`enrich`), on the same chunks.
- `sizes`: `ingest()` of synthetic articles (sentences of the made-up sample and the FNSPID AAPL full texts, drawn
  with a seed, 3-12 per article, new ids and dates) into a new store, each size in a fresh process (peak RSS = that
  process' `ru_maxrss`). `pipeline = "real"`: the real models; `pipeline = "replayed-enrichment"`: the per-chunk
  models replaced by a replay of real outputs (each synthetic chunk takes the entities, sentiment and embedding of a
  real chunk chosen by its id, plus noise on the embedding; model cost excluded), so the measured part is load,
  chunking, the plan, the crash-safe vector write, the graph (LadybugDB) and the index. `clean=False` (articles drawn
  from one sentence pool repeat sentences, which the boilerplate filter would rightly drop).
- `slopes`: the log-log slope of seconds and of peak memory against the number of articles (1 = linear).
- `projection`: the full FNSPID (15.7 M records) on N machines, from the measured per-chunk model cost.

On 2026-12-02 the 100k size did not finish (the embedded LadybugDB graph write of ~236k chunks ran > 13 min: MERGE's
cost per row grows with the table). Since 2026-12-03 new chunks and links go in by LadybugDB's bulk COPY
(`LadybugGraph.upsert_chunks` / `link_chunks`) and the 100k size is measured. `--no-throughput` keeps the previous
run's throughput section.

The IVF part builds >= 1 M synthetic vectors of the embedder's dimension with realistic structure: real MiniLM
embeddings of sentences of the sample and FNSPID texts (the *base*), and each synthetic vector a mixture of a base
vector and one of its 20 nearest base neighbours (weight ~ U(0, 1)) plus Gaussian noise of norm ~0.35, renormalised.
It measures recall@10 of `finrag.graphrag.store.build_index` (IVF, nlist = f x sqrt(n)) against exact search for a
sweep of nprobe, with the query time, and the flat index's query time for the threshold.
"""
import argparse, json, os, re, resource, subprocess, sys, time, tempfile
from pathlib import Path
from finrag.protocol import read_record, record

os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
import numpy as np
from finrag.core import project_root, sample_news_path
from finrag.data import load_news

ROOT = project_root()
SHARED = Path(os.environ.get("FINRAG_SHARED_DATA", ROOT.parent / "shared/data"))   # the read-only public data
FNSPID = SHARED / "news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"
FNSPID_RECORDS = 15_700_000        # FNSPID news records (the paper's dataset; README of FNSPID)


def _load() -> tuple[str, float]:
    la = os.getloadavg(); return f"{la[0]:.2f} {la[1]:.2f} {la[2]:.2f}", la[0]


def sentence_pool(seed:int=0) -> list[str]:
    "Sentences (40-400 characters) of the made-up sample and the FNSPID AAPL full texts (read in place, never copied)."
    texts = [it.text for it in load_news(sample_news_path())[0]]
    if FNSPID.exists(): texts += [it.text for it in load_news(FNSPID)[0]]
    out = []
    for t in texts:
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+", t) if 40 <= len(s.strip()) <= 400]
    return sorted(set(out))


def synthetic_news(n:int, path:Path, seed:int=0):
    "`n` synthetic articles as JSONL (id, date, title, text): 3-12 seeded sentences of the pool each."
    pool, rng = sentence_pool(), np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            k = int(rng.integers(3, 13)); ss = [pool[j] for j in rng.integers(0, len(pool), k)]
            f.write(json.dumps({"id": f"syn{i}", "date": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", "title": ss[0][:80],
                                "text": " ".join(ss)}) + "\n")


def replayed_enrich(reference):
    "A stand-in for `enrich` with the same outputs' shapes: each chunk takes a real chunk's entities/sentiment/embedding (by id), embedding + noise."
    from finrag.graphrag.enrich import EnrichedChunk
    ecs_ref, E_ref = reference
    def run(chunks, timings=None, progress=False, **kw):
        idx = np.array([int(c.id[:8], 16) % len(ecs_ref) for c in chunks], dtype=int)
        rng = np.random.default_rng(len(chunks))
        E = E_ref[idx] + rng.normal(scale=0.35 / np.sqrt(E_ref.shape[1]), size=(len(chunks), E_ref.shape[1]))
        E = (E / np.linalg.norm(E, axis=1, keepdims=True)).astype("float32")
        return [EnrichedChunk(c, ecs_ref[j].entities, ecs_ref[j].sentiment) for c, j in zip(chunks, idx)], E
    return run


def one_size(n:int, pipeline:str) -> dict:
    "Ingest `n` synthetic articles into a new store in this process; seconds per stage, peak RSS, counts."
    import finrag.graphrag.ingest as I
    from finrag.chunking import chunk_news
    tmp = Path(tempfile.mkdtemp(prefix="finrag-scale-"))
    news = tmp/"news.jsonl"; synthetic_news(n, news)
    if pipeline == "replayed-enrichment":
        ref_items = load_news(sample_news_path())[0] + (load_news(FNSPID)[0] if FNSPID.exists() else [])
        ref = I.enrich(chunk_news(ref_items))
        I.enrich = replayed_enrich(ref)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    rep = I.ingest(news, tmp/"store", clean=False)
    with I.NewsStore(tmp/"store") as s:
        t1 = time.perf_counter(); s.index; t_index = time.perf_counter() - t1
        q = s.embeddings[:100]; t2 = time.perf_counter(); s.index.search(q, 10); ms_q = 1000 * (time.perf_counter() - t2) / len(q)
        index = s.meta.get("index")
    secs = time.perf_counter() - t0
    import shutil; shutil.rmtree(tmp, ignore_errors=True)
    return {"articles": n, "pipeline": pipeline, "chunks": rep.chunks, "edges": rep.edges, "tickers": rep.tickers,
            "seconds": round(secs, 2), "stage_seconds": {k: round(v, 2) for k, v in rep.seconds.items()},
            "index": index, "index_build_s": round(t_index, 3), "search_ms_per_query": round(ms_q, 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rss_before_ingest_mb": round(rss0 / 1024, 1), "loadavg": _load()[0]}


def throughput(n_articles:int) -> dict:
    "Chunks/s of the real per-chunk work: the local engine, then `ray_enrich` with 1 and 2 workers (one local cluster)."
    from finrag.chunking import chunk_news
    from finrag.graphrag.enrich import enrich
    from finrag.graphrag.ingest import ray_enrich
    from finrag.scale import ray_cluster
    chunks = chunk_news(load_news(FNSPID if FNSPID.exists() else sample_news_path(), limit=n_articles)[0])
    out = {"articles": n_articles, "chunks": len(chunks), "source": str(FNSPID.name if FNSPID.exists() else "sample")}
    enrich(chunks[:8])                                          # load the models once (not timed)
    t = time.perf_counter(); _, E_local = enrich(chunks); s = time.perf_counter() - t
    out["local"] = {"seconds": round(s, 2), "chunks_per_s": round(len(chunks) / s, 2), "loadavg": _load()[0]}
    with ray_cluster(num_cpus=2):
        for w in (1, 2):
            ray_enrich(chunks[:2 * w], workers=w, batch_size=1)   # warm: workers start, models load (timed separately)
            t = time.perf_counter(); _, E = ray_enrich(chunks, workers=w, batch_size=32); s = time.perf_counter() - t
            out[f"ray_{w}_workers"] = {"seconds": round(s, 2), "chunks_per_s": round(len(chunks) / s, 2),
                                       "max_abs_diff_to_local": float(np.abs(E - E_local).max()), "loadavg": _load()[0]}
    return out


def slope(xs, ys) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def scale(args):
    res = {"machine": {"cpus": os.cpu_count(), "loadavg_start": _load()[0]}, "sizes": []}
    for n in args.sizes:
        for pipe in (["real"] if n <= args.real_max else []) + ["replayed-enrichment"]:
            print(f"ingest {n} synthetic articles, {pipe} ...", flush=True)
            p = subprocess.run([sys.executable, __file__, "--one", str(n), "--pipeline", pipe], capture_output=True, text=True)
            if p.returncode: print(p.stderr[-3000:]); raise SystemExit(f"size {n} {pipe} failed")
            r = json.loads(p.stdout.strip().splitlines()[-1]); res["sizes"].append(r); print("  ", r, flush=True)
    rep = [r for r in res["sizes"] if r["pipeline"] == "replayed-enrichment"]
    if len(rep) >= 2:
        xs = [r["articles"] for r in rep]
        res["slopes"] = {"seconds_vs_articles": round(slope(xs, [r["seconds"] for r in rep]), 3),
                         "peak_rss_vs_articles": round(slope(xs, [r["peak_rss_mb"] for r in rep]), 3),
                         "peak_rss_above_start_vs_articles": round(slope(xs, [max(r["peak_rss_mb"] - r["rss_before_ingest_mb"], 1) for r in rep]), 3),
                         "graph_seconds_vs_articles": round(slope(xs, [max(r["stage_seconds"].get("graph", 0), 1e-3) for r in rep]), 3),
                         "chunk_seconds_vs_articles": round(slope(xs, [max(r["stage_seconds"].get("chunk", 0), 1e-3) for r in rep]), 3),
                         "pipeline": "replayed-enrichment"}
    old = ROOT/"results/scale.json"
    if args.no_throughput and old.exists() and "throughput" in (prev := read_record(old)["result"]):
        res["throughput"] = {**prev["throughput"], "note": "kept from the previous run of this script (--no-throughput)"}
    if not args.no_throughput:
        print("throughput: local vs Ray 1 and 2 workers ...", flush=True)
        res["throughput"] = throughput(args.throughput_articles); print("  ", res["throughput"], flush=True)
    res["projection"] = projection(res)
    res["machine"]["loadavg_end"] = _load()[0]
    out = record("scale", res, vars(args), folder=ROOT/"results")
    print_table(res); print(f"wrote {out}")


def projection(res) -> dict:
    "The full FNSPID on N machines like this one: model time per chunk (measured) + store time per chunk (measured)."
    real = [r for r in res["sizes"] if r["pipeline"] == "real"]
    rep = {r["articles"]: r for r in res["sizes"] if r["pipeline"] == "replayed-enrichment"}
    if not real or not rep: return {}
    r = max(real, key=lambda r: r["articles"])
    chunks_per_article = r["chunks"] / r["articles"]      # synthetic articles are short; FNSPID's full texts (throughput) are not
    if "throughput" in res: chunks_per_article = res["throughput"]["chunks"] / res["throughput"]["articles"]
    st = r["stage_seconds"]; model_s = sum(st.get(k, 0) for k in ("ner", "sentiment", "embed", "ray enrich"))
    model_s_per_chunk = model_s / r["chunks"]
    if "throughput" in res:
        tp = res["throughput"]; best = max(tp.get("ray_2_workers", {}).get("chunks_per_s", 0), tp["local"]["chunks_per_s"])
        model_s_per_chunk = min(model_s_per_chunk, 1 / best)
    big = rep[max(rep)]; store_s_per_chunk = big["seconds"] / big["chunks"]
    n_chunks = FNSPID_RECORDS * chunks_per_article
    days = lambda N: (n_chunks * model_s_per_chunk / N + n_chunks * store_s_per_chunk) / 86400
    return {"records": FNSPID_RECORDS, "chunks_per_article": round(chunks_per_article, 2), "chunks": int(n_chunks),
            "model_s_per_chunk_per_machine": round(model_s_per_chunk, 4), "store_s_per_chunk": round(store_s_per_chunk, 5),
            "days_on_N_machines": {N: round(days(N), 2) for N in (1, 2, 8, 32, 128)},
            "assumes": ("machines like this one (2 cores); the per-chunk models scale with the machines (Ray actors), the single "
                        "writer (vectors + graph, one process) does not: it is the floor; chunks_per_article from the FNSPID "
                        "full-text articles of the throughput part when present (synthetic articles are shorter)")}


def print_table(res):
    print(f"\n{'articles':>9} {'pipeline':<20} {'chunks':>8} {'seconds':>9} {'peak MB':>8} {'index':<8} {'ms/query':>8}")
    for r in res["sizes"]:
        print(f"{r['articles']:>9} {r['pipeline']:<20} {r['chunks']:>8} {r['seconds']:>9.1f} {r['peak_rss_mb']:>8.0f} "
              f"{(r['index'] or {}).get('kind', '?'):<8} {r['search_ms_per_query']:>8.3f}")
    if "slopes" in res: print("log-log slopes:", res["slopes"])
    if "throughput" in res:
        tp = res["throughput"]
        print("chunks/s:", {k: v["chunks_per_s"] for k, v in tp.items() if isinstance(v, dict)})
    if res.get("projection"): print("projection (days for the full FNSPID):", res["projection"]["days_on_N_machines"])


def ivf(args):
    import faiss
    from finrag.models import get_embedder
    from finrag.graphrag.store import build_index
    rng = np.random.default_rng(0)
    pool = sentence_pool()
    t = time.perf_counter(); B = get_embedder().encode(pool, batch_size=64); t_embed = time.perf_counter() - t
    print(f"base: {len(pool)} real sentences embedded in {t_embed:.0f} s, dim {B.shape[1]}", flush=True)
    _, nn = faiss.IndexFlatIP(B.shape[1]), None
    ix = faiss.IndexFlatIP(B.shape[1]); ix.add(B); _, nn = ix.search(B, 21)
    def synth(m):
        a = rng.integers(0, len(B), m); b = nn[a, rng.integers(1, 21, m)]; w = rng.random((m, 1), dtype="float32")
        X = w * B[a] + (1 - w) * B[b] + rng.normal(scale=0.35 / np.sqrt(B.shape[1]), size=(m, B.shape[1])).astype("float32")
        return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype("float32")
    X = np.concatenate([synth(100_000) for _ in range(args.n // 100_000)]); Q = synth(args.queries)
    print(f"{len(X):,} synthetic vectors, {len(Q)} queries", flush=True)
    flat = build_index(X, {"kind": "flat"})
    t = time.perf_counter(); _, exact = flat.search(Q, 10); t_flat = time.perf_counter() - t
    t = time.perf_counter()
    for q in Q[:50]: flat.search(q[None], 10)
    flat_single = 1000 * (time.perf_counter() - t) / 50
    res = {"n": len(X), "dim": int(X.shape[1]), "queries": len(Q), "k": 10, "base_sentences": len(pool),
           "vectors": ("mixtures of real MiniLM embeddings of sample + FNSPID AAPL sentences: w*e_a + (1-w)*e_b + noise, "
                       "b one of a's 20 nearest base neighbours, w ~ U(0,1), noise N(0, 0.35^2/dim), renormalised"),
           "flat": {"ms_per_query_batched": round(1000 * t_flat / len(Q), 3), "ms_per_query_single": round(flat_single, 3)},
           "ivf": [], "loadavg_start": _load()[0]}
    print("flat:", res["flat"], flush=True)
    for f in args.factors:
        nlist = int(round(f * np.sqrt(len(X))))
        t = time.perf_counter(); ivx = build_index(X, {"kind": "ivf", "nlist": nlist, "nprobe": 1}); t_build = time.perf_counter() - t
        for nprobe in (4, 8, 16, 32, 64, 128):
            ivx.nprobe = nprobe
            t = time.perf_counter(); _, I = ivx.search(Q, 10); tb = time.perf_counter() - t
            t = time.perf_counter()
            for q in Q[:100]: ivx.search(q[None], 10)
            ts = 1000 * (time.perf_counter() - t) / 100
            rec = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(I, exact)]))
            row = {"nlist_per_sqrt": f, "nlist": nlist, "nprobe": nprobe, "recall@10": round(rec, 4), "build_s": round(t_build, 1),
                   "ms_per_query_batched": round(1000 * tb / len(Q), 3), "ms_per_query_single": round(ts, 3), "loadavg": _load()[0]}
            res["ivf"].append(row); print(row, flush=True)
        del ivx
    ok = [r for r in res["ivf"] if r["recall@10"] >= 0.98]
    res["chosen"] = min(ok, key=lambda r: r["ms_per_query_single"]) if ok else None
    res["loadavg_end"] = _load()[0]
    out = record("scale_ivf", res, vars(a), folder=ROOT/"results"); print("chosen:", res["chosen"]); print(f"wrote {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ivf", action="store_true", help="the IVF recall measurement (results/scale_ivf.json)")
    ap.add_argument("--n", type=int, default=1_000_000); ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--factors", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 2.0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 10000, 100000])
    ap.add_argument("--real-max", type=int, default=1000, help="the real models up to this many articles")
    ap.add_argument("--throughput-articles", type=int, default=60, help="FNSPID articles for the chunks/s comparison")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--reproject", action="store_true", help="recompute the projection of results/scale.json from its rows")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS); ap.add_argument("--pipeline", default="real", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one: print(json.dumps(one_size(a.one, a.pipeline)))
    elif a.reproject:   # recompute the projection of results/scale.json from its measured rows (no measurement)
        env = read_record("scale", ROOT/"results"); res = env["result"]; res["projection"] = projection(res)
        record("scale", res, env["params"], folder=ROOT/"results", seconds=env["seconds"]); print(res["projection"])
    elif a.ivf: ivf(a)
    else: scale(a)
