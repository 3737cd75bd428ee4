"""LLM tier benchmark: for each packaged tier and thread count, the in-process llama.cpp server's start time, prompt
and decode tokens/s (llama.cpp's own `timings`), the time to the first streamed token, and — with --demo — the total
LLM time of `finrag demo`'s six answers (three questions, vector and graph) on the made-up sample.

    python bench/llm.py [--tiers qwen2.5-coder-1.5b,qwen2.5-coder-0.5b,smollm2-135m] [--threads 1,2]
                        [--prompt-tokens 700] [--gen 64] [--demo]

Numbers are printed, never asserted. The load average is printed with every row: on a shared 2-core machine the
2-thread rows are meaningless under load (llama.cpp's threads wait for each other at every step); rerun idle.
The first use of a Qwen tier assembles its GGUF from the installed part packages (once, into <cache_dir>/models).
"""
import argparse, os
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
from finrag.core import sample_news_path
from finrag.config import get_settings
from finrag.llm import LLMClient
from finrag.llm_server import TIERS, LocalLLMServer, tier_gguf


def prompt_of(n_tokens: int) -> list:
    "A news-reading prompt of about `n_tokens` tokens (the made-up sample's text, ~4 characters per token)."
    import json
    texts = [json.loads(l)["text"] for l in sample_news_path().read_text().splitlines()]
    body, i = "", 0
    while len(body) < 4 * n_tokens: body += texts[i % len(texts)] + "\n\n"; i += 1
    return [{"role": "system", "content": "You are a financial analyst."},
            {"role": "user", "content": f"News:\n{body}\nSummarise the news above in detail, company by company."}]


def demo_llm_seconds(llm) -> tuple[float, int, int]:
    "(seconds, prompt tokens, answer tokens) of the demo's six answers, uncached, with `llm`."
    from finrag.cli import DEMO_QUESTIONS
    from finrag.graphrag.rag import GraphRAG, answer
    from finrag.graphrag.ingest import ingest
    store = get_settings().cache_dir / "demo-store"
    ingest(sample_news_path(), store, progress=False)
    rag, secs, pt, ct = GraphRAG(store, llm=llm), 0.0, 0, 0
    try:
        for q in DEMO_QUESTIONS:
            for mode in ("vector", "graph"):
                r = answer(rag, rag.retrieve(q, mode), llm=llm)
                secs += r.llm["latency_s"]; pt += r.llm["prompt_tokens"]; ct += r.llm["completion_tokens"]
    finally: rag.store.close()
    return secs, pt, ct


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiers", default=",".join(TIERS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--prompt-tokens", type=int, default=700)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--demo", action="store_true", help="also time the demo's six answers (minutes per 1.5B row)")
    a = ap.parse_args()
    print(f"LLM bench: {os.cpu_count()} cores, prompt ~{a.prompt_tokens} tokens + {a.gen} generated, streamed, uncached")
    print(f"{'tier':<20} {'thr':>3} {'load':>5} {'start s':>7} {'prompt':>6} {'prompt t/s':>10} {'decode t/s':>10} "
          f"{'TTFT s':>7} {'total s':>7}" + ("  demo LLM s (prompt/answer tokens)" if a.demo else ""))
    msgs = prompt_of(a.prompt_tokens)
    for name in a.tiers.split(","):
        tier_gguf(name)                                       # assemble once, outside the timings
        for thr in (int(t) for t in a.threads.split(",")):
            load0 = os.getloadavg()[0]
            with LocalLLMServer(name, n_threads=thr) as srv:
                c = LLMClient(base_url=srv.base_url, model=name, cache_dir=False, timeout=1800, max_retries=0)
                c.chat([{"role": "user", "content": "Say OK."}], max_tokens=2)      # warm-up (first request is slower)
                r = c.chat(msgs, max_tokens=a.gen, temperature=0.0, on_token=lambda s: None)
                t = r.server_timings or {}
                row = (f"{name:<20} {thr:>3} {load0:>5.1f} {srv.start_s:>7.2f} {t.get('prompt_n', r.prompt_tokens):>6} "
                       f"{t.get('prompt_per_second', float('nan')):>10.1f} {t.get('predicted_per_second', float('nan')):>10.1f} "
                       f"{r.first_token_s or float('nan'):>7.2f} {r.latency_s:>7.2f}")
                if a.demo:
                    secs, pt, ct = demo_llm_seconds(c)
                    row += f"  {secs:>8.1f} ({pt}/{ct})"
                print(row + f"  [load after {os.getloadavg()[0]:.1f}]", flush=True)
                c.close()


if __name__ == "__main__":
    main()
