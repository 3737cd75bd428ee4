"""P1 benchmark: ingestion per stage, retrieval latency p50/p95 (vector and graph, no LLM) on LadybugDB and on
Neo4j-over-Bolt (a local ArcadeDB server), the graph hop's share of an end-to-end answer, the two embedder backends
(ONNX Runtime vs torch: seconds and per-chunk cosine) and the start-up of `finrag ask --no-llm`.

    python bench/graphrag.py [--news PATH] [--questions 60] [--no-bolt] [--no-llm] [--no-backends] [--out results/p1_speed.json]

Numbers are printed and recorded (`--out`, `finrag.protocol.record`), never asserted (targets from the P1 issue: ingest 143 articles <= 60 s; vector p95 <= 10 ms,
graph p95 <= 30 ms on LadybugDB).
"""
import argparse, os, shutil, statistics, sys, tempfile, time
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import numpy as np
from finrag.core import project_root
from finrag.protocol import record
from finrag.graphrag.ingest import ingest, NewsStore, rebuild_graph
from finrag.graphrag.rag import GraphRAG
from finrag.graphrag.answer import answer
from finrag.models import get_embedder
from finrag.sentiment import get_sentiment
from finrag.ner import get_ner, Gazetteer

DEFAULT_NEWS = project_root().parent / "shared/data/news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"


def pct(xs, p): return float(np.percentile(np.array(xs) * 1000, p))


def questions_for(store, n):
    "Template questions over the store's most-mentioned tickers: direct and relational (pairs joined by an edge)."
    gaz = Gazetteer.load()
    edges = sorted(store.graph.influences(), key=lambda e: -e["n_chunks"])
    qs = []
    for e in edges:
        a, b = gaz.name(e["src"]), gaz.name(e["dst"])
        qs += [f"How does news about {a} affect {b}?", f"What is the latest news on {a}?"]
        if len(qs) >= n: break
    return qs[:n]


def latency(rag, qs, label, paper=None):
    """Retrieval without the LLM per system, end to end and per stage: mean ± σ and p50/p95 (ms). Systems: vector top-k,
    the default graph (`rag`), the paper's 2-hop graph (`paper`, `graph_mode='paper'`) and BM25 + dense at the graph's
    budget (`hybrid@graph`, P1's strongest simple baseline). `after encoder` is everything but the query embedding (FAISS
    search, graph hop, rerank, context assembly): the part the graph store and finrag's code own."""
    for q in qs[:3]: rag.retrieve(q, "graph")  # warm-up
    out = {"n": len(qs)}
    systems = {"vector": lambda q: rag.retrieve(q, "vector"), "graph": lambda q: rag.retrieve(q, "graph")}
    if paper is not None: systems["paper"] = lambda q: paper.retrieve(q, "graph")
    from finrag.graphrag.eval_rows import _retrieve       # the evaluation's own hybrid@graph (the graph's budget, found before the clock starts)
    graph_of = {q: {"graph": rag.retrieve(q, "graph")} for q in qs}
    systems["hybrid@graph"] = lambda q: _retrieve(rag, paper, q, "hybrid@graph", graph_of[q])
    for mode, run in systems.items():
        lat, rest, stages = [], [], {}
        for q in qs:
            t0 = time.perf_counter(); r = run(q); dt = time.perf_counter() - t0
            lat.append(dt); rest.append(dt - r.timings.get("embed_query", 0))
            for k, v in r.timings.items(): stages.setdefault(k, []).append(v)
        ms = np.array(lat) * 1000
        out[mode] = {"mean_ms": round(float(ms.mean()), 2), "std_ms": round(float(ms.std(ddof=1)), 2),
                     "p50_ms": round(pct(lat, 50), 2), "p95_ms": round(pct(lat, 95), 2),
                     "after_encoder_p50_ms": round(pct(rest, 50), 2), "after_encoder_p95_ms": round(pct(rest, 95), 2),
                     "stages_p50_p95_ms": {k: [round(pct(v, 50), 2), round(pct(v, 95), 2)] for k, v in stages.items()}}
        print(f"{label:<22} {mode:<12} n={len(qs)}  mean {ms.mean():6.2f} ± {ms.std(ddof=1):5.2f} ms  p50 {pct(lat,50):6.2f} ms  p95 {pct(lat,95):6.2f} ms"
              f"   after encoder: p50 {pct(rest,50):5.2f} ms  p95 {pct(rest,95):5.2f} ms")
        print(" " * 36 + "stages p50/p95 ms: " + ", ".join(f"{k} {pct(v,50):.2f}/{pct(v,95):.2f}" for k, v in stages.items()))
    return out


def backends(store_dir, reps=2):
    """Embedder backends on the store's chunks, interleaved in one process (so load drifts hit both): seconds (best of
    `reps`, wall and CPU), the torch/onnx ratio, and the cosine of each chunk's two vectors (adopt onnx only if >= 0.999)."""
    from finrag.models import Embedder
    texts = [r["text"] for r in NewsStore(store_dir).rows]
    enc = {b: Embedder(backend=b) for b in ("onnx", "torch")}
    for e in enc.values(): e.encode(texts[:8])
    best, vecs = {}, {}
    for _ in range(reps):
        for b, e in enc.items():
            w, c = time.perf_counter(), time.process_time(); vecs[b] = e.encode(texts)
            w, c = time.perf_counter() - w, time.process_time() - c
            best[b] = min(best.get(b, (w, c)), (w, c))
    cos = (vecs["onnx"] * vecs["torch"]).sum(1)
    print(f"\n== embedder backends, {len(texts)} chunks (load avg {os.getloadavg()[0]:.1f}): " +
          ", ".join(f"{b} {w:.1f}s wall / {c:.1f}s CPU" for b, (w, c) in best.items()) +
          f"; torch/onnx {best['torch'][0]/best['onnx'][0]:.2f}x wall, {best['torch'][1]/best['onnx'][1]:.2f}x CPU; "
          f"cosine per chunk min {cos.min():.6f}, mean {cos.mean():.6f}")
    return {"chunks": len(texts), **{b: {"wall_s": round(w, 1), "cpu_s": round(c, 1)} for b, (w, c) in best.items()},
            "cosine_min": float(cos.min()), "cosine_mean": float(cos.mean())}


