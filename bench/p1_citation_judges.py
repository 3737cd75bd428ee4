"""P1: which citation judge agrees with a person? Candidate judges of "does the cited chunk support this answer
sentence" measured against a hand check, with Cohen's kappa and AUC (95 % bootstrap CIs).

    python bench/p1_citation_judges.py [--rows stores/fnspid/p1_eval_rows.jsonl] [--store stores/fnspid]
        [--hand data/p1_citation_handcheck.jsonl] [--llm-url http://127.0.0.1:PORT/v1] [--out results/p1_citation_judges.json]

Sentences: every answer sentence citing a context chunk (`finrag.graphrag.answer.answer_sentences`; sentences that say the
context does not answer are not judged) of the answered vector and graph rows of the full P1 evaluation's checkpoint
(`finrag reproduce graphrag`, answers by the default 1.5B tier), and the sentences of the earlier citation run
(results/p1_citations.json, hand-written questions). A person read each labelled sentence against the chunk(s) it cites
(`cited_supports` in the hand-check file: true when the chunk states what the sentence says). Judges, each a support
probability in [0, 1] of (sentence, cited chunk), the best cited chunk counting:
- `llm`: the P(yes) judge `verify_citations` uses (`finrag.relevance.relevance_many` with `SUPPORT_INSTRUCTION`), the 1.5B;
- `ce`: finrag's trained cross-encoder (`data/models/ce-minilm-fin-int8`, trained on question–passage pairs);
- `lexical`: `finrag.graphrag.answer.support_overlap`, the share of the sentence's content words and figures in the chunk;
- `lexical+figures`: the same, 0 when the sentence states a figure the chunk does not;
- `ce+lexical`: the mean of `ce` and `lexical+figures`.
The judge is chosen on the sentences of one half of the questions (`finrag.protocol.split_ids`) by kappa and reported
on the other half; the citation check runs by default only if the chosen judge reaches kappa >= 0.4 there.
Kappa at each judge's a-priori threshold (0.5: P(yes) and the cross-encoder's sigmoid are probabilities, and half the
sentence's words is the natural cut of an overlap share); AUC threshold-free. Nothing is tuned on the labels.
"""
import argparse, json, os, sys, time, hashlib
from pathlib import Path
from finrag.protocol import best_mean, read_record, record
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import numpy as np
from finrag.core import data_dir, project_root
from finrag.graphrag.eval import jsonable
from finrag.graphrag.answer import CITATION_JUDGES, answer_sentences, citation_judge, verify_citations, _NO_ANSWER
from finrag.protocol import split_ids
from finrag.llm import LLMClient

import inspect
THRESHOLD = inspect.signature(verify_citations).parameters["threshold"].default   # the check's own threshold


def claim_key(claim: str) -> str: return hashlib.sha1(claim.encode("utf-8")).hexdigest()[:10]


def sentences_from_rows(rows_path: Path, store: Path) -> list[dict]:
    "Cited, judged sentences of the answered vector/graph rows: {source, question_id, mode, i, claim, texts}."
    text = {}
    with open(store / "chunks.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line); text[r["id"]] = r["text"]
    out = []
    for line in rows_path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if not r.get("answered") or r["mode"] not in ("vector", "graph") or not r.get("answer"): continue
        for i, s in enumerate(answer_sentences(r["answer"], r["chunk_ids"])):
            if s["cited"] and not _NO_ANSWER.search(s["claim"]):
                out.append(dict(source="p1_eval", question_id=r["question_id"], mode=r["mode"], i=i, claim=s["claim"],
                                texts=[text[c] for c in s["cited"]]))
    return out


def sentences_from_citation_run(path: Path) -> list[dict]:
    "The earlier run's sentences with their cited chunks' text (results/p1_citations.json)."
    if not path.exists(): return []
    return [dict(source="p1_citations", question_id=s["question_id"], mode=s["mode"], i=s["i"], claim=s["claim"], texts=s["cited_text"])
            for s in read_record(path)["result"]["sentences"] if s["cited"] and s["status"] != "abstains"]


def kappa(j, h) -> float:
    "Cohen's kappa of two yes/no labellings (scikit-learn); 0 when one rater says the same to all and the other agrees."
    from sklearn.metrics import cohen_kappa_score
    return float(cohen_kappa_score(h, j)) if len(set(h) | set(j)) > 1 else float("nan")


def auc(p, h) -> float:
    "ROC AUC of support scores `p` against the hand labels (scikit-learn); NaN with one class only."
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(h, p)) if 0 < h.sum() < len(h) else float("nan")


