"""Render the results blocks of the README and the docs pages from the result envelopes (`results/*.json`, written by
`finrag.protocol.record`): one script, so a measured number lives in one file and is rendered wherever it appears.

    python tools/render_results.py           # rewrite every block in place
    python tools/render_results.py --check   # exit 1 naming each stale block (tests/test_readme.py runs the check)

A block is the text between `<!-- render: NAME -->` and `<!-- /render -->` in a Markdown file of `PAGES`; NAME is one
of `RENDERERS`. A renderer reads the envelopes' `result`s; where a file holds the per-query values but not a paired
difference's CI (P1's graph − hybrid), it computes it (`finrag.stats.paired_bootstrap_ci`, seed 0). Everything outside
the blocks is prose, whose numbers tests/test_readme.py checks against the results files the prose names.
"""
import argparse, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PAGES = ("README.md", "docs/results.md", "docs/results-p1.md", "docs/results-p2.md", "docs/results-p3.md", "docs/performance.md",
         "data/sample/README.md")
BLOCK = re.compile(r"(<!-- render: ([\w-]+) -->\n)(.*?)(<!-- /render -->)", re.S)


def envelope(name: str) -> dict:
    "The envelope of results/NAME.json (`finrag.protocol.read_record`)."
    from finrag.protocol import read_record
    return read_record(ROOT / "results" / f"{name}.json")


def result(name: str) -> dict: return envelope(name)["result"]


def ci(lo, hi, nd=3, sign=False) -> str:
    f = (lambda x: f"{x:+.{nd}f}") if sign else (lambda x: f"{x:.{nd}f}")
    return f"[{f(lo)}, {f(hi)}]"


def p1_headline() -> str:
    "P1 at equal budget: the default graph against the strongest simple baseline (BM25 + dense) and vector, paired."
    from finrag.stats import paired_bootstrap_ci
    r = result("p1_eval")
    rows = [x for x in r["rows"]]
    per = lambda mode, m: {x["question_id"]: x[m] for x in rows if x["mode"] == mode and x[m] is not None}
    modes = (("graph", "**graph, budget** (the default)"), ("hybrid@graph", "BM25 + dense hybrid (the strongest simple baseline)"),
             ("vector@graph", "vector (the paper's baseline)"))
    metrics = ("support_recall", "context_entity_recall")
    out = ["| system, at the graph's budget (≤ 5 chunks, ≤ 1,100 tokens) | support recall [95 % CI] | entity recall [95 % CI] | n |",
           "|---|---|---|---|"]
    summ = {(x["mode"], x["metric"]): x for x in r["summary"] if x["stratum"] == "all"}   # the experiment's own bootstrap CIs
    for mode, label in modes:
        cells = [f"{summ[mode, m]['mean']:.3f} {ci(summ[mode, m]['ci_low'], summ[mode, m]['ci_high'])}" for m in metrics]
        out.append(f"| {label} | {' | '.join(cells)} | {summ[mode, metrics[0]]['n']} |")
    pairs = {p["metric"]: p for p in r["pairs"]["graph vs hybrid@graph"] if p["stratum"] == "all"}
    cells = []
    for m in metrics:
        a, b = per("graph", m), per("hybrid@graph", m)
        qs = sorted(set(a) & set(b))
        d = paired_bootstrap_ci([a[q] for q in qs], [b[q] for q in qs])
        cells.append(f"{d['mean_diff']:+.3f} {ci(d['ci_low'], d['ci_high'], sign=True)}, Wilcoxon p = {pairs[m]['p']:.3f}")
    out.append(f"| graph − hybrid, paired | {' | '.join(cells)} | {len(qs)} |")
    return "\n".join(out) + "\n"


def p1_paper() -> str:
    "The paper's P1 claims beside finrag's graph − vector differences: n, the paired bootstrap 95 % CI and Wilcoxon's p (nbs/experiments/p1_eval.ipynb; retrieval alone: bench/graphrag.py)."
    import numpy as np
    from finrag.graphrag.eval import PAPER_P1 as P
    from finrag.stats import paired_bootstrap_ci
    r = result("p1_eval")
    rows, pairs = r["rows"], {(x["stratum"], x["metric"]): x for x in r["pairs"]["graph vs vector"]}
    def ours(metric, stratum):
        by = {m: {x["question_id"]: x[metric] for x in rows if x["mode"] == m and (stratum == "all" or x["type"] == stratum)
                  and x.get(metric) is not None and x[metric] == x[metric]} for m in ("graph", "vector")}
        qs = sorted(set(by["graph"]) & set(by["vector"]))
        if len(qs) < 2: return f"n = {len(qs)}: too few to say", ""
        g, v = [by["graph"][q] for q in qs], [by["vector"][q] for q in qs]
        d, pv = paired_bootstrap_ci(g, v), pairs[stratum, metric]["p"]
        rel = f"{100*d['mean_diff']/np.mean(v):+.1f} %, " if np.mean(v) else ""
        return f"{rel}{d['mean_diff']:+.3f} {ci(d['ci_low'], d['ci_high'], sign=True)}", f"{len(qs)} | {pv:.2g}"
    out = ["| claim (graph vs vector top-5) | paper | finrag: Δ graph − vector [paired 95 % CI] | n | Wilcoxon p |", "|---|---|---|---|---|"]
    claims = (("entity recall (context), all", "context_entity_recall", "all", f"{P['entity_recall_gain_pct']:+.1f} %, p {P['entity_recall_p']}"),
              ("answer relevancy (RAGAS), all", "answer_relevancy", "all", f"{P['answer_relevancy_gain_pct']:+.1f} %"),
              ("answer relevancy (RAGAS), relational", "answer_relevancy", "relational", f"{P['answer_relevancy_gain_relational_pct']:+.1f} %"),
              ("context precision (RAGAS), direct", "context_precision", "direct", f"{P['context_precision_gain_direct_pct']:+.1f} %"),
              ("context recall (RAGAS), direct", "context_recall", "direct", f"{P['context_recall_gain_direct_pct']:+.1f} %"),
              ("semantic similarity, all", "semantic_similarity", "all", f"{P['semantic_similarity_delta']:+.3f} (d = {P['semantic_similarity_cohens_d']})"))
    for name, metric, stratum, paper in claims:
        a, b = ours(metric, stratum)
        out.append(f"| {name} | {paper} | {a} | {b or ' | '} |")
    L = {x["mode"]: x for x in r["latency"] if x["stratum"] == "all"}
    pm, ps = P["latency_mean_s"], P["latency_std_s"]
    out.append(f"| end-to-end latency, mean graph / vector (s) | {pm['graph']:.2f} / {pm['vector']:.2f} ({100*(pm['graph']/pm['vector'] - 1):+.1f} %) | "
               f"{L['graph']['mean']:.1f} / {L['vector']['mean']:.1f} ({100*(L['graph']['mean']/L['vector']['mean'] - 1):+.1f} %) | {L['graph']['n']} | "
               f"{pairs['all', 'latency_s']['p']:.2g} |")
    out.append(f"| end-to-end latency, σ graph / vector (s) | {ps['graph']:.2f} / {ps['vector']:.2f} ({100*(ps['graph']/ps['vector'] - 1):+.0f} %) | "
               f"{L['graph']['std']:.1f} / {L['vector']['std']:.1f} ({100*(L['graph']['std']/L['vector']['std'] - 1):+.0f} %) | {L['graph']['n']} | |")
    sp = result("p1_speed").get("latency_ladybugdb", {})
    if "mean_ms" in sp.get("graph", {}):
        cell = lambda m: f"{sp[m]['mean_ms']:.1f} ± {sp[m]['std_ms']:.1f}"
        out.append(f"| retrieval alone (no LLM), mean ± σ ms: graph / vector / paper 2-hop / hybrid@graph | — | {cell('graph')} / {cell('vector')}"
                   + (f" / {cell('paper')}" if "paper" in sp else "") + (f" / {cell('hybrid@graph')}" if "hybrid@graph" in sp else "") + f" | {sp['n']} | |")
    return "\n".join(out) + "\n"


