"""P1: do the answers' citations hold? A small LLM measurement on the hand-written relational questions.

    python bench/p1_citations.py [--store stores/fnspid] [--n 6] [--out results/p1_citations.json]

The first `--n` questions (by id) of the report half of `data/p1_questions_handwritten.jsonl` (the halves of
bench/p1_cross_entity.py) are answered in vector and graph mode (default GraphRAG settings, the default answer tier)
through `finrag.graphrag.eval.evaluate_graphrag(..., verify=True)` — the one evaluation loop — which checks every
answer sentence against the chunk it cites with the shared P(yes) judge (`finrag.graphrag.answer.verify_citations`,
`finrag.relevance`) and measures the copy rate (`finrag.graphrag.metrics.copy_rate`). Per mode: the share of judged
sentences whose cited chunk supports them (before) and that some context chunk supports (after: supported +
re-attributed), mean over answers with percentile-bootstrap 95 % CIs, after vs before paired Wilcoxon, the copy rate,
and the non-id citations. Every sentence with its cited and attributed chunk is written for a hand check. Resumable
(`--checkpoint`); the LLM cost is printed (the disk cache makes a re-run free).
"""
import argparse, json, os, sys, time
from pathlib import Path
from finrag.protocol import record, split_items
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parent))
from finrag.core import data_dir, project_root
from finrag.graphrag.eval import evaluate_graphrag, jsonable
from finrag.graphrag.ingest import NewsStore
from finrag.graphrag.questions import load_questions
from finrag import stats as S

MODES = ("vector", "graph")


def per_mode(rows, mode):
    r = [x for x in rows if x["mode"] == mode and x.get("answered") and x.get("answer")]
    out = dict(n_answers=len(r))
    for m in ("supported_before", "supported_after", "copy_rate"):
        v = np.array([x[m] for x in r], float); v = v[np.isfinite(v)]
        out[m] = dict(n=int(len(v)), mean=float(v.mean()) if len(v) else float("nan"), ci=S.bootstrap_ci(v))
    pairs = [(x["supported_after"], x["supported_before"]) for x in r if np.isfinite(x["supported_before"])]
    if pairs:
        a, b = np.array(pairs).T
        c, w = S.paired_bootstrap_ci(a, b), S.paired_wilcoxon(a, b)
        out["after_vs_before"] = dict(n=len(a), diff=c["mean_diff"], ci_diff=[c["ci_low"], c["ci_high"]], p=w["p"], note=w["note"])
    vs = [x["verification"] for x in r if x.get("verification")]
    out["sentences"] = {k: int(sum(v[k] for v in vs)) for k in ("n_sentences", "supported", "reattributed", "unsupported", "abstains", "calls")}
    out["answers_with_non_id_citations"] = sum(bool(v["non_id"]) for v in vs)
    out["non_id_citations"] = sorted({t for v in vs for t in v["non_id"]})
    return out


