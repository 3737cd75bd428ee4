"""Foundation benchmark: per-stage throughput of the offline stack on 2 CPU cores.

Prints, for the made-up sample and for the FNSPID full-text articles (rows with Mark == "1"):
load, chunking, NER, sentiment and embedding throughput (items/s and chunks/s), then LLM decode tokens/s
on the local llama.cpp server. Not a test: numbers are printed, never asserted.

    python bench/foundation.py [--fnspid PATH] [--no-llm]
"""
import argparse, os, statistics, time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from finrag.core import Timings, sample_news_path, project_root
from finrag.data import load_news
from finrag.chunking import Chunker, chunk_news
from finrag.models import get_embedder
from finrag.sentiment import get_sentiment
from finrag.ner import get_ner

DEFAULT_FNSPID = project_root().parent / "shared/data/news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"


def run(path, label):
    t = Timings()
    with t("load"): items, rep = load_news(path)
    chunker = Chunker()
    with t("chunk"): chunks = chunk_news(items, chunker)
    texts = [c.text for c in chunks]
    ner, sent, emb = get_ner(), get_sentiment(), get_embedder()
    with t("ner"): ner.pipe(texts)
    with t("sentiment"): sent.batch(texts)
    with t("embed"): emb.encode(texts, batch_size=64)
    ntok = sum(c.n_tokens for c in chunks)
    print(f"\n== {label}: {len(items)} articles, {len(chunks)} chunks, {ntok} tokens "
          f"({ntok/max(len(chunks),1):.0f} tokens/chunk); {rep.n_bad} bad rows, {rep.n_filtered} filtered")
    print(f"{'stage':<10} {'seconds':>8} {'articles/s':>11} {'chunks/s':>9}")
    for k, v in t.items():
        print(f"{k:<10} {v:8.2f} {len(items)/v:11.1f} {len(chunks)/v:9.1f}")
    print(f"{'total':<10} {t.total:8.2f}")


def llm_bench(n=5):
    from finrag.llm import LLMClient
    from finrag.llm_server import local_server
    import tempfile
    t0 = time.perf_counter(); local_server().start(); start_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        llm = LLMClient(cache_dir=d)
        lat, tps = [], []
        for i in range(n):
            r = llm.chat([{"role": "user", "content": f"Write three sentences about semiconductor supply chains. ({i})"}],
                         max_tokens=128, seed=i)
            lat.append(r.latency_s); tps.append(r.completion_tokens / r.latency_s)
    print(f"\n== LLM (local llama.cpp, {llm.model}): server start {start_s:.2f}s; {n} calls of <=128 tokens: "
          f"latency p50 {statistics.median(lat):.2f}s, decode {statistics.median(tps):.0f} tokens/s (median, incl. prompt)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnspid", default=str(DEFAULT_FNSPID))
    ap.add_argument("--no-llm", action="store_true")
    a = ap.parse_args()
    import torch; print(f"threads: torch {torch.get_num_threads()}, cpus {os.cpu_count()}")
    t0 = time.perf_counter(); get_ner(); get_sentiment(); get_embedder()
    print(f"model load (NER + sentiment + embedder): {time.perf_counter()-t0:.2f}s")
    run(sample_news_path(), "made-up sample")
    if Path(a.fnspid).exists(): run(a.fnspid, "FNSPID AAPL full text (Mark == 1)")
    else: print(f"\n(FNSPID file not found at {a.fnspid}; pass --fnspid PATH)")
    if not a.no_llm: llm_bench()
