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
PAGES = ("README.md", "docs/results.md", "docs/results-p1.md", "docs/results-p2.md", "docs/results-p3.md", "docs/performance.md")
BLOCK = re.compile(r"(<!-- render: ([\w-]+) -->\n)(.*?)(<!-- /render -->)", re.S)


def result(name: str) -> dict:
    from finrag.protocol import read_record
    return read_record(ROOT / "results" / f"{name}.json")["result"]


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


def p2_headline() -> str:
    "P2 on the reporting halves: stage 1 (the default), the trained cross-encoder as stage 2, the best single retriever."
    r = result("train_cross_encoder")
    rep, means = r["report_ndcg@10"], r["report_ndcg@10"]["means"]
    best = r["best_ce_candidate"]                     # the cross-encoder's best configuration on the choosing halves (`--stage2 ce`)
    d = rep[f"{best}-stage1"]
    names = {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "scifact": "SciFact (not finance)"}
    out = ["| corpus | n | BM25 | dense | **stage 1** (default: BM25 + MiniLM, z-score fusion) | + trained cross-encoder (`--stage2 ce`) | cross-encoder − stage 1 [95 % CI] |",
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


RENDERERS = {"p1-headline": p1_headline, "p2-headline": p2_headline, "p3-headline": p3_headline}


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