def p2_headline() -> str:
    "P2 on the reporting halves: stage 1 (the default), the trained cross-encoder as stage 2, the best single retriever."
    r = result("train_cross_encoder")
    rep, means = r["report_ndcg@10"], r["report_ndcg@10"]["means"]
    best = r["best_ce_candidate"]                     # the cross-encoder's best configuration on the choosing halves (`--stage2 ce`)
    d = rep[f"{best}-stage1"]
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "scifact": "SciFact (not finance)"}
    two = r["chosen"] != "stage1"                     # the protocol's decision (`decision`): both stages are the default
    s1 = "stage 1 (BM25 + MiniLM, z-score fusion)" if two else "**stage 1** (default: BM25 + MiniLM, z-score fusion)"
    s2 = "**stage 1 → trained cross-encoder** (the default; `--stage2 none` drops it)" if two else "+ trained cross-encoder (`--stage2 ce`)"
    out = [f"| corpus | n | BM25 | dense | {s1} | {s2} | cross-encoder − stage 1 [95 % CI] |",
           "|---|---|---|---|---|---|---|"]
    for k, label in names.items():
        out.append(f"| {label} | {d[k]['n']} | {means['bm25'][k]:.3f} | {means['dense'][k]:.3f} | {means['stage1'][k]:.3f} | "
                   f"{means[best][k]:.3f} | {d[k]['mean_diff']:+.3f} {ci(d[k]['ci_low'], d[k]['ci_high'], sign=True)} |")
    p = d["pooled"]
    out.append(f"| all, pooled | {p['n']} | | | {p['mean_b']:.3f} | {p['mean_a']:.3f} | {p['mean_diff']:+.3f} {ci(p['ci_low'], p['ci_high'], sign=True)} |")
    return "\n".join(out) + "\n"


def p3_headline() -> str:
    "P3 on the reporting halves: LATTICE (embeddings), LATTICE++ as shipped, BM25, dense and their z-score hybrid."
    r = result("p3_ce")
    lp = r["lattice++"]
    chosen, vs = lp["chosen"], lp["test_vs_best_member"]
    out = ["| corpus | n | BM25 | dense | BM25 + dense (z) | LATTICE, embeddings | **LATTICE++** (`" + chosen.replace("lattice++ ", "") +
           "`) | LATTICE++ − the member best on the development half [95 % CI] |", "|---|---|---|---|---|---|---|---|"]
    for k, label in (("scifact", "SciFact slice"), ("financebench", "FinanceBench")):
        t = r[k]["test"]
        best = next((m for m in ("bm25", "dense") if abs(t[m]["ndcg@10"] - lp["test_means"]["best member"][k]) < 5e-5), "LATTICE")
        out.append(f"| {label} | {r[k]['n_test']} | {t['bm25']['ndcg@10']:.4f} | {t['dense']['ndcg@10']:.4f} | {t['hybrid z']['ndcg@10']:.4f} | "
                   f"{t['lattice embedding']['ndcg@10']:.4f} | {lp['test_means'][chosen][k]:.4f} | "
                   f"{vs[k]['mean_diff']:+.4f} {ci(vs[k]['ci_low'], vs[k]['ci_high'], 4, sign=True)} ({best}) |")
    return "\n".join(out) + "\n"


def p1_speed() -> str:
    "P1's speed targets (bench/graphrag.py): ingest, re-ingest, vector and graph latency, `finrag ask` start-up."
    r = result("p1_speed")
    i, st, lb, bo = r["ingest"], r["ingest"]["stage_seconds"], r["latency_ladybugdb"], r["latency_bolt"]
    g, v, bg = lb["graph"]["stages_p50_p95_ms"], lb, lb["graph"]
    hop = lambda x: f"{x[0]:.2f} / {x[1]:.2f}"
    rows = [("stage", "measured", "target (P1 issue)"), ("---", "---", "---"),
            (f"ingest 143 FNSPID articles → {i['articles']} articles, {i['chunks']:,} chunks (near-duplicates dropped, boilerplate removed), LadybugDB",
             f"**{i['wall_s']:.1f} s**: NER {st['ner']:.1f}, sentiment {st['sentiment']:.1f}, embed {st['embed']:.1f}, chunk {st['chunk']:.1f}, graph {st['graph']:.1f}", "≤ 60 s"),
            ("re-ingest, nothing new", f"{r['reingest']['wall_s']:.1f} s, {r['reingest']['new_chunks']} new chunks", "idempotent"),
            (f"vector retrieval, {lb['n']} questions, no LLM", f"p50 {v['vector']['p50_ms']:.2f} / p95 **{v['vector']['p95_ms']:.2f} ms** (after the query encoder: "
             f"{v['vector']['after_encoder_p50_ms']:.2f} / {v['vector']['after_encoder_p95_ms']:.2f} ms)", "p95 ≤ 10 ms"),
            ("2-hop Graph-RAG, LadybugDB", f"p50 {bg['p50_ms']:.2f} / p95 **{bg['p95_ms']:.2f} ms** (after the encoder: {bg['after_encoder_p50_ms']:.2f} / "
             f"{bg['after_encoder_p95_ms']:.2f} ms; hop {hop(g['graph_hop'])}, rerank {hop(g['rerank'])})", "p95 ≤ 30 ms"),
            ("2-hop Graph-RAG, Neo4j driver → ArcadeDB Bolt", f"p50 {bo['graph']['p50_ms']:.2f} / p95 {bo['graph']['p95_ms']:.2f} ms (hop "
             f"{hop(bo['graph']['stages_p50_p95_ms']['graph_hop'])} ms)", "—"),
            ("`finrag ask --no-llm` on that store, start-up included", f"{r['ask_startup']['onnx']['best_s']:.1f} s (ONNX embedder); "
             f"{r['ask_startup']['torch']['best_s']:.1f} s with the torch backend", "≤ 5 s")]
    return "\n".join("| " + " | ".join(x) + " |" for x in rows) + "\n"


def p3_ce() -> str:
    "LATTICE's variants and the baselines on the reporting halves (bench/lattice_ce.py)."
    r = result("p3_ce")
    cols = (("bm25", "BM25"), ("dense", "dense"), ("hybrid z", "z-score hybrid"), ("lattice embedding", "LATTICE embedding"),
            ("lattice ce (leaves)", "LATTICE ce (leaves)"))
    chosen = r["lattice++"]["chosen"]
    out = ["| reporting half | n | " + " | ".join(c for _, c in cols) + f" | {chosen.replace('lattice++', 'LATTICE++')} |",
           "|---" * (len(cols) + 3) + "|"]
    for name, label in (("scifact", "SciFact slice"), ("financebench", "FinanceBench")):
        t = r[name]["test"]
        out.append(f"| {label} | {r[name]['n_test']} | " + " | ".join(f"{t[k]['ndcg@10']:.4f}" for k, _ in cols)
                   + f" | {r['lattice++']['test_means'][chosen][name]:.4f} |")
    return "\n".join(out) + "\n"


def p1_ragas_cost() -> str:
    "Where a judged RAGAS sample's minutes go, per LLM metric, as configured and with output caps, each pass on a fresh server (bench/llm.py ragas)."
    r = result("p1_ragas_cost")
    passes = [p for p in ("before", "after") if p in r]
    out = ["| metric | pass | calls / sample | prompt tokens / call | read from the prompt cache | completion tokens / call "
           "| seconds / sample | NaN |", "|---" * 8 + "|"]
    for m in r["before"]["metrics"]:
        for p in passes:
            v = r[p]["metrics"][m]
            cap = f" (cap {r['caps'][m]})" if p == "after" and m in r["caps"] else ""
            out.append(f"| {m} | {p}{cap} | {v['calls_per_sample']:.2f} | {v['prompt_tokens_per_call']:,.0f} | {v['cached_share']:.1%} "
                       f"| {v['completion_tokens_per_call']:.0f} | {v['seconds_per_sample']:.1f} | {v['nan']} |")
    tot = " · ".join(f"{p}: **{r[p]['seconds_per_judged_sample']:.1f} s** per judged sample ({r[p]['seconds']:.0f} s)" for p in passes)
    b = r["before"]["metrics"]
    rel = b["answer_relevancy"]["seconds_per_sample"]
    three = sum(b[m]["seconds_per_sample"] for m in b if m != "answer_relevancy")
    return ("\n".join(out) + f"\n\n{r['samples']} samples ({len(r['questions'])} questions × {', '.join(r['modes'])}), "
            f"`[models] llm_slots` = {r['llm_slots']}. {tot}. At the 'before' rate, answer relevancy on 300 answered rows takes "
            f"~{300 * rel / 3600:.1f} h and the other three metrics on 60 rows ~{60 * three / 3600:.1f} h.\n")


