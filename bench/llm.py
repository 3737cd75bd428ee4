"""LLM benchmark: how fast the in-process llama.cpp server runs each packaged tier, and how close to this
machine's limit. Numbers are printed and written to results/llm_bench.json (judge-tier: results/p2_judge_tier.json),
never asserted. The load average is printed with every row: on the shared 2-core machine numbers under load are not
idle numbers.

On an IDLE machine, run exactly (about 30-40 minutes in all):

    python bench/llm.py all --tiers qwen2.5-coder-1.5b,qwen2.5-coder-0.5b
    python bench/llm.py judge-tier --tier qwen2.5-coder-0.5b --queries 30
    python bench/llm.py judge-tier --tier qwen2.5-coder-1.5b --queries 30

then set `[models] llm_slots` to the 'chosen slots' printed by `all` and `[models] judge_llm` to the tier whose AUC CI
is not below the other's at the lower cost (README "LLM tiers"). `--quick` runs every part on a few requests (for
debugging; the tiny tier by default; written to runs/*_quick.json, never over results/).

Commands:
  speed       single-sequence prompt and decode tokens/s (llama.cpp's own `timings`), each beside the limit it implies:
              measured float32 matmul GFLOP/s / (2 x parameters) for prompt reading (compute-bound), measured memory
              bandwidth / GGUF bytes for decoding (memory-bound), and the ratio; --demo: the demo's six answers too
  slots       throughput (tokens/s, requests/s) at 1/2/4/8 server slots with as many concurrent requests, for a
              decode-heavy job (RAGAS-like JSON answers) and a prompt-heavy one (P(yes) over 10 documents); the chosen
              default = the fewest slots within 10% of the best decode-heavy throughput
  judge       P(yes) of 10 documents for one query with the judge tier: wall seconds, and the prompt cache checked with
              the server's own timings (prompt tokens evaluated vs sent: the shared instruction+query prefix is cached)
  all         speed + slots + judge
  speculative greedy RAG-like answers of the 1.5B with speculative decoding off, with prompt n-gram drafts and with
              the 0.5B as draft model: decode tokens/s, acceptance, identical outputs (kept only if identical and >= 1.3x)
  ragas       where a judged RAGAS sample's minutes go (results/p1_ragas_cost.json): `--questions` of P1's FNSPID question
              set (the experiment's: 100 generated from the store, seed 0, a stratified head) answered in vector and graph
              mode by `evaluate_graphrag`, then the four LLM-judged metrics on those samples with an empty judgment cache,
              metric by metric: calls, prompt tokens and the share the server read from its prompt cache, completion
              tokens, unparsed answers, seconds per judged sample; twice, each on a fresh server (no prompt cache carried
              over), as configured ('before') and with each metric's output capped at `--caps` ('after'; RAGAS' prompts
              unchanged)
  judge-tier  per development dataset (financebench, finqa, tatqa): P(yes) AUC of a tier on N queries x their BM25
              top-10 pool (labels from the qrels), with a bootstrap 95% CI over queries, and tokens/s; resumable from
              the LLM disk cache (a rerun re-sends nothing already answered), with a progress bar
"""
import argparse, json, os, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
from pathlib import Path
from finrag.protocol import read_record, record
import numpy as np
from finrag.core import sample_news_path
from finrag.config import get_settings
from finrag.llm import LLMClient, chat_many
from finrag.llm_server import TIERS, LocalLLMServer, tier_gguf

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "llm_bench.json"
JUDGE_RESULTS = ROOT / "results" / "p2_judge_tier.json"
# parameters of each tier (model cards; the embedding matrix included): FLOPs per token ~ 2 x parameters
PARAMS = {"qwen2.5-coder-1.5b": 1.54e9, "qwen2.5-coder-0.5b": 0.49e9, "smollm2-135m": 0.135e9}
DEV_SETS = ("financebench", "finqa", "tatqa")


def load() -> float: return os.getloadavg()[0]


def matmul_gflops(n: int = 1024, reps: int = 5) -> float:
    "Measured float32 matrix-product GFLOP/s of numpy on this machine (best of `reps`; 2 n^3 FLOPs each)."
    a, b = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(reps))
    return 2 * n ** 3 / best / 1e9