def boot(fn, p, h, n=2000, seed=0):
    rng = np.random.default_rng(seed); vals = []
    for _ in range(n):
        ix = rng.integers(0, len(h), len(h))
        v = fn(p[ix], h[ix])
        if np.isfinite(v): vals.append(v)
    return [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))] if vals else [float("nan")] * 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=str(project_root() / "stores/fnspid/p1_eval_rows.jsonl"))
    ap.add_argument("--store", default=str(project_root() / "stores/fnspid"))
    ap.add_argument("--citations", default=str(project_root() / "results/p1_citations.json"))
    ap.add_argument("--hand", default=str(data_dir() / "p1_citation_handcheck.jsonl"))
    ap.add_argument("--llm-url", default=None, help="an OpenAI-compatible endpoint of the answer tier (default: the local llama.cpp tier)")
    ap.add_argument("--no-llm", action="store_true", help="leave the LLM judge out")
    ap.add_argument("--out", default=str(project_root() / "results/p1_citation_judges.json"))
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    t0 = time.perf_counter()
    sents = sentences_from_rows(Path(a.rows), Path(a.store)) + sentences_from_citation_run(Path(a.citations))
    lab = {}
    for n, line in enumerate(Path(a.hand).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip(): continue
        try: r = json.loads(line)
        except ValueError as e: sys.exit(f"{a.hand}:{n}: not JSON ({e})")
        if r.get("cited_supports") is None: continue
        lab[r.get("source", "p1_citations"), r["question_id"], r["mode"], int(r["i"])] = r
    data, stale = [], 0
    for s in sents:
        r = lab.get((s["source"], s["question_id"], s["mode"], s["i"]))
        if r is None: continue
        if r.get("claim_sha1") and r["claim_sha1"] != claim_key(s["claim"]): stale += 1; continue   # the answer changed since it was read
        data.append(dict(s, hand=bool(r["cited_supports"])))
    if not data: sys.exit("no labelled sentence found")
    h = np.array([d["hand"] for d in data])
    print(f"{len(data)} labelled sentences ({int(h.sum())} supported by hand), {stale} stale labels skipped", flush=True)
    scores, cost = {}, {}
    for name in CITATION_JUDGES:
        if name == "llm" and a.no_llm: continue
        judge = citation_judge(LLMClient(base_url=a.llm_url) if name == "llm" and a.llm_url else name)
        t1, ps = time.perf_counter(), []
        for k, d in enumerate(data):
            ps.append(max(judge[1](d["claim"], d["texts"])))
            if name == "llm": print(f"llm judge {k + 1}/{len(data)}: P(yes) {ps[-1]:.3f} (hand: {d['hand']})", flush=True)
        scores[name], cost[name] = ps, 1000 * (time.perf_counter() - t1) / sum(len(d["texts"]) for d in data)
    judges = {}
    for name, p in scores.items():
        p = np.array(p, float); ok = np.isfinite(p)
        pj, hj = p[ok], h[ok]
        j = pj > THRESHOLD
        judges[name] = dict(n=int(ok.sum()), threshold=THRESHOLD, judge_yes=int(j.sum()), hand_yes=int(hj.sum()),
                            agreement=float((j == hj).mean()), kappa=kappa(j, hj),
                            kappa_ci=boot(lambda p_, h_: kappa(p_ > THRESHOLD, h_), pj, hj), auc=auc(pj, hj), auc_ci=boot(auc, pj, hj))
        print(f"{name:<16} n {judges[name]['n']}  kappa {judges[name]['kappa']:+.3f} {np.round(judges[name]['kappa_ci'], 3)}  "
              f"AUC {judges[name]['auc']:.3f} {np.round(judges[name]['auc_ci'], 3)}  yes {judges[name]['judge_yes']}/{judges[name]['hand_yes']} (judge/hand)")
    choose_ids, report_ids = split_ids([d["question_id"] for d in data])
    halves = {}
    for half, ids in (("choose", choose_ids), ("report", report_ids)):
        m = np.array([d["question_id"] in ids for d in data])
        halves[half] = {"n": int(m.sum()), "hand_yes": int(h[m].sum())}
        for name, p in scores.items():
            pj = np.array(p, float)[m]; j = pj > THRESHOLD
            halves[half][name] = dict(kappa=kappa(j, h[m]), kappa_ci=boot(lambda p_, h_: kappa(p_ > THRESHOLD, h_), pj, h[m]), auc=auc(pj, h[m]))
    best = best_mean({k: round(halves["choose"][k]["kappa"], 6) for k in scores}, tiebreak=lambda k: -cost[k])   # equal κ: the cheaper judge
    rep = halves["report"][best]
    print(f"chosen on the choosing half ({halves['choose']['n']} sentences): {best}; on the reporting half ({halves['report']['n']}): "
          f"kappa {rep['kappa']:+.3f} {np.round(rep['kappa_ci'], 3)}, AUC {rep['auc']:.3f}")
    res = dict(question="does the cited chunk support the answer sentence? candidate judges against a person's reading",
               n_sentences=len(data), hand_supported=int(h.sum()), by_source={s: sum(d["source"] == s for d in data) for s in ("p1_eval", "p1_citations")},
               stale_labels=stale, threshold=THRESHOLD, judges=judges, halves=halves, split="finrag.protocol.split_ids(question ids, seed 0)",
               chosen=best, chosen_rule="the largest kappa on the choosing half (ties: the cheaper judge)",
               default_rule="the check runs by default only with a judge at kappa >= 0.4 on the reporting half",
               default_on=bool(rep["kappa"] >= 0.4), cost_ms_per_pair=cost,
               sentences=[dict(source=d["source"], question_id=d["question_id"], mode=d["mode"], i=d["i"], hand=d["hand"],
                               **{k: scores[k][n] for k in scores}) for n, d in enumerate(data)],
               seconds=round(time.perf_counter() - t0, 1))
    record(Path(a.out).stem, jsonable(res), vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"default on: {res['default_on']} -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