def p1_ragas_run() -> str:
    "The judged samples of the P1 experiment itself (results/p1_eval.json `ragas_cost`): per metric one after another over every row, beside the cost bench's 'before'."
    r = result("p1_eval")["ragas_cost"]
    out = ["| metric | rows judged | LLM calls | prompt tokens / call | read from the prompt cache | seconds / call "
           "| seconds / judged sample | cost bench, seconds / sample |", "|---" * 8 + "|"]
    carried = []
    for m, v in r["after"].items():
        if not v["n"]: continue
        bench = f"{r['before'][m]['seconds_per_sample']:.1f}"
        if not v["calls"]:
            out.append(f"| {m} | {v['n']} | 0: every judgment from the judgment cache | | | | | {bench} |")
            continue
        if v.get("carried"): carried.append(m)
        per = lambda k: v[k] / v["calls"]
        out.append(f"| {m}{' *' if v.get('carried') else ''} | {v['n']} | {v['calls']} | {per('prompt_tokens'):,.0f} "
                   f"| {v['cached_tokens'] / max(v['prompt_tokens'], 1):.1%} | {v['seconds_per_call']:.1f} "
                   f"| {v['seconds_per_sample']:.1f} | {bench} |")
    left = [m for m, v in r["after"].items() if not v["n"]]
    notes = ["A judgment already in the judgment cache makes no call, so seconds / judged sample is seconds per call times "
             "the calls one sample makes (2 for faithfulness, 1 for answer relevancy and context recall, one per context "
             "for context precision)."]
    if carried: notes.append("\\* " + ", ".join(carried) + ": this run read every judgment from the cache; the row is the "
                             "run that made the calls.")
    if left: notes.append("Not judged in this run: " + ", ".join(left) + ".")
    return "\n".join(out) + "\n\n" + " ".join(notes) + "\n"


def p1_answer_format() -> str:
    "Cited JSON vs free-text answers on the reporting half, paired by (question, system), and the protocol's verdict (nbs/experiments/p1_eval.ipynb)."
    r = result("p1_eval_answer_format")
    c = r["comparison"]
    names = {"sentences_cited": "sentences with a citation", "supported_before": "sentences the judge finds supported by their citation",
             "citation_valid": "citations naming a context chunk", "semantic_similarity": "semantic similarity to the reference",
             "figure_recall": "figure recall (direct questions)", "answer_entity_recall": "answer entity recall",
             "cited_support_recall": "cited support recall", "prompt_tokens": "prompt tokens", "completion_tokens": "answer tokens",
             "latency_s": "latency (s)"}
    lost = c["choice"].get("guard_losses") or {}
    rows = [x for x in c["halves"]["report"] if x["stratum"] == "all" or x["stratum"] in lost.get(x["metric"], ())]
    big = lambda m: m in ("prompt_tokens", "completion_tokens", "latency_s")
    f = lambda x, m: f"{x:,.0f}" if big(m) and m != "latency_s" else (f"{x:.1f}" if big(m) else f"{x:.3f}")
    out = ["| reporting half | n | free text | cited | cited − text [paired 95 % CI] | Wilcoxon p |", "|---" * 6 + "|"]
    for x in rows:
        m = x["metric"]
        label = names.get(m, m) + ("" if x["stratum"] == "all" else f", {x['stratum']} questions")
        d = f"{x['mean_diff']:+.1f} {ci(x['ci_low'], x['ci_high'], nd=1, sign=True)}" if big(m) else \
            f"{x['mean_diff']:+.3f} {ci(x['ci_low'], x['ci_high'], sign=True)}"
        out.append(f"| {label} | {x['n']} | {f(x['mean_text'], m)} | {f(x['mean_cited'], m)} | {d} | {x['p']:.2g} |")
    ch, fb = c["choice"], c["fallbacks"]
    v = ch.get("verdict") or {}
    line = (f"\nSplit by question id: {len(c['split']['choose'])} questions choose, {len(c['split']['report'])} report; systems "
            f"{', '.join(r['systems'])}. Chosen on the choosing half by `{ch.get('metric', 'sentences_cited')}` (macro over question "
            "types: " + ", ".join(f"{k} {w:.3f}" for k, w in (ch.get("choose_macro") or {}).items()) + "). ")
    if "pooled" in v:
        p = v["pooled"]
        line += f"Reporting half, cited − text pooled {p[0]:+.3f} {ci(p[1], p[2], sign=True)}, n = {p[3]}; rule ({v['rule']}): "
        line += "the gain passes" if v["replaces"] else "the gain does not pass"
    else: line += v.get("reason", "")
    if lost: line += "; but a significant loss on " + ", ".join(f"{names.get(g, g)} ({', '.join(s)})" for g, s in lost.items()) + " keeps free text"
    line += (f". Default: **{ch['default']}** (`[graphrag] answer_format`). Cited answers that fell back to free text: "
             f"{fb['fell_back']} of {fb['rows']}" + (f" ({', '.join(f'{k} {n}' for k, n in fb['by_reason'].items())})" if fb["by_reason"] else "")
             + f"; chunk ids dropped: {fb['dropped_ids']}; JSON cut short: {fb['truncated']}.\n")
    return "\n".join(out) + "\n" + line


def p3_scorer_choice() -> str:
    "The `[lattice] scorer` choice: each candidate on the reporting halves (n, nDCG@10 and CI, recall@100, cost), minus the incumbent paired, and the rule's verdict (bench/lattice.py scorer)."
    r = result("p3_scorer_choice")
    inc = r["incumbent"]
    out = ["| reporting half | candidate | n | nDCG@10 [95 % CI] | recall@100 | s/query | LLM calls/query | prompt tokens/query "
           f"| − {inc} [95 % CI] |", "|---" * 9 + "|"]
    for name, e in r["corpora"].items():
        for m, v in e["test"].items():
            d = v.get("minus_incumbent")
            out.append(f"| {e['dataset']} | {m} | {v['n']} | {v['ndcg@10']:.4f} {ci(*v['ci'], nd=4)} | {v['recall@100']:.3f} | "
                       f"{v['s_per_query']:.2f} | {v['llm_calls_per_query']:.1f} | {v['prompt_tokens_per_query']:,.0f} | "
                       + (f"{d['diff']:+.4f} {ci(*d['ci'], nd=4, sign=True)} |" if d else "— |"))
    c = r["choice"]
    line = "\nChosen on the development halves (macro nDCG@10: " + ", ".join(f"{k} {v:.4f}" for k, v in c["choose_macro"].items()) + ")"
    if c["candidate"] == inc: line += f": the incumbent, {inc}, stays."
    else:
        v = c["verdict"]; p = v["pooled"]
        line += (f": {c['candidate']}; on the reporting halves {c['candidate']} − {inc} pooled {p[0]:+.4f} {ci(p[1], p[2], nd=4, sign=True)}, "
                 f"n = {p[3]}; rule ({v['rule']}): " + ("it replaces the incumbent." if v["replaces"] else "the incumbent stays."))
    now = ", ".join(f"`{k} = {v}`" for k, v in r["candidates"][r["chosen"]].items())
    return "\n".join(out) + "\n" + line + f" Default now ([lattice]): {now}.\n"


def p3_fusion() -> str:
    "LATTICE++'s fusion candidates on the development halves and the never-below rule's verdict (bench/lattice_ce.py)."
    p = result("p3_ce")["lattice++"]
    label = {"best member": "best member", "hybrid z (bm25, dense)": "z-score hybrid of BM25 and dense",
             "lattice++ z (1, 1, 1)": "z (1, 1, 1)", "lattice++ z (0.5, 1, 1)": "z (0.5, 1, 1)",
             "lattice++ rrf k=60 (1, 1, 1)": "RRF k = 60 (1, 1, 1), the paper's"}
    out = ["| candidate | SciFact dev | FinanceBench dev | qualifies |", "|---|---|---|---|"]
    for c in p["candidates"]:
        d, name = p["dev"][c], label.get(c, c)
        name = f"**{name}**, chosen" if c == p["chosen"] else name
        out.append(f"| {name} | {d['scifact']:.4f} | {d['financebench']:.4f} | {'yes' if d['qualifies'] else 'no'} |")
    return "\n".join(out) + "\n"