def mem_bandwidth_gbs(mb: int = 256, reps: int = 5) -> float:
    "Measured memory bandwidth in GB/s: bytes read + written by a numpy copy of an `mb` MB array (best of `reps`)."
    x = np.ones(mb * 2 ** 20 // 8); y = np.empty_like(x)
    np.copyto(y, x)
    best = min(_timed(lambda: np.copyto(y, x)) for _ in range(reps))
    return 2 * x.nbytes / best / 1e9


def _timed(fn) -> float:
    t0 = time.perf_counter(); fn(); return time.perf_counter() - t0


def limits(tier: str, gflops: float, gbs: float) -> dict:
    "The single-sequence limits a tier implies: prompt tok/s = GFLOP/s / (2 x params); decode tok/s = GB/s / GGUF bytes."
    return {"prompt_tok_s_limit": gflops * 1e9 / (2 * PARAMS[tier]), "decode_tok_s_limit": gbs * 1e9 / TIERS[tier].size}


def prompt_of(n_tokens: int) -> list:
    "A news-reading prompt of about `n_tokens` tokens (the made-up sample's text, ~4 characters per token)."
    texts = [json.loads(l)["text"] for l in sample_news_path().read_text().splitlines()]
    body, i = "", 0
    while len(body) < 4 * n_tokens: body += texts[i % len(texts)] + "\n\n"; i += 1
    return [{"role": "system", "content": "You are a financial analyst."},
            {"role": "user", "content": f"News:\n{body}\nSummarise the news above in detail, company by company."}]


def news_texts() -> list:
    return [json.loads(l)["text"] for l in sample_news_path().read_text().splitlines()]


RAGAS_LIKE = {"type": "object", "properties": {"statements": {"type": "array", "items": {"type": "string"}}},
              "required": ["statements"]}


def decode_job(n: int, gen: int) -> list:
    "n RAGAS-like requests (break an answer into statements, JSON): short prompts, `gen`-token JSON answers."
    texts = news_texts()
    return [dict(messages=[{"role": "system", "content": "Break the answer into short factual statements. Answer in JSON."},
                           {"role": "user", "content": f"Question: what happened?\nAnswer: {texts[i % len(texts)][:600]}"}],
                 json_schema=RAGAS_LIKE, max_tokens=gen, temperature=0.0) for i in range(n)]


def judge_job(query: str, docs: list) -> list:
    "The P(yes) requests of one query over `docs` (finrag.relevance's prompt: the shared prefix first)."
    from finrag.relevance import relevance_messages
    return [dict(messages=relevance_messages(query, d, max_doc_tokens=200), max_tokens=1, temperature=0.0, logprobs=20) for d in docs]


def run_job(c: LLMClient, reqs: list, concurrency: int) -> dict:
    "Wall seconds, tokens/s and requests/s of `reqs` through `chat_many` (uncached)."
    t0 = time.perf_counter(); out = chat_many(c, reqs, concurrency); wall = time.perf_counter() - t0
    ok = [r for r in out if not isinstance(r, Exception)]
    pt, ct = sum(r.prompt_tokens for r in ok), sum(r.completion_tokens for r in ok)
    evaluated = sum((r.server_timings or {}).get("prompt_n", r.prompt_tokens) for r in ok)
    return {"requests": len(reqs), "failed": len(reqs) - len(ok), "wall_s": round(wall, 3), "prompt_tokens": pt,
            "prompt_tokens_evaluated": evaluated, "completion_tokens": ct, "completion_tok_s": round(ct / wall, 2),
            "prompt_tok_s": round(pt / wall, 2), "requests_s": round(len(ok) / wall, 3)}


def client_for(srv, name) -> LLMClient:
    c = LLMClient(base_url=srv.base_url, model=name, cache_dir=False, timeout=1800, max_retries=0, call_deadline=3600)
    c.chat([{"role": "user", "content": "Say OK."}], max_tokens=2)    # warm-up (first request is slower)
    return c


def cmd_speed(a, out):
    g, bw = matmul_gflops(), mem_bandwidth_gbs()
    out["machine"] = {"cores": os.cpu_count(), "matmul_gflops": round(g, 1), "mem_gbs": round(bw, 2), "load": load()}
    print(f"machine: {os.cpu_count()} cores, numpy float32 matmul {g:.1f} GFLOP/s, memory copy {bw:.2f} GB/s, load {load():.1f}")
    print(f"{'tier':<20} {'thr':>3} {'load':>5} {'start s':>7} {'prompt':>6} {'prompt t/s':>10} {'limit':>7} {'ratio':>5} "
          f"{'decode t/s':>10} {'limit':>7} {'ratio':>5} {'TTFT s':>7}")
    msgs, rows = prompt_of(a.prompt_tokens), []
    for name in a.tiers:
        tier_gguf(name)                                       # assemble once, outside the timings
        lim = limits(name, g, bw)
        for thr in a.threads:
            l0 = load()
            with LocalLLMServer(name, n_threads=thr, slots=1) as srv:
                c = client_for(srv, name)
                r = c.chat(msgs, max_tokens=a.gen, temperature=0.0, on_token=lambda s: None)
                t = r.server_timings or {}
                pps, dps = t.get("prompt_per_second", float("nan")), t.get("predicted_per_second", float("nan"))
                row = dict(tier=name, threads=thr, load=l0, start_s=srv.start_s, prompt_n=t.get("prompt_n", r.prompt_tokens),
                           prompt_tok_s=pps, decode_tok_s=dps, ttft_s=r.first_token_s, **lim,
                           prompt_ratio=pps / lim["prompt_tok_s_limit"], decode_ratio=dps / lim["decode_tok_s_limit"])
                if a.demo:
                    row["demo_llm_s"], row["demo_prompt_tokens"], row["demo_answer_tokens"] = demo_llm_seconds(c)
                print(f"{name:<20} {thr:>3} {l0:>5.1f} {srv.start_s:>7.2f} {row['prompt_n']:>6} {pps:>10.1f} "
                      f"{lim['prompt_tok_s_limit']:>7.1f} {row['prompt_ratio']:>5.2f} {dps:>10.1f} {lim['decode_tok_s_limit']:>7.1f} "
                      f"{row['decode_ratio']:>5.2f} {r.first_token_s or float('nan'):>7.2f}", flush=True)
                rows.append(row); c.close()
    out["speed"] = rows


def cmd_slots(a, out):
    rows, chosen = [], {}
    print(f"{'tier':<20} {'slots':>5} {'load':>5} {'job':<7} {'reqs':>4} {'wall s':>7} {'decode t/s':>10} {'prompt t/s':>10} {'req/s':>6}")
    for name in a.tiers:
        tier_gguf(name)
        docs = news_texts()[:10]
        for n in a.slots:
            l0 = load()
            with LocalLLMServer(name, n_threads=a.threads[0], slots=n) as srv:
                c = client_for(srv, name)
                for job, reqs in (("decode", decode_job(max(n, a.decode_requests), a.gen)),
                                  ("prompt", judge_job("Which companies reported record revenue?", docs))):
                    r = dict(tier=name, slots=n, load=l0, job=job, **run_job(c, reqs, n))
                    rows.append(r)
                    print(f"{name:<20} {n:>5} {l0:>5.1f} {job:<7} {r['requests']:>4} {r['wall_s']:>7.2f} {r['completion_tok_s']:>10.1f} "
                          f"{r['prompt_tok_s']:>10.1f} {r['requests_s']:>6.2f}", flush=True)
                c.close()
        dec = {r["slots"]: r["completion_tok_s"] for r in rows if r["tier"] == name and r["job"] == "decode"}
        best = max(dec.values())
        pick = min(s for s, v in dec.items() if v >= 0.9 * best)
        chosen[name] = {"slots": pick, "decode_speedup_vs_fewest": round(dec[pick] / dec[min(dec)], 2) if dec[min(dec)] else None}
        print(f"{name}: chosen slots {pick} (decode-heavy throughput {chosen[name]['decode_speedup_vs_fewest']}x that of "
              f"{min(dec)} slot{'s' if min(dec) > 1 else ''}; the issue asks >= 2x the single-sequence throughput)")
    out["slots"], out["chosen_slots"] = rows, chosen


def cmd_judge(a, out):
    s = get_settings()
    name = a.judge_tier or s.models.judge_llm or s.models.llm
    tier_gguf(name)
    docs = news_texts()[:10]
    with LocalLLMServer(name, n_threads=a.threads[0], slots=a.judge_slots) as srv:
        c = client_for(srv, name)
        r = run_job(c, judge_job("Which companies reported record revenue?", docs), a.judge_slots)
        c.close()
    r.update(tier=name, slots=a.judge_slots, load=load(), cached_prompt_tokens=r["prompt_tokens"] - r["prompt_tokens_evaluated"])
    out["judge"] = r
    print(f"P(yes) of 10 documents, {name}, {a.judge_slots} slots: {r['wall_s']:.2f} s wall (target <= 10 s); prompt tokens "
          f"sent {r['prompt_tokens']}, evaluated {r['prompt_tokens_evaluated']}, from the prompt cache {r['cached_prompt_tokens']}")


def demo_llm_seconds(llm) -> tuple[float, int, int]:
    "(seconds, prompt tokens, answer tokens) of the demo's six answers, uncached, with `llm`."
    from finrag.graphrag.cli import DEMO_QUESTIONS
    from finrag.graphrag.rag import GraphRAG
    from finrag.graphrag.answer import answer
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


# ---- speculative: the 0.5B drafting for the 1.5B, and prompt n-gram drafts, against plain decoding ----

ANSWER_QUESTIONS = ("Which companies are mentioned and what happened to each? Answer in 3 sentences, citing the text.",
                    "Summarise the news about Nvidia in two sentences, quoting the text where possible.",
                    "Which company's news could affect its suppliers, and why? Two sentences.")


def cmd_speculative(a, out):
    """Greedy answers (RAG-like: ~600 news tokens + a question) of the 1.5B with speculative decoding off, with n-gram
    drafts from the prompt, and with the 0.5B as draft model: decode tokens/s from the server's timings, the draft
    acceptance, and whether every output is identical to plain decoding. Kept only if identical and >= 1.3x."""
    target, draft = a.spec_target, a.spec_draft
    ctx = prompt_of(a.prompt_tokens)[1]["content"].split("\nSummarise")[0]
    reqs = [dict(messages=[{"role": "user", "content": f"{ctx}\nQuestion: {q}"}], max_tokens=a.gen * 2, temperature=0.0)
            for q in ANSWER_QUESTIONS]
    rows, base = {}, None
    for mode in ("none", "ngram", f"draft:{draft}"):
        spec = None if mode == "none" else ("ngram" if mode == "ngram" else draft)
        with LocalLLMServer(target, n_threads=a.threads[0], slots=1, speculative=spec) as srv:
            c = client_for(srv, target)
            res = [c.chat(**r) for r in reqs]
            c.close()
        tm = [r.server_timings or {} for r in res]
        dec_n, dec_ms = sum(t.get("predicted_n", 0) for t in tm), sum(t.get("predicted_ms", 0) for t in tm)
        texts = [r.text for r in res]
        if base is None: base = texts
        rows[mode] = {"decode_tok_s": round(1000 * dec_n / dec_ms, 2) if dec_ms else None, "completion_tokens": dec_n,
                      "drafted": sum(t.get("draft_n") or 0 for t in tm), "accepted": sum(t.get("draft_n_accepted") or 0 for t in tm),
                      "identical_to_plain": texts == base, "identical_per_answer": [x == y for x, y in zip(texts, base)], "load": load()}
        print(mode, rows[mode], flush=True)
    plain = rows["none"]["decode_tok_s"]
    for m, r in rows.items(): r["speedup"] = round(r["decode_tok_s"] / plain, 3) if plain and r["decode_tok_s"] else None
    keep = [m for m, r in rows.items() if m != "none" and r["identical_to_plain"] and (r["speedup"] or 0) >= 1.3]
    out["speculative"] = {"target": target, "draft": draft, "threads": a.threads[0], "answers": len(reqs), "rows": rows,
                          "kept": keep or None, "rule": "identical greedy outputs and >= 1.3x decode tokens/s"}
    print("kept:", keep or "none (speculative decoding stays off)", flush=True)


# ---- judge-tier: the 0.5B vs the 1.5B as the P(yes) judge on the development pairs ----

def auc(scores, labels) -> float:
    "ROC AUC of scores against 0/1 labels (`finrag.hierarchical.eval.roc_auc`: ties count half); failed (NaN) scores left out, NaN without both classes."
    from finrag.hierarchical.eval import roc_auc
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    ok = np.isfinite(s)
    return roc_auc(s[ok & y], s[ok & ~y])


def judge_pools(name: str, n_queries: int, k: int = 10, root=None) -> list:
    "[(query id, query, [(doc id, text, label)])] for the first `n_queries` queries with qrels: their BM25 top-`k` pool."
    from finrag.datasets import load_dev
    from finrag.retrieval import BM25Retriever, doc_text
    ds = load_dev(name, root)
    qids = [q for q in ds.queries if ds.qrels.get(q)][:n_queries]
    run = BM25Retriever(ds.corpus).search({q: ds.queries[q] for q in qids}, k=k)
    return [(q, ds.queries[q], [(d, doc_text(ds.corpus[d]), int(ds.qrels[q].get(d, 0) > 0)) for d in run.get(q, {})]) for q in qids]


def _finite(v):
    "JSON-safe: NaN -> None (also inside lists)."
    if isinstance(v, list): return [_finite(x) for x in v]
    return None if isinstance(v, float) and not np.isfinite(v) else v


def cmd_judge_tier(a):
    from tqdm.auto import tqdm
    from finrag.relevance import relevance_many
    from finrag.stats import bootstrap_ci
    name = a.tier
    tier_gguf(name)
    res = read_record(JUDGE_RESULTS)["result"] if JUDGE_RESULTS.exists() else {}
    with LocalLLMServer(name, n_threads=a.threads[0], slots=a.judge_slots) as srv:
        c = LLMClient(base_url=srv.base_url, model=name, timeout=1800, max_retries=1, call_deadline=3600)  # disk cache on: resumable
        for ds in a.datasets:
            pools = judge_pools(ds, a.queries, root=a.data_root)
            scores, labels, per_q, t0, before = [], [], [], time.perf_counter(), c.stats.as_dict()
            for qid, q, pool in tqdm(pools, desc=f"{name} {ds}"):
                ps = relevance_many(q, [t for _, t, _ in pool], c, max_doc_tokens=a.doc_tokens, concurrency=a.judge_slots, on_error="nan")
                ys = [y for _, _, y in pool]
                scores += ps; labels += ys; per_q.append(auc(ps, ys))
            st = c.stats.since(before, ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds"))
            lo, hi = bootstrap_ci(per_q)
            row = {"tier": name, "dataset": ds, "queries": len(pools), "pairs": len(labels), "positives": int(sum(labels)),
                   "auc_pooled": auc(scores, labels), "auc_per_query_mean": float(np.nanmean(per_q)) if np.isfinite(per_q).any() else float("nan"),
                   "auc_per_query_ci95": [lo, hi], "queries_with_both_labels": int(np.isfinite(per_q).sum()),
                   "http_seconds": round(st["seconds"], 2), "wall_s": round(time.perf_counter() - t0, 2),
                   "prompt_tok_s": None if st["calls"] == st["cache_hits"] else round(st["prompt_tokens"] / (time.perf_counter() - t0), 1),
                   "calls": st["calls"], "cache_hits": st["cache_hits"], "load": load(), "doc_tokens": a.doc_tokens, "stage1": "bm25 top-10"}
            row = {k: _finite(v) for k, v in row.items()}
            res[f"{name}/{ds}"] = row
            print(json.dumps(row), flush=True)
        c.close()
    record(JUDGE_RESULTS.stem, {k: res[k] for k in sorted(res)}, vars(a), folder=JUDGE_RESULTS.parent)
    print(f"wrote {JUDGE_RESULTS}")


RAGAS_COST = ROOT / "results" / "p1_ragas_cost.json"
FNSPID_AAPL = "news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"


def cmd_ragas(a):
    import tempfile
    from finrag.download import data_root
    from finrag.graphrag.ingest import ingest, NewsStore
    from finrag.graphrag.questions import generate_questions
    from finrag.graphrag.eval import evaluate_graphrag, interleave_types, reference_contexts, _stratified_head
    from finrag.graphrag.ragas_adapter import RAGAS_LLM_METRICS, USAGE_KEYS, ragas_llm, ragas_score
    t_all, load0, modes = time.perf_counter(), os.getloadavg(), ("vector", "graph")
    ingest(Path(a.data_root or data_root()) / FNSPID_AAPL, a.store)          # idempotent: a built store is kept
    st = NewsStore(a.store)
    qs = interleave_types(generate_questions(st, seed=0))   # the P1 experiment's set ([graphrag] n_questions, the 30/70 mix)
    head = _stratified_head(qs, a.questions)
    sub = [q for q in qs if q.id in head]
    res = evaluate_graphrag(st, sub, use_llm=True, ragas=False, modes=modes, llm_modes=modes, max_tokens=120, progress=True)   # the experiment's answer cap
    text = {r["id"]: r["text"] for r in st.rows}
    qmap = {q.id: q for q in sub}
    samples = [dict(user_input=qmap[r["question_id"]].question, response=r["answer"], retrieved_contexts=[text[c] for c in r["chunk_ids"]],
                    reference=qmap[r["question_id"]].reference_answer, reference_contexts=reference_contexts(st, qmap[r["question_id"]]))
               for r in res["rows"] if r["answered"] and r.get("answer")]
    caps = {}
    for kv in (a.caps.split(",") if a.caps else []):
        m, _, v = kv.partition("=")
        if m not in RAGAS_LLM_METRICS or not v.isdigit():
            sys.exit(f"error: --caps {kv!r}: METRIC=TOKENS with METRIC one of {', '.join(RAGAS_LLM_METRICS)}")
        caps[m] = int(v)
    out = {"questions": [q.id for q in sub], "modes": list(modes), "samples": len(samples), "caps": caps, "llm_slots": get_settings().models.llm_slots}
    for label, cap in (("before", None), ("after", caps)):
        with LocalLLMServer() as srv, tempfile.TemporaryDirectory(prefix="ragas-cost-") as tmp:   # a fresh server per pass: no prompt cache carried over
            judge = ragas_llm(srv.base_url, srv.alias, cache=tmp)   # an empty judgment cache: every call is paid
            t0 = time.perf_counter()
            sc, rep = ragas_score(samples, RAGAS_LLM_METRICS, llm=judge, progress=True, max_tokens=cap)
            wall = time.perf_counter() - t0
        per = {m: {k: rep[m].get(k, 0) for k in ("ok", "nan", "skipped", *USAGE_KEYS)} | {
                   "errors": rep[m]["errors"], "seconds": round(rep[m]["seconds"], 1),
                   "seconds_per_sample": round(rep[m]["seconds"] / max(1, len(samples)), 1),
                   "calls_per_sample": round(rep[m].get("calls", 0) / max(1, len(samples)), 2),
                   "prompt_tokens_per_call": round(rep[m].get("prompt_tokens", 0) / max(1, rep[m].get("calls", 0)), 1),
                   "cached_share": round(rep[m].get("cached_tokens", 0) / max(1, rep[m].get("prompt_tokens", 0)), 3),
                   "completion_tokens_per_call": round(rep[m].get("completion_tokens", 0) / max(1, rep[m].get("calls", 0)), 1)}
               for m in RAGAS_LLM_METRICS}
        out[label] = {"seconds": round(wall, 1), "seconds_per_judged_sample": round(wall / max(1, len(samples)), 1), "metrics": per,
                      "scores": {m: [None if v != v else round(v, 4) for v in (s[m] for s in sc)] for m in RAGAS_LLM_METRICS}, "load_end": load()}
        print(json.dumps({label: {k: out[label][k] for k in ("seconds", "seconds_per_judged_sample")} |
                          {m: {k: per[m][k] for k in ("calls_per_sample", "prompt_tokens_per_call", "cached_share", "completion_tokens_per_call", "seconds_per_sample", "nan")}
                           for m in per}}, indent=1), flush=True)
        record(RAGAS_COST.stem, out, vars(a), n={"samples": len(samples)}, seconds=time.perf_counter() - t_all, loadavg_start=load0,
               folder=RAGAS_COST.parent)   # after each pass: an interrupted run keeps 'before'
    print(f"wrote {RAGAS_COST}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", nargs="?", default="speed", choices=["speed", "slots", "judge", "all", "judge-tier", "speculative", "ragas"])
    ap.add_argument("--spec-target", default="qwen2.5-coder-1.5b", help="speculative: the model answering")
    ap.add_argument("--spec-draft", default="qwen2.5-coder-0.5b", help="speculative: the draft model")
    ap.add_argument("--tiers", default=None, help="comma-separated tiers (default: all three; --quick: smollm2-135m)")
    ap.add_argument("--threads", default="1", help="llama.cpp threads, comma-separated (speed); the first one elsewhere")
    ap.add_argument("--slots", default="1,2,4,8", help="server slots to compare (slots)")
    ap.add_argument("--prompt-tokens", type=int, default=700)
    ap.add_argument("--gen", type=int, default=64, help="generated tokens per request (speed, decode-heavy job)")
    ap.add_argument("--decode-requests", type=int, default=8, help="requests of the decode-heavy job (at least the slots)")
    ap.add_argument("--judge-slots", type=int, default=None, help="slots for judge / judge-tier (default [models] llm_slots)")
    ap.add_argument("--judge-tier", default=None, help="judge: the tier (default [models] judge_llm, else llm)")
    ap.add_argument("--demo", action="store_true", help="speed: also time the demo's six answers (minutes per 1.5B row)")
    ap.add_argument("--tier", default="qwen2.5-coder-0.5b", help="judge-tier: the tier judged")
    ap.add_argument("--datasets", default=",".join(DEV_SETS), help="judge-tier: development datasets")
    ap.add_argument("--queries", type=int, default=30, help="judge-tier: queries per dataset")
    ap.add_argument("--doc-tokens", type=int, default=200, help="judge-tier: document cut in tokens (LLMYesNoScorer's default)")
    ap.add_argument("--data-root", default=None, help="judge-tier: the data root (default ../shared/data)")
    ap.add_argument("--store", default="stores/fnspid", help="ragas: the FNSPID store (ingested there when missing)")
    ap.add_argument("--questions", type=int, default=2, help="ragas: questions (stratified head), each answered in vector and graph mode")
    ap.add_argument("--caps", default="faithfulness=384,answer_relevancy=96,context_precision=160,context_recall=256",
                    help="ragas: 'after' pass output caps, METRIC=TOKENS comma-separated")
    ap.add_argument("--quick", action="store_true", help="a few requests per part, tiny tier unless --tiers/--tier: for debugging")
    a = ap.parse_args(argv)
    a.tiers = (a.tiers or ("smollm2-135m" if a.quick else ",".join(TIERS))).split(",")
    a.threads = [int(t) for t in a.threads.split(",")]
    a.slots = [int(s) for s in a.slots.split(",")] if not a.quick or a.slots != "1,2,4,8" else [1, 2]
    a.judge_slots = a.judge_slots or get_settings().models.llm_slots
    a.datasets = a.datasets.split(",")
    if a.quick:
        a.prompt_tokens, a.gen, a.decode_requests = min(a.prompt_tokens, 200), min(a.gen, 16), 2
        if a.command == "judge-tier": a.queries = min(a.queries, 2)
    global RESULTS, JUDGE_RESULTS, RAGAS_COST
    if a.quick:   # quick numbers never overwrite the kept ones
        RESULTS, JUDGE_RESULTS = ROOT / "runs" / "llm_bench_quick.json", ROOT / "runs" / "p2_judge_tier_quick.json"
        RAGAS_COST = ROOT / "runs" / "p1_ragas_cost_quick.json"
    if a.command == "judge-tier": return cmd_judge_tier(a)
    if a.command == "ragas": return cmd_ragas(a)
    out = read_record(RESULTS)["result"] if RESULTS.exists() else {}
    out.update(quick=a.quick, when=time.strftime("%Y-%m-%d %H:%M:%S"), load_at_start=load())
    if a.command in ("speed", "all"): cmd_speed(a, out)
    if a.command in ("slots", "all"): cmd_slots(a, out)
    if a.command in ("judge", "all"): cmd_judge(a, out)
    if a.command == "speculative": cmd_speculative(a, out)
    record(RESULTS.stem, {k: out[k] for k in sorted(out)}, vars(a), folder=RESULTS.parent)
    print(f"wrote {RESULTS}" + ("  (--quick: not the numbers to keep)" if a.quick else ""))


if __name__ == "__main__":
    sys.exit(main())