def agreement(sentences, path):
    """The judge against a person's reading: for sentences with a cited chunk, 'cited chunk supports' (judge: P > 0.5)
    vs `cited_supports`; for re-attributed ones, whether the chunk they were moved to supports them (`attributed_supports`)."""
    lab = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip(): continue
        try: r = json.loads(line); lab[r["question_id"], r["mode"], int(r["i"])] = r
        except (ValueError, KeyError, TypeError) as e: sys.exit(f"{path}:{n}: bad hand-check row ({e}); need question_id, mode, i")
    pairs, moved = [], []
    for s in sentences:
        h = lab.get((s["question_id"], s["mode"], s["i"]))
        if h is None: continue
        if s["cited"] and h.get("cited_supports") is not None: pairs.append((s["p_cited"] is not None and s["p_cited"] > 0.5, bool(h["cited_supports"])))
        if s["status"] == "reattributed" and h.get("attributed_supports") is not None: moved.append(bool(h["attributed_supports"]))
    if not pairs: return dict(n=0)
    j, h = np.array(pairs).T
    po = float((j == h).mean()); pe = float(j.mean() * h.mean() + (1 - j.mean()) * (1 - h.mean()))
    ok = (j == h).astype(float)
    return dict(n=len(pairs), agreement=po, agreement_ci=S.bootstrap_ci(ok), cohens_kappa=(po - pe) / (1 - pe) if pe < 1 else float("nan"),
                judge_yes=int(j.sum()), hand_yes=int(h.sum()), both_yes=int((j & h).sum()), both_no=int((~j & ~h).sum()),
                reattributed_checked=len(moved), reattributed_correct=int(sum(moved)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(project_root() / "stores/fnspid"))
    ap.add_argument("--hand", default=str(data_dir() / "p1_questions_handwritten.jsonl"))
    ap.add_argument("--n", type=int, default=6, help="questions answered (the report half's first, by id)")
    ap.add_argument("--max-seconds", type=float, default=600, help="no new question after this many seconds (the LLM budget)")
    ap.add_argument("--checkpoint", default=str(project_root() / "stores/p1_citations.ckpt.jsonl"))
    ap.add_argument("--out", default=str(project_root() / "results/p1_citations.json"))
    ap.add_argument("--hand-check", default=str(data_dir() / "p1_citation_handcheck.jsonl"),
                    help="JSONL {question_id, mode, i, cited_supports, attributed_supports}: a person's reading of the sentences (if the file exists)")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    t0 = time.perf_counter()
    qs = load_questions(a.hand, strict=True)[0]
    _, rep = split_items(qs)
    chosen = sorted(q.id for q in rep)[:a.n]
    sub = [q for q in rep if q.id in chosen]
    st = NewsStore(a.store)
    rows, done = [], []
    try:
        for q in sorted(sub, key=lambda q: q.id):     # one question at a time: stop within the LLM budget
            if done and time.perf_counter() - t0 > a.max_seconds: break
            r = evaluate_graphrag(st, [q], use_llm=True, ragas=False, modes=MODES, llm_modes=MODES, llm_n=[q.id],
                                  verify=True, checkpoint=a.checkpoint, progress=True)
            rows += r["rows"]; done.append(q.id)
            print(f"{q.id} done at {time.perf_counter() - t0:.0f} s", flush=True)
        text = {row["id"]: row["text"] for row in st.rows}
    finally: st.close()
    chosen = done
    sentences = []
    for x in rows:
        for i, s in enumerate((x.get("verification") or {}).get("sentences", [])):
            sentences.append(dict(question_id=x["question_id"], mode=x["mode"], i=i, claim=s["claim"], status=s["status"],
                                  cited=s["cited"], p_cited=s["p_cited"], attributed=s["attributed"], p_best=s["p_best"],
                                  non_id=s["non_id"], cited_text=[text.get(c, "")[:1500] for c in s["cited"]],
                                  attributed_text=text.get(s["attributed"], "")[:1500] if s["attributed"] else None))
    hand = agreement(sentences, Path(a.hand_check)) if Path(a.hand_check).exists() else None
    res = dict(issue=27, store=str(a.store), questions=chosen, questions_planned=a.n, modes=list(MODES), llm=r["config"]["llm_model"],
               judge="finrag.relevance.get_judge_llm() (the answer tier: [models] judge_llm is empty)", threshold=0.5,
               per_mode={m: per_mode(rows, m) for m in MODES}, max_seconds=a.max_seconds,
               answers=[dict(question_id=x["question_id"], mode=x["mode"], answer=x["answer"], revised=(x.get("verification") or {}).get("revised"),
                             copy_rate=x.get("copy_rate"), supported_before=x.get("supported_before"), supported_after=x.get("supported_after"),
                             llm_s=x.get("llm_s")) for x in rows if x.get("answered")],
               hand_check=hand, sentences=sentences, seconds=round(time.perf_counter() - t0, 1))
    record(Path(a.out).stem, jsonable(res), vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    for m, v in res["per_mode"].items():
        print(m, json.dumps(jsonable({k: v[k] for k in ("n_answers", "supported_before", "supported_after", "copy_rate", "sentences")})))
    print(f"{res['seconds']} s -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