def p3_grow() -> str:
    "The tree-growth settings on the development half against a rebuild (bench/lattice_grow.py)."
    r = result("p3_grow")
    ss = r["stale_share"]
    chosen = f"route {r['route']['chosen']}, split {r['split']['chosen']}, stale_share {float(ss['chosen'])}, spill {r['spill']['chosen']}"
    out = [f"| development half, n = {ss['n_dev_queries']} | nDCG@10 | nodes re-summarised | seconds |", "|---|---|---|---|",
           f"| rebuilt on 100 % | {ss['dev_rebuilt_ndcg@10']:.4f} | {r['cost_rebuild']['nodes_summarised']} | {r['cost_rebuild']['seconds']:.3f} |"]
    for k, v in ss["dev"].items():
        route, split, stale, spill = (x.split(" ", 1)[1] for x in k.split(", "))
        label = f"{route}, {split} split, stale {float(stale):g}" + (", spill" if spill == "True" else "")
        label = f"**{label} (chosen)**" if k == chosen else label
        out.append(f"| {label} | {v['ndcg@10']:.4f} | {v['nodes_resummarised']} | {v['seconds']:.3f} |")
    return "\n".join(out) + "\n"


def p2_ce_report() -> str:
    "Every cross-encoder candidate and the baselines on the reporting halves, then each candidate against stage 1, paired (bench/cross_encoder.py)."
    r = result("train_cross_encoder")
    rep, means, cands = r["report_ndcg@10"], r["report_ndcg@10"]["means"], list(r["candidates"])
    corpora = list(means["stage1"])
    n = {c: rep[f"{cands[0]}-stage1"][c]["n"] for c in corpora}
    out = ["| nDCG@10, reporting half | " + " | ".join(f"{c} (n = {n[c]})" for c in corpora) + " |", "|---" * (len(corpora) + 1) + "|"]
    label = {"bm25": "BM25", "dense": "dense (MiniLM)", "stage1": "stage 1 (BM25 + MiniLM, z-sum; the incumbent)"}
    for m in ["bm25", "dense", "stage1"] + list(cands):
        name = f"**{label.get(m, m)} (the default)**" if m == r["chosen"] else label.get(m, m)
        out.append(f"| {name} | " + " | ".join(f"{means[m][c]:.3f}" for c in corpora) + " |")
    out += ["", "| vs stage 1 (paired bootstrap 95 % CI) | " + " | ".join(corpora) + " | pooled | the protocol's rule | never below (old rule) |",
            "|---" * (len(corpora) + 4) + "|"]
    from finrag.protocol import rule_verdict
    for m in cands:
        d = rep[f"{m}-stage1"]
        cell = lambda x: f"{x['mean_diff']:+.3f} {ci(x['ci_low'], x['ci_high'], sign=True)}".replace("+-", "-")
        out.append(f"| {m} | " + " | ".join(cell(d[c]) for c in corpora + ["pooled"]) + f" | {'passes' if rule_verdict(d)['replaces'] else 'no'} | {'passes' if d['passes'] else 'no'} |")
    return "\n".join(out) + "\n"


def p2_ce_study() -> str:
    "The cross-encoder study: each trained model alone and as stage 2 (pool 20, 50) against stage 1 and the shipped model, reporting halves, paired (bench/cross_encoder.py --compare)."
    r = result("train_cross_encoder_study")
    models, dec = r["models"], r["decision"]
    out = ["| model | loss | training queries | pairs | epochs | lr | seconds | pairs/s | training loss | int8 MB |", "|---" * 10 + "|"]
    for tag, m in models.items():
        rc = m["recipe"]; nq = sum(v["queries"] for v in (m.get("sources") or {}).values())
        out.append(f"| {tag} | {rc.get('loss', 'bce')} | {nq:,} | {m['n_examples']:,} | {rc['epochs']} | {rc['lr']:g} | {m['seconds']:,.0f} | "
                   f"{m['examples_per_s']} | {m['train_loss']:.4f} | {m['bytes']/1e6:.1f} |")
    for metric in ("ndcg@10", "ndcg@20"):
        rep = r[f"report_{metric}"]; corpora = list(rep["means"]["stage1"])
        n = {c: rep["shipped:interp@20-stage1"][c]["n"] for c in corpora + ["pooled"]}
        cell = lambda x: f"{x['mean_diff']:+.3f} {ci(x['ci_low'], x['ci_high'], sign=True)}"
        out += ["", f"| {metric.replace('ndcg', 'nDCG')}, reporting halves, − stage 1 [paired 95 % CI] | "
                + " | ".join(f"{c} (n = {n[c]})" for c in corpora) + f" | pooled (n = {n['pooled']}) |", "|---" * (len(corpora) + 2) + "|"]
        out.append("| stage 1 (mean) | " + " | ".join(f"{rep['means']['stage1'][c]:.3f}" for c in corpora) + " | |")
        for c in [k for k in rep["means"] if ":" in k]:
            name = f"**{c}** (the default)" if c == dec["chosen"] else c
            out.append(f"| {name} | " + " | ".join(cell(rep[f'{c}-stage1'][k]) for k in corpora + ["pooled"]) + " |")
    v = dec["verdict"]
    out += ["", f"Decision (`finrag.protocol.choose_default`, nDCG@10): the best on the choosing halves is **{dec['candidate']}**; "
            + (f"it replaces **{dec['incumbent']}**" if dec["chosen"] != dec["incumbent"] else f"**{dec['incumbent']}** stays")
            + (f" (its gain over {dec['incumbent']} on the reporting halves, pooled: {v['pooled'][0]:+.4f} [{v['pooled'][1]:+.4f}, {v['pooled'][2]:+.4f}], n = {v['pooled'][3]}; significant losses: "
               f"{', '.join(v['significant_losses']) or 'none'}; mean drops > 0.01: {', '.join(v['mean_drops']) or 'none'})." if "pooled" in v else ".")]
    return "\n".join(out) + "\n"


def p2_int8_embedder() -> str:
    "int8 exports of the packaged MiniLM against fp32: dense nDCG@10 per corpus on both halves and ingest chunks/s in one run (bench/bi_encoder.py --int8-modes)."
    r = result("int8_embedder")
    c, sp = r["int8_choice"], r["ingest_embedding_speed"]
    modes = list(c["choose_dense_ndcg@10_minus_fp32"]); corpora = list(c["choose_dense_ndcg@10_minus_fp32"][modes[0]])
    out = ["| embedder | MB | ingest chunks/s | " + " | ".join(f"{k}: choosing / reporting" for k in corpora) + " | qualifies (≥ −0.005 on every choosing half) |",
           "|---" * (len(corpora) + 4) + "|",
           f"| MiniLM fp32 (default) | — | {sp['minilm_texts_per_s']} | " + " | ".join("0 / 0" for _ in corpora) + " | — |"]
    for m in modes:
        ch, rp = c["choose_dense_ndcg@10_minus_fp32"][m], (c["report_dense_ndcg@10_minus_fp32"][m] or {}).get("diff", {})
        name = f"**MiniLM {m}** (chosen)" if c["chosen"] == m else f"MiniLM {m}"
        out.append(f"| {name} | {r['int8_bytes'][f'minilm-{m}']/1e6:.1f} | {sp[f'minilm-{m}_texts_per_s']} | "
                   + " | ".join(f"{ch[k]:+.4f} / {rp.get(k, float('nan')):+.4f}" for k in corpora) + f" | {'yes' if m in c['qualifies'] else 'no'} |")
    out += ["", f"Chunks/s: {sp['texts']:,} sample and FNSPID chunks ({sp['mean_chars']} characters on average), every embedder in one run, load {sp['loadavg'][0]}. "
            f"Choice: **{c['chosen']}** ({c['rule']})."]
    return "\n".join(out) + "\n"


def p2_financerag() -> str:
    "The P2 experiment's held-out halves (nbs/experiments/p2_financerag.ipynb), labelled with what that run ran (its params), not what ships now."
    r = result("p2_financerag")
    p, nd20 = envelope("p2_financerag")["params"], r["ndcg@20"]
    rows = {(x["dataset"], x["method"]): x for x in r["rows"]}
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev"}
    head = " | ".join(f"{names[d]} ({rows[d, 'bm25']['n_queries']} q)" for d in p["datasets"])
    variant = lambda m: next((rows[d, m]["variant"] for d in p["datasets"] if isinstance(rows.get((d, m), {}).get("variant"), str)), "?")
    label = {"bm25": "BM25", "dense": "dense (MiniLM)", "bm25 + pre": "BM25 + all pre-retrieval steps", "dense + pre": "dense + all pre-retrieval steps",
             "bm25 (default)": f"BM25 + its development choice ({variant('bm25 (default)')})", "dense (default)": f"dense + its development choice ({variant('dense (default)')})",
             "stage 1": f"**stage 1** as run here: {p['stage1']} (RRF of BM25 and MiniLM), keeps {p['stage1_keep']}", "stage 2": f"stage 2 alone ({p['stage2']}), keeps {p['final_k']}",
             "fused": f"stage 1 + stage 2 fused ({r['choice']['fusion']})"}
    out = [f"| NDCG@20 (NDCG@10) | {head} | mean NDCG@20 |", "|---" * (len(p["datasets"]) + 2) + "|"]
    for m in nd20:
        cells = " | ".join(f"{rows[d, m]['ndcg@20']:.4f} ({rows[d, m]['ndcg@10']:.4f})" for d in p["datasets"])
        out.append(f"| {label.get(m, m)} | {cells} | {nd20[m]['mean']:.4f} |")
    return "\n".join(out) + "\n"