def startup(store_dir, reps=2):
    "Wall time of a whole `finrag ask --no-llm` process on the store (start-up + one retrieval), per embedder backend."
    import subprocess, tempfile as tf
    ini = Path(tf.mkdtemp()) / "settings.ini"
    from finrag.config import settings_path
    ini.write_text(settings_path().read_text().replace("embedder_backend = onnx", "embedder_backend = torch"))
    out = {}
    for b, env in (("onnx", {}), ("torch", {"FINRAG_SETTINGS": str(ini)})):
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", "from finrag.cli import main; main()", "ask", "How do Microsoft and Nvidia affect Apple?",
                                "--store", str(store_dir), "--no-llm"], capture_output=True, text=True, env={**os.environ, **env})
            ts.append(time.perf_counter() - t0)
            if p.returncode: print(p.stderr[-500:])
        print(f"`finrag ask --no-llm` start-up + retrieval, {b} backend: best {min(ts):.1f}s of {reps} (load avg {os.getloadavg()[0]:.1f})")
        out[b] = {"best_s": round(min(ts), 1), "reps": reps}
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--news", default=str(DEFAULT_NEWS)); ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--no-bolt", action="store_true"); ap.add_argument("--no-backends", action="store_true"); ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--out", default="results/p1_speed.json", help="the results file (empty: print only)")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="finrag-bench-"))
    t0 = time.perf_counter(); get_ner(); get_sentiment(); get_embedder(); load_s = time.perf_counter() - t0
    print(f"model load {load_s:.2f}s (once per process, not counted below)")
    res = {"model_load_s": round(load_s, 2)}
    t0 = time.perf_counter(); rep = ingest(a.news, tmp / "lb"); wall = time.perf_counter() - t0
    print(f"\n== ingest (LadybugDB): {rep.summary()}\nwall {wall:.2f}s")
    res["ingest"] = {"articles": rep.articles, "chunks": rep.new_chunks, "tickers": rep.tickers, "edges": rep.edges, "wall_s": round(wall, 1), "stage_seconds": {k: round(v, 1) for k, v in rep.seconds.items()}}
    t0 = time.perf_counter(); rep2 = ingest(a.news, tmp / "lb"); w2 = time.perf_counter() - t0
    print(f"re-ingest (idempotent, nothing new): {w2:.2f}s, {rep2.new_chunks} new chunks")
    res["reingest"] = {"wall_s": round(w2, 1), "new_chunks": rep2.new_chunks}
    if not a.no_backends: res["embedder_backends"] = backends(tmp / "lb"); res["ask_startup"] = startup(tmp / "lb")

    store = NewsStore(tmp / "lb"); rag = GraphRAG(store)
    qs = questions_for(store, a.questions)
    print(f"\n== retrieval latency without LLM ({len(qs)} template questions)")
    res["latency_ladybugdb"] = latency(rag, qs, "LadybugDB (embedded)", GraphRAG(store, graph_mode="paper"))

    if not a.no_llm:
        from finrag.llm import LLMClient
        llm, shares, llm_s = LLMClient(cache_dir=False), [], []   # no cache: a cached answer would make the LLM look free
        for q in qs[:5]:
            r = answer(rag, rag.retrieve(q, "graph"), llm=llm)
            llm_s.append(r.timings["llm"])
            shares.append((r.timings.get("graph_hop", 0) + r.timings.get("rerank", 0)) / sum(r.timings.values()))
        print(f"graph hop + rerank share of an end-to-end graph answer (local SmolLM2, uncached, 5 questions): "
              f"median {100*statistics.median(shares):.2f} %, LLM p50 {pct(llm_s, 50):.0f} ms")
        res["graph_share_of_answer"] = {"median_pct": round(100*statistics.median(shares), 2), "llm_p50_ms": round(pct(llm_s, 50)), "questions": 5}
    store.close()

    if not a.no_bolt:
        from finrag.testing import start_arcadedb
        h = start_arcadedb(tmp / "arcade", "finrag-bench-pw")
        try:
            os.environ.update(FINRAG_NEO4J_URI=h.uri, FINRAG_NEO4J_USER=h.user, FINRAG_NEO4J_PASSWORD=h.password)
            (tmp / "bolt").mkdir()
            for f in ("chunks.jsonl", "embeddings.npy", "meta.json"): shutil.copy(tmp / "lb" / f, tmp / "bolt" / f)
            t0 = time.perf_counter(); c = rebuild_graph(tmp / "bolt"); wb = time.perf_counter() - t0
            print(f"\n== graph written to Neo4j/Bolt (ArcadeDB) from the same chunks: {c} in {wb:.2f}s")
            res["bolt_write_s"] = round(wb, 2)
            store = NewsStore(tmp / "bolt"); rag = GraphRAG(store)
            res["latency_bolt"] = latency(rag, qs, "Neo4j/Bolt (ArcadeDB)")
            store.close()
        finally:
            for k in ("FINRAG_NEO4J_URI", "FINRAG_NEO4J_USER", "FINRAG_NEO4J_PASSWORD"): os.environ.pop(k, None)
            h.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    if a.out: print("wrote", record(Path(a.out).stem, res, vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0))