def p2_bi_encoder() -> str:
    "Stage 1 and dense retrieval with each embedder on the reporting halves (bench/bi_encoder.py)."
    m = result("train_bi_encoder")["report_ndcg@10"]["means"]
    corpora = list(m["stage1:minilm"])
    ce = result("train_cross_encoder")                          # the same halves (bench/cross_encoder.py's)
    n = {c: ce["report_ndcg@10"][f"{next(iter(ce['candidates']))}-stage1"][c]["n"] for c in corpora}
    emb = {"minilm": "packaged MiniLM fp32", "minilm-int8": "MiniLM int8", "ft-fp32": "fine-tuned fp32", "ft-int8": "fine-tuned int8"}
    out = ["| nDCG@10, reporting half | " + " | ".join(f"{c} (n = {n[c]})" for c in corpora) + " |", "|---" * (len(corpora) + 1) + "|"]
    for use in ("stage1", "dense"):
        for e, label in emb.items():
            name = f"{'stage 1' if use == 'stage1' else 'dense'}, {label}" + (" (the default)" if use == "stage1" and e == "minilm" else "")
            out.append(f"| {name} | " + " | ".join(f"{m[f'{use}:{e}'][c]:.3f}" for c in corpora) + " |")
    return "\n".join(out) + "\n"


def p2_fusion_choice() -> str:
    "The P2 experiment's stage-2 fusion and adaptive candidates on the development halves (nbs/experiments/p2_financerag.ipynb)."
    ch = result("p2_financerag")["choice"]
    out = ["| dev NDCG@20 | FinanceBench | FinQA | TAT-QA dev | mean | worst half vs stage 1 |", "|---|---|---|---|---|---|"]
    for k, v in ch["dev_fusion_ndcg@20"].items():
        name = f"**{k}**" if k == "stage 1" else k
        out.append(f"| {name} | {v['financebench']:.4f} | {v['finqa']:.4f} | {v['tatqa']:.4f} | {v['mean']:.4f} | {v['min diff vs stage 1']:+.4f} |".replace("+-", "-"))
    out += ["", "| adaptive (with the chosen fusion), dev | mean NDCG@20 | worst half vs stage 1 | share of queries calling stage 2 |", "|---|---|---|---|"]
    for k, v in ch["dev_adaptive_ndcg@20"].items():
        out.append(f"| {k} | {v['mean']:.4f} | {v['min diff vs stage 1']:+.4f} | {v['stage-2 share']:.2f} |")
    return "\n".join(out) + "\n"


def p1_retrieval() -> str:
    "P1's LLM-free retrieval table: each system's context size and recalls over the question set (nbs/experiments/p1_eval.ipynb)."
    import numpy as np
    r = result("p1_eval")
    c = r["config"]
    label = {"vector": f"vector top-{c['k']}", "paper": f"P1 graph, paper ({c['k']} seeds + top-{c['neighbor_top']} per neighbour, unbounded)",
             "vector@paper": "vector at the paper graph's budget",
             "graph": f"**graph, budget** (default; {c['budget_chunks']} chunks / {c['budget_tokens']:,} tokens)",
             "vector@graph": "vector at the budget graph's budget", "hybrid@graph": "hybrid (BM25 + dense) at the budget graph's budget", "auto": "auto (router)"}
    out = ["| system | chunks | tokens | entity recall | support recall |", "|---|---|---|---|---|"]
    for mode, name in label.items():
        rows = [x for x in r["rows"] if x["mode"] == mode]
        rel = [x for x in rows if x["type"] == "relational"]
        m = lambda rs, k: float(np.mean([x[k] for x in rs]))
        rec = lambda k: f"{m(rows, k):.3f} ({m(rel, k):.3f})"
        cell = lambda k: f"**{rec(k)}**" if mode == "graph" else rec(k)
        out.append(f"| {name} | {m(rows, 'n_contexts'):.1f} | {m(rows, 'context_tokens'):,.0f} | {cell('context_entity_recall')} | {cell('support_recall')} |")
    return "\n".join(out) + "\n"


def p1_answers() -> str:
    "P1's answer metrics per system (the LLM's answers, RAGAS on a subset), graph vs vector paired (nbs/experiments/p1_eval.ipynb)."
    r = result("p1_eval")
    S = {(x["mode"], x["metric"], x["stratum"]): x for x in r["summary"]}
    P = {x["metric"]: x for x in r["pairs"]["graph vs vector"] if x["stratum"] == "all"}
    L = {x["mode"]: x for x in r["latency"] if x["stratum"] == "all"}
    modes = ("vector", "graph", "auto")
    def mean(mode, m, st, nd):
        x = S.get((mode, m, st))
        return "—" if x is None or x["n"] == 0 or x["mean"] != x["mean"] else f"{x['mean']:.{nd}f}"
    def pval(p): return f"p = {p:.2g}" if p >= 0.001 else f"p = {p:.4f}"
    def diff(m, nd=3):
        d = P.get(m)
        if d is None or not d["n"] or d["p"] != d["p"]: return "—"
        return f"{d['mean_diff']:+.{nd}f}, {pval(d['p'])} (n = {d['n']})"
    out = ["| metric (n questions) | vector top-5 | graph (budget) | auto | Δ graph − vector, Wilcoxon |", "|---|---|---|---|---|"]
    for m, name, nd in (("answer_entity_recall", "answer entity recall", 3), ("semantic_similarity", "answer–reference semantic similarity", 3),
                        ("figure_recall", "figure recall (direct questions)", 3), ("citation_valid", "citations naming a context chunk", 2),
                        ("sentences_cited", "sentences with a valid citation", 3),
                        ("cited_support_recall", "cited support recall (source articles cited)", 3), ("faithfulness", "RAGAS faithfulness", 3),
                        ("answer_relevancy", "RAGAS answer relevancy", 3), ("context_precision", "RAGAS context precision", 3),
                        ("context_recall", "RAGAS context recall", 3)):
        ns = sorted({S[mo, m, "all"]["n"] if (mo, m, "all") in S else 0 for mo in modes})
        n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
        n += " answers with a citation" if m == "citation_valid" else ""
        cells = " | ".join(f"{mean(mo, m, 'all', nd)} ({mean(mo, m, 'relational', nd)})" for mo in modes)
        out.append(f"| {name} ({n}) | {cells} | {diff(m)} |")
    pt = {mo: S[mo, "prompt_tokens", "all"]["mean"] for mo in modes}
    out.append(f"| prompt tokens ({S['graph', 'prompt_tokens', 'all']['n']}) | " + " | ".join(f"{pt[mo]:,.0f}" for mo in modes) + f" | {pt['graph'] - pt['vector']:+,.0f} |")
    d = P["latency_s"]
    out.append(f"| latency s, mean ± σ ({L['graph']['n']}) | " + " | ".join(f"{L[mo]['mean']:.1f} ± {L[mo]['std']:.1f}" for mo in modes)
               + f" | {d['mean_diff']:+.1f}, {pval(d['p'])} |")
    return "\n".join(out) + "\n"


def p3_lattice() -> str:
    "The P3 experiment with the packaged 1.5B (nbs/experiments/p3_lattice.ipynb): baselines on all slice queries, LATTICE on the few it could afford."
    r = result("p3_lattice")
    sc, fb, pp = r["scifact"], r["financebench"], r["paper"]
    A, M, FA, FM = sc["baselines_all_slice_queries"], sc["main"], fb["baselines_all_queries"], fb["main"]
    cost, emb = sc["cost"]["lattice pointwise"], sc["trees"]["embedding scorer"]
    out = [f"| nDCG@10 | SciFact slice, {sc['slice_queries']} queries | same, the {sc['n_queries']} LATTICE queries | FinanceBench, {fb['n_queries_all']} queries "
           f"| same, the {fb['n_queries']} LATTICE queries | paper |", "|---|---|---|---|---|---|"]
    for k, name in (("bm25", "BM25"), ("dense", "dense (MiniLM, FAISS)"), ("hybrid", "hybrid (RRF)")):
        rec = f" (R@100 {A[k]['recall@100']:.2f})" if k == "bm25" else f" ({A[k]['recall@100']:.2f})"
        out.append(f"| {name} | {A[k]['ndcg@10']:.4f}{rec} | {M[k]['ndcg@10']:.4f} | {FA[k]['ndcg@10']:.4f} | {FM[k]['ndcg@10']:.4f} | |")
    lp, lpp = M["lattice pointwise"]["ndcg@10"], M["lattice++ pointwise"]["ndcg@10"]
    out.append(f"| LATTICE, pointwise P(yes), 1.5B, beam {sc['lattice_config']['beam']}, {r['token_budget']:,} prompt tokens/query | | {lp:.4f} "
               f"({cost['leaves_scored']:.1f} leaves scored/query) | | {FM['lattice pointwise']['ndcg@10']:.4f} | SciFact {pp['SciFact nDCG@10 (LATTICE v2, Gemini-2.5-flash)']} (v2, full corpus) |")
    same = " (= hybrid)" if lpp == M["hybrid"]["ndcg@10"] else ""
    out.append(f"| LATTICE++ (RRF of LATTICE, BM25, dense) | | {lpp:.4f}{same} | | {FM['lattice++ pointwise']['ndcg@10']:.4f} "
               f"| BRIGHT {pp['BRIGHT avg nDCG@10 LATTICE++']} vs LATTICE {pp['BRIGHT avg nDCG@10 LATTICE v2']} |")
    out.append(f"| LATTICE, embedding scorer (no LLM), LLM-built tree / bottom-up tree | | {emb['main tree']['ndcg@10']:.4f} / {emb['bottom-up']['ndcg@10']:.4f} | | | |")
    return "\n".join(out) + "\n"


def p3_routing() -> str:
    "Where LATTICE's routing fails: the share of slates on the gold path whose gold branch is within the beam, per depth (bench/lattice.py route)."
    r = result("p3_routing")
    tree = {"tree_scifact1k_topdown_llm": "LLM tree", "tree_scifact1k_kmeans_llmsum": "k-means tree"}
    scorer = {"pointwise": "pointwise 1.5B", "embedding": "embedding scorer"}
    desc = {"summary": "summaries", "titles": "member titles", "central": "central abstract"}
    rng = lambda xs: f"{min(xs):.2f}–{max(xs):.2f}"
    items = lambda d: f"{round(min(v['depth'][d]['items'] for v in r.values()))}–{round(max(v['depth'][d]['items'] for v in r.values()))}"
    out = [f"| gold branch within the beam | depth 0 ({items('0')} items) | depth 1 ({items('1')} items) | depth 2 | depth 3 | whole path kept |",
           "|---|---|---|---|---|---|",
           f"| random pick of {next(iter(r.values()))['beam']} | " + " | ".join(rng([v["depth"][d]["random_within_beam"] for v in r.values()]) for d in "0123") + " | |"]
    order = sorted(r, key=lambda k: (k.split(" | ")[1] != "pointwise", k.split(" | ")[0] != "tree_scifact1k_topdown_llm"))
    for k in order:
        v, (t, s, d) = r[k], k.split(" | ")
        out.append(f"| {tree.get(t, t)}, {scorer.get(s, s)}, {desc.get(d, d)} | " + " | ".join(f"{v['depth'][x]['within_beam']:.2f}" for x in "0123")
                   + f" | {v['kept_at_every_depth']:.2f} |")
    return "\n".join(out) + "\n"


def p3_hybrid() -> str:
    "LATTICE with embedding and hybrid (LLM) routing and LATTICE++ against dense and the best baseline, test halves (bench/lattice.py hybrid)."
    r = result("p3_hybrid")
    neg = lambda t: t.replace("-", "−")
    d3 = lambda p: neg(f"{p['diff']:+.3f} [{p['ci'][0]:+.3f}, {p['ci'][1]:+.3f}]")
    base_name = {"hybrid z": "z-score hybrid", "dense": "dense", "bm25": "BM25", "hybrid rrf": "RRF hybrid"}
    out = ["| test half | n | dense | best baseline | LATTICE (embedding) | LATTICE hybrid (LLM) | LATTICE++ (chosen fusion) | s/query (hybrid) |",
           "|---|---|---|---|---|---|---|---|"]
    for ds, label in (("scifact", f"SciFact slice ({r['scifact']['n_docs']:,} abstracts)"), ("financebench", f"FinanceBench (whole, {r['financebench']['n_docs']} pages)")):
        x = r[ds]; emb = x["embedding_chosen"]
        for part, plabel in (("test", label), ("test_llm_subset", f"{label.split(' (')[0].replace(' slice', '')}, LLM subset")):
            m, p = x[part]["methods"], x[part]["paired"]
            best = p["best baseline"]; n = m["dense"]["n"]
            bcell = f"{m[best]['ndcg@10']:.3f}" + (f" ({base_name.get(best, best)})" if part == "test" else "")
            if part == "test":
                lat = f"{m[emb]['ndcg@10']:.3f} ({d3(p[f'{emb} - dense'])} vs dense)"
                plus = "lattice++ (embedding)"
                pcell = f"{m[plus]['ndcg@10']:.3f} ({d3(p[f'{plus} - dense'])} vs dense" + (f"; {d3(p[f'{plus} - {best}'])} vs best)" if best != "dense" else ")")
                hyb, secs = "—", "—"
            else:
                h, plus = x["hybrid"]["label"], "lattice++ (hybrid)"
                lat = f"{m[emb]['ndcg@10']:.3f}"
                hyb = f"{m[h]['ndcg@10']:.3f} ({d3(p[f'{h} - dense'])} vs dense)"
                pcell = f"{m[plus]['ndcg@10']:.3f} ({d3(p[f'{plus} - {best}'])} vs best)"
                secs = f"{m[h]['s_per_query']:.1f} ({m[h]['llm_calls_per_query']:.1f} calls, {x['hybrid']['prompt_tokens_per_query']:,.0f} prompt tokens)"
            out.append(f"| {plabel} | {n} | {m['dense']['ndcg@10']:.3f} | {bcell} | {lat} | {hyb} | {pcell} | {secs} |")
    return "\n".join(out) + "\n"


def p2_preretrieval() -> str:
    "Pre-retrieval one step at a time, BM25 and dense, development halves (results/p2_preretrieval_ablation.json)."
    nd = result("p2_preretrieval_ablation")["ndcg@20"]
    cols = ("financebench", "finqa", "tatqa", "mean")
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "mean": "mean"}
    variants = list(dict.fromkeys(k.split(" | ", 1)[1] for k in nd))
    order = lambda v: (v != "none", v != "all", not v.startswith("only"), v)
    out = ["| dev NDCG@20 | " + " | ".join(f"{m} {names[c]}" for m in ("bm25", "dense") for c in cols) + " |", "|---" * 9 + "|"]
    for v in sorted(variants, key=order):
        out.append(f"| {v} | " + " | ".join(f"{nd[f'{m} | {v}'][c]:.4f}" for m in ("bm25", "dense") for c in cols) + " |")
    return "\n".join(out) + "\n"


P2_SETS = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev"}


def p2_llm_rerank() -> str:
    "The LLM judge as stage 2 over stage 1's top 10, each cut, each fusion (nbs/experiments/p2_financerag.ipynb, `llm_rerank`)."
    r = result("p2_financerag")
    L, ch = r["llm_rerank"], r["llm_stage2_choice"]
    cuts, sets = ("head", "query"), list(P2_SETS)
    q = L["head"][sets[0]]["queries"]
    label = {"stage 1": "**stage 1**", "llm": "LLM P(yes) alone", "rrf(stage 1, llm)": "RRF(stage 1, LLM)"}
    aw = {c: L[c][sets[0]]["adaptive_weight"] for c in cuts}
    out = [f"| NDCG@10 within stage 1's top 10, {q} dev queries each | " + " | ".join(f"{P2_SETS[s]}, {c}" for c in cuts for s in sets) + " |", "|---" * 7 + "|"]
    for v in sorted(L["head"][sets[0]]["ndcg@10"], key=lambda v: v != "stage 1"):      # stage 1 first, then the file's order
        if v in ("adaptive<0.02", "adaptive<0.05"): continue
        name = label.get(v) or (f"interp w = {v.split()[1]}" if v.startswith("interp") else f"adaptive τ = {v[9:]}")
        if v == "adaptive<0.1": name += f" (head: w {aw['head']:g}, query: w {aw['query']:g})"
        if v == ch["variant"]: name = f"**{name}** (`--stage2 llm`)"
        cell = lambda c, s: (f"**{L[c][s]['ndcg@10'][v]:.4f}**" if v == ch["variant"] and c == ch["cut"] else f"{L[c][s]['ndcg@10'][v]:.4f}")
        out.append(f"| {name} | " + " | ".join(cell(c, s) for c in cuts for s in sets) + " |")
    return "\n".join(out) + "\n"


def p2_zero_call() -> str:
    "The LLM stage 2 against the strongest zero-call baseline (stage 1 re-fused with its own BM25), development and held-out (`stage2_zero_call`, `llm_stage2_heldout`); the best of each column in bold."
    import numpy as np
    r = result("p2_financerag")
    L, Z, H, ch = r["llm_rerank"], r["stage2_zero_call"], r["llm_stage2_heldout"], r["llm_stage2_choice"]
    sets = list(P2_SETS)
    def block(title, rows):
        vals = [[v[s] for s in sets] + [float(np.mean([v[s] for s in sets]))] for _, v in rows]
        best = [max(col) for col in zip(*vals)]
        return [f"| *{title}* | | | | |"] + [f"| {name} | " + " | ".join(f"**{x:.4f}**" if x == b else f"{x:.4f}" for x, b in zip(vs, best)) + " |"
                                         for (name, _), vs in zip(rows, vals)]
    dev = [("stage 1", {s: Z["dev"][s]["stage 1"] for s in sets}),
           (f"LLM, {ch['cut']} cut, interp w = {ch['variant'].split()[1]} (`--stage2 llm`)", {s: L[ch["cut"]][s]["ndcg@10"][ch["variant"]] for s in sets})]
    for v in ("bm25", "rrf(stage 1, bm25)", "bm25 interp 0.2", Z["best"]):
        name = {"bm25": "BM25 alone over the 10", "rrf(stage 1, bm25)": "RRF(stage 1, BM25)"}.get(v) or f"stage 1 + BM25, interp w = {v.split()[-1]}"
        dev.append((name + (" (best zero-call mean)" if v == Z["best"] else ""), {s: Z["dev"][s][v] for s in sets}))
    P = H["per_dataset"]
    held = [(name, {s: P[s]["ndcg@10"][v] for s in sets}) for v, name in
            (("stage 1", "stage 1"), (f"llm {H['variant']}", f"LLM, {H['cut']} cut, interp w = {H['variant'].split()[1]}"),
             (Z["best"], f"stage 1 + BM25, interp w = {Z['best'].split()[-1]}"))]
    out = ["| NDCG@10 within stage 1's top 10 | FinanceBench | FinQA | TAT-QA | mean |", "|---|---|---|---|---|"]
    out += block(f"development, {L['head'][sets[0]]['queries']} queries each", dev) + block(f"held-out, {P[sets[0]]['queries']} queries each", held)
    return "\n".join(out) + "\n"


def p2_llm_preretrieval() -> str:
    "The LLM pre-retrieval steps one at a time, a few development queries (`llm_preretrieval`)."
    P = result("p2_financerag")["llm_preretrieval"]
    name = {"none": "none", "rule": "rule-based keywords", "llm keywords": "LLM keywords", "llm keywords + paraphrases(2)": "LLM keywords + 2 paraphrases",
            "llm keywords + hyde": "LLM keywords + HyDE"}
    out = [f"| NDCG@20 ({P['tatqa']['queries']} dev queries) | TAT-QA bm25 | TAT-QA dense | FinanceBench bm25 | FinanceBench dense | LLM calls / query |", "|---|---|---|---|---|---|"]
    for c in P["tatqa"]["configs"]:
        t, f = P["tatqa"]["configs"][c], P["financebench"]["configs"][c]
        out.append(f"| {name.get(c, c)} | {t['bm25']:.4f} | {t['dense']:.4f} | {f['bm25']:.4f} | {f['dense']:.4f} | {t['calls_per_query']:.0f} |")
    return "\n".join(out) + "\n"


def p2_stage1_fusion() -> str:
    "Stage 1's fusion on the test halves: z-sum (the default) against BM25 + pre-retrieval, dense and RRF (bench/stage1_fusion.py)."
    r = result("p2_stage1_fusion")
    D = r["datasets"]
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "scifact": "SciFact train"}
    member = {"bm25+pre": "BM25", "dense": "dense", "rrf": "RRF"}
    sets = list(D)
    T = {k: D[k]["test"] for k in sets}
    f3 = lambda x: f"{x:+.3f}".replace("-", "−")
    ci3 = lambda c: f"[{f3(c[0])}, {f3(c[1])}]"
    pv = lambda p: f"p = {p:.2g}" if p >= 0.01 else f"p = {p:.3f}"
    out = ["| test half | " + " | ".join(f"{names[k]} (n = {T[k]['n']})" for k in sets) + " |", "|---" * (len(sets) + 1) + "|"]
    rows = (("bm25+pre", "BM25 + pre-retrieval (`--method bm25`)"), ("dense", "dense (`--method dense`)"),
            ("rrf", "RRF, the old default (`--stage1 hybrid`)"), ("default", f"**{r['default_stage1'].replace('zsum', 'z-sum')}, the new default** (`--method hierarchical`)"))
    for m, label in rows:
        cell = lambda k: (f"**{T[k]['ndcg@10'][m]:.3f}**" if T[k]["ndcg@10"][m] == max(T[k]["ndcg@10"].values()) else f"{T[k]['ndcg@10'][m]:.3f}") + f" ({T[k]['ndcg@20'][m]:.3f})"
        out.append(f"| {label} | " + " | ".join(cell(k) for k in sets) + " |")
    d = lambda k, key: T[k][key]
    out.append("| new − best of the three @10 [95 % CI], p | " + " | ".join(
        f"{f3(d(k, 'ndcg@10:default-best')['mean_diff'])} {ci3(d(k, 'ndcg@10:default-best')['ci95'])} vs {member[d(k, 'ndcg@10:best_member')]}, {pv(d(k, 'ndcg@10:default-best')['p_randomisation'])}" for k in sets) + " |")
    out.append("| new − best of the three @20 [95 % CI] | " + " | ".join(f"{f3(d(k, 'ndcg@20:default-best')['mean_diff'])} {ci3(d(k, 'ndcg@20:default-best')['ci95'])}" for k in sets) + " |")
    rr = lambda k: d(k, "ndcg@10:default-rrf")
    out.append("| new − RRF @10 [95 % CI] | " + " | ".join((f"**{f3(rr(k)['mean_diff'])}**" if rr(k)["ci95"][0] > 0 else f3(rr(k)["mean_diff"])) + f" {ci3(rr(k)['ci95'])}" for k in sets) + " |")
    out.append("| ≥ best − 0.005 nDCG@10? | " + " | ".join("yes" if r["criterion"]["test"][k] else "**no**" for k in sets) + " |")
    return "\n".join(out) + "\n"


def p2_stage1_splade() -> str:
    "Stage-1 fusions with a third member (SPLADE) on the test halves, each against its best member (bench/stage1_fusion.py --out results/p2_stage1_splade.json); a column's best in bold when it is not below the best member."
    r = result("p2_stage1_splade")
    C, sets = r["candidates"], list(r["datasets"])
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev"}
    label = {"zsum": "zsum (default)", "zsum3": "zsum3 (+ SPLADE)"}
    f3 = lambda x: f"{x:+.3f}".replace("-", "−")
    shown = [c for c in C if c != "hybrid"]
    best = {k: max(C[c][k]["test"]["ndcg@10"] for c in shown) for k in sets}
    out = ["| test half | " + " | ".join(f"{names[k]} (n = {C[shown[0]][k]['test']['n']})" for k in sets) + " |", "|---" * (len(sets) + 1) + "|",
           "| SPLADE alone | " + " | ".join(f"{r['datasets'][k]['test']['ndcg@10']['splade']:.3f}" for k in sets) + " |"]
    for c in shown:
        def cell(k):
            t = C[c][k]["test"]; d = t["minus_best"]
            head = f"{t['ndcg@10']:.3f}, {f3(d['mean_diff'])}"
            return (f"**{head}**" if t["ndcg@10"] == best[k] and d["mean_diff"] >= 0 else head) + f" [{f3(d['ci95'][0])}, {f3(d['ci95'][1])}]"
        out.append(f"| {label.get(c, c)} | " + " | ".join(cell(k) for k in sets) + " |")
    return "\n".join(out) + "\n"


def p1_cross_entity() -> str:
    "P1's cross-entity designs on the report halves, relational questions, graph vs vector at its budget (bench/p1_cross_entity.py)."
    R = result("p1_cross_entity")["results"]
    f3 = lambda x: f"{x:+.3f}"
    pv = lambda p: "p < 0.001" if p < 0.001 else f"p {p:.3f}"
    def cells(x):
        return f"{x['mean_graph']:.3f} vs {x['mean_vector']:.3f} | {f3(x['diff'])} [{f3(x['ci_diff'][0])}, {f3(x['ci_diff'][1])}], {pv(x['p'])}"
    out = ["| set (relational, report half) | τ | config | entity recall graph vs vector@graph | Δ [95 % CI], p | support recall graph vs vector@graph | Δ [95 % CI], p |",
           "|---|---|---|---|---|---|---|"]
    for s, rep in ((s, R[s]["report"]) for s in R):
        row = lambda cfg, tau: rep[cfg][tau]["relational"]
        n = row("default", "0.5")["context_entity_recall"]["vector@graph"]["n"]
        line = lambda tau, label, x: out.append(f"| {s} (n = {n}) | {tau} | {label} | {cells(x['context_entity_recall']['vector@graph'])} | {cells(x['support_recall']['vector@graph'])} |")
        for cfg, label in (("dense", "dense"), ("lexical", "lexical"), ("default", "**default (chosen)**")): line("0.5", label, row(cfg, "0.5"))
        if row("default", "0.3") == row("default", "0.7"): line("0.3 / 0.7", "default (chosen)", row("default", "0.3"))
        else:
            for tau in ("0.3", "0.7"): line(tau, "default (chosen)", row("default", tau))
    return "\n".join(out) + "\n"


def p2_llm_judge() -> str:
    "The LLM judge's separation (AUC of P(yes)), its calls, and the adaptive cascade's share of queries calling it (`llm_rerank`)."
    L = result("p2_financerag")["llm_rerank"]
    sets = list(P2_SETS)
    taus = ("0.05", "0.1", "0.2")
    out = ["| | " + " | ".join(P2_SETS.values()) + " |", "|---|---|---|---|",
           "| AUC of P(yes), relevant vs not: head / query cut | " + " | ".join(f"{L['head'][s]['auc']:.3f} / {L['query'][s]['auc']:.3f}" for s in sets) + " |",
           "| LLM calls / query | " + " | ".join(f"{L['query'][s]['per_query']['calls']:.0f}" for s in sets) + " |",
           f"| share of queries calling the LLM, adaptive τ = {' / '.join(taus)} (query cut) | "
           + " | ".join(" / ".join(f"{L['query'][s]['adaptive_llm_share'][t]:g}" for t in taus) for s in sets) + " |"]
    return "\n".join(out) + "\n"


def p2_answers() -> str:
    "Answers end to end on FinanceBench with split/merge on and off (`answers`; correctness by numeric match or the LLM judge)."
    A = result("p2_financerag")["answers"]
    acc, br = A["accuracy"], A["branches_on"]
    cell = lambda mode, k: f"{acc[mode][k]['correct']}/{acc[mode][k]['n']}"
    out = [f"| FinanceBench, {A['questions']} questions | correct (all) | numeric match | LLM judge | held-out half only | branches |", "|---|---|---|---|---|---|"]
    on = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in br.items() if v)
    out.append(f"| split/merge on | {cell('on', 'all')} ({acc['on']['all']['accuracy']:.3f}) | {cell('on', 'numeric')} | {cell('on', 'judged')} | {cell('on', 'held_out')} | {on} |")
    out.append(f"| split/merge off (the top documents cut to fit, one call) | {cell('off', 'all')} ({acc['off']['all']['accuracy']:.3f}) | {cell('off', 'numeric')} | "
               f"{cell('off', 'judged')} | {cell('off', 'held_out')} | single {acc['off']['all']['n']} |")
    return "\n".join(out) + "\n"


def p2_cross_encoder_v0() -> str:
    "The first cross-encoder (trained on the development corpora's other halves), 40 test-half queries per corpus (archived results/p2_cross_encoder.json)."
    D = result("p2_cross_encoder")["datasets"]
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "scifact": "SciFact train"}
    f3 = lambda x: f"{x:+.3f}".replace("-", "−")
    d = lambda x: f"{f3(x['mean_diff'])} [{f3(x['ci95'][0])}, {f3(x['ci95'][1])}]"
    out = ["| corpus | stage 1 | cross-encoder alone | Δ | cross-encoder interp 0.2 | Δ |", "|---|---|---|---|---|---|"]
    for k, x in D.items():
        n = x["ndcg@10"]
        out.append(f"| {names.get(k, k)} | {n['stage1']:.3f} | {n['ce']:.3f} | {d(x['ndcg@10:ce-stage1'])} | {n['ce+interp']:.3f} | {d(x['ndcg@10:ce+interp-stage1'])} |")
    return "\n".join(out) + "\n"


def sample_methods() -> str:
    "Every method without an LLM on the made-up BEIR sample: nDCG@10 over all questions and per kind, the best of a column in bold (data/sample/make_beir_sample.py --table)."
    env = envelope("sample_methods")
    r, n = env["result"], env["n"]
    cols = list(n)                                        # 'all', then the kinds of question
    best = {c: max(row[c] for row in r["ndcg@10"].values()) for c in cols}
    cell = lambda x, c: f"**{x:.3f}**" if x == best[c] else f"{x:.3f}"
    out = ["| nDCG@10 | " + " | ".join(f"{c} (n = {n[c]})" for c in cols) + " | as it ran |", "|---" * (len(cols) + 2) + "|"]
    for m, row in r["ndcg@10"].items():
        out.append(f"| {m} | " + " | ".join(cell(row[c], c) for c in cols) + f" | `{r['ran'][m]}` |")
    return "\n".join(out) + "\n"


RENDERERS = {   # block name -> renderer, by paper
    "p1-ragas-cost": p1_ragas_cost,
    "p1-answer-format": p1_answer_format,
    "p1-ragas-run": p1_ragas_run,
    "p3-scorer-choice": p3_scorer_choice,
    "p2-llm-judge": p2_llm_judge,
    "p2-answers": p2_answers,
    "p2-cross-encoder-v0": p2_cross_encoder_v0,
    "p1-answers": p1_answers,
    "p1-cross-entity": p1_cross_entity,
    "p1-headline": p1_headline,
    "p1-paper": p1_paper,
    "p1-retrieval": p1_retrieval,
    "p1-speed": p1_speed,
    "p2-bi-encoder": p2_bi_encoder,
    "p2-ce-report": p2_ce_report,
    "p2-ce-study": p2_ce_study,
    "p2-int8-embedder": p2_int8_embedder,
    "p2-financerag": p2_financerag,
    "p2-fusion-choice": p2_fusion_choice,
    "p2-headline": p2_headline,
    "p2-llm-preretrieval": p2_llm_preretrieval,
    "p2-llm-rerank": p2_llm_rerank,
    "p2-preretrieval": p2_preretrieval,
    "p2-stage1-fusion": p2_stage1_fusion,
    "p2-stage1-splade": p2_stage1_splade,
    "p2-zero-call": p2_zero_call,
    "p3-ce": p3_ce,
    "p3-fusion": p3_fusion,
    "p3-grow": p3_grow,
    "p3-headline": p3_headline,
    "p3-hybrid": p3_hybrid,
    "p3-lattice": p3_lattice,
    "p3-routing": p3_routing,
    "sample-methods": sample_methods,
}


def render(text: str) -> tuple[str, list]:
    "(`text` with every block rendered, [names of unknown blocks])."
    unknown = []
    def sub(m):
        if m.group(2) not in RENDERERS: unknown.append(m.group(2)); return m.group(0)
        return m.group(1) + RENDERERS[m.group(2)]() + m.group(4)
    return BLOCK.sub(sub, text), unknown


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 when a block is stale")
    a = ap.parse_args(argv)
    stale = []
    for page in PAGES:
        f = ROOT / page
        if not f.exists(): continue
        old = f.read_text(encoding="utf-8"); new, unknown = render(old)
        if unknown: print(f"{page}: unknown block(s) {unknown}; known: {sorted(RENDERERS)}"); return 2
        if new != old:
            stale.append(page)
            if not a.check: f.write_text(new, encoding="utf-8"); print(f"rendered {page}")
    if a.check and stale: print(f"stale results blocks in {stale}: run python tools/render_results.py"); return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
