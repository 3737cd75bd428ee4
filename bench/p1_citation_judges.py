"""P1: which citation judge agrees with a person? Candidate judges of "does the cited chunk support this answer
sentence" measured against a hand check, with Cohen's kappa, agreement and AUC (95 % bootstrap CIs).

    python bench/p1_citation_judges.py [--rows stores/fnspid/p1_eval_rows.jsonl] [--store stores/fnspid]
        [--hand data/p1_citation_handcheck.jsonl] [--llm-url http://127.0.0.1:PORT/v1] [--no-llm] [--out results/p1_citation_judges.json]

Sentences, three sources (the hand check's `source` field):
- `p1_eval`: every answer sentence citing a context chunk (`finrag.graphrag.answer.answer_sentences`; sentences that
  say the context does not answer are not judged) of the answered vector and graph rows of the full P1 evaluation's
  checkpoint (`finrag reproduce graphrag`, answers by the default 1.5B tier); counted as missing when the checkpoint
  or its store is not on this machine;
- `p1_citations`: the sentences of the earlier citation run (results/p1_citations.json, hand-written questions);
- `made_up`: sentences made up by finrag against made-up chunks (claim and chunk in the hand-check row, `case`:
  paraphrase, negation, entity, direction or figure), faithful ones and contradictions — negated, the wrong company,
  the change reversed (raised/cut, rose/fell, expanded/ended), a wrong figure or scale — none of them an LLM's answer.
A person read each labelled sentence against the chunk(s) it cites (`cited_supports`: true when the chunk states what
the sentence says). Judges, each a support probability in [0, 1] of (sentence, cited chunk), the best cited chunk counting:
- `llm`: the P(yes) judge `verify_citations` uses (`finrag.relevance.relevance_many` with `SUPPORT_INSTRUCTION`), the 1.5B;
- `ce`: finrag's trained cross-encoder (`data/models/ce-minilm-fin-int8`, trained on question–passage pairs);
- `lexical`: `finrag.graphrag.answer.support_overlap`, the share of the sentence's content words and figures in the chunk;
- `lexical+figures`: the same, 0 when the sentence states a figure the chunk does not;
- `ce+lexical`: the mean of `ce` and `lexical+figures`;
- `ce+lexical+consistency`: the same, 0 when `consistency_conflicts` finds a contradiction (figure, negation, entity, direction).
Split by `finrag.protocol.split_items` on the question ids (a made-up chunk's sentences share one id) into a choosing
and a reporting half. The default judge follows `finrag.protocol.choose_default` on each sentence's agreement with the
person (1 or 0), each source a corpus: the best macro agreement on the choosing half replaces today's judge
(`[graphrag] citation_judge`) only if the reporting half shows the gain (pooled paired CI above 0, no source's mean
more than 0.01 below); the check runs by default only if the default judge reaches kappa >= 0.4 on the reporting half.
Kappa at each judge's a-priori threshold (0.5: P(yes) and the cross-encoder's sigmoid are probabilities, and half the
sentence's words is the natural cut of an overlap share); AUC threshold-free. Nothing is tuned on the labels.
"""
import argparse, json, os, sys, time, hashlib
from pathlib import Path
from finrag.protocol import best_mean, choose_default, read_record, record, split_items
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import numpy as np
from finrag.core import data_dir, project_root
from finrag.config import get_settings
from finrag.graphrag.eval import jsonable
from finrag.graphrag.answer import CITATION_JUDGES, answer_sentences, citation_judge, verify_citations, _NO_ANSWER
from finrag.graphrag.consistency import consistency_conflicts
from finrag.llm import LLMClient

import inspect
THRESHOLD = inspect.signature(verify_citations).parameters["threshold"].default   # the check's own threshold
SOURCES = ("p1_eval", "p1_citations", "made_up")
CASES = ("paraphrase", "negation", "entity", "direction", "figure")


def claim_key(claim: str) -> str: return hashlib.sha1(claim.encode("utf-8")).hexdigest()[:10]


def sentences_from_rows(rows_path: Path, store: Path) -> list[dict]:
    "Cited, judged sentences of the answered vector/graph rows: {source, question_id, mode, i, claim, texts}; [] without the checkpoint or its store."
    if not rows_path.exists() or not (store / "chunks.jsonl").exists(): return []
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


def made_up_sentence(r: dict, where: str) -> dict:
    "A made-up hand-check row as a sentence: its claim against its chunk; exits naming the row and field when one is missing."
    for k in ("question_id", "i", "claim", "chunk", "case"):
        if not isinstance(r.get(k), (str, int)) or r.get(k) == "": sys.exit(f"{where}: field {k!r} missing or empty in a made-up row")
    if r["case"] not in CASES: sys.exit(f"{where}: field 'case' is {r['case']!r}, not one of {', '.join(CASES)}")
    return dict(source="made_up", question_id=r["question_id"], mode=r.get("mode", "made_up"), i=int(r["i"]), claim=r["claim"],
                texts=[r["chunk"]], case=r["case"])


def kappa(j, h) -> float:
    "Cohen's kappa of two yes/no labellings (scikit-learn); NaN when both say the same to all."
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


def measure(p, h) -> dict:
    "{n, hand_yes, judge_yes, kappa, kappa_ci, agreement, agreement_ci, auc} of support scores `p` at THRESHOLD against labels `h`."
    p, h = np.asarray(p, float), np.asarray(h, bool)
    j = p > THRESHOLD
    return dict(n=int(len(h)), hand_yes=int(h.sum()), judge_yes=int(j.sum()), kappa=kappa(j, h),
                kappa_ci=boot(lambda p_, h_: kappa(p_ > THRESHOLD, h_), p, h),
                agreement=float((j == h).mean()) if len(h) else float("nan"),
                agreement_ci=boot(lambda p_, h_: float(((p_ > THRESHOLD) == h_).mean()), p, h), auc=auc(p, h))


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
    incumbent = get_settings().graphrag.citation_judge
    sents = sentences_from_rows(Path(a.rows), Path(a.store)) + sentences_from_citation_run(Path(a.citations))
    lab, made = {}, []
    for n, line in enumerate(Path(a.hand).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip(): continue
        try: r = json.loads(line)
        except ValueError as e: sys.exit(f"{a.hand}:{n}: not JSON ({e})")
        if r.get("cited_supports") is None: continue
        if r.get("source") == "made_up": made.append(dict(made_up_sentence(r, f"{a.hand}:{n}"), hand=bool(r["cited_supports"]))); continue
        lab[r.get("source", "p1_citations"), r["question_id"], r["mode"], int(r["i"])] = r
    data, stale, found = [], 0, set()
    for s in sents:
        k = (s["source"], s["question_id"], s["mode"], s["i"]); r = lab.get(k)
        if r is None: continue
        if r.get("claim_sha1") and r["claim_sha1"] != claim_key(s["claim"]): stale += 1; continue   # the answer changed since it was read
        data.append(dict(s, case="answer", hand=bool(r["cited_supports"]))); found.add(k)
    missing = {src: sum(k[0] == src and k not in found for k in lab) for src in SOURCES[:2]}
    data += made
    if not data: sys.exit("no labelled sentence found")
    h = np.array([d["hand"] for d in data])
    print(f"{len(data)} labelled sentences ({int(h.sum())} supported by hand; by source "
          f"{ {s: sum(d['source'] == s for d in data) for s in SOURCES} }), {stale} stale labels skipped, "
          f"labelled but not found here: {missing}", flush=True)
    scores, cost = {}, {}
    for name in CITATION_JUDGES:
        if name == "llm" and a.no_llm: continue
        judge = citation_judge(LLMClient(base_url=a.llm_url) if name == "llm" and a.llm_url else name)
        t1, ps = time.perf_counter(), []
        for k, d in enumerate(data):
            ps.append(max(judge[1](d["claim"], d["texts"])))
            if name == "llm": print(f"llm judge {k + 1}/{len(data)}: P(yes) {ps[-1]:.3f} (hand: {d['hand']})", flush=True)
        scores[name], cost[name] = ps, 1000 * (time.perf_counter() - t1) / sum(len(d["texts"]) for d in data)
    conflicts = [[consistency_conflicts(d["claim"], t) for t in d["texts"]] for d in data]
    judges = {}
    for name, p in scores.items():
        judges[name] = measure(p, h)
        print(f"{name:<24} n {judges[name]['n']}  kappa {judges[name]['kappa']:+.3f} {np.round(judges[name]['kappa_ci'], 3)}  "
              f"agreement {judges[name]['agreement']:.3f}  AUC {judges[name]['auc']:.3f}  yes {judges[name]['judge_yes']}/{judges[name]['hand_yes']} (judge/hand)")
    choose, report = split_items(list(range(len(data))), key=lambda i: data[i]["question_id"])
    halves, agree = {}, {}
    for half, ix in (("choose", choose), ("report", report)):
        hx = h[ix]
        halves[half] = {"n": len(ix), "hand_yes": int(hx.sum()), "by_source": {s: sum(data[i]["source"] == s for i in ix) for s in SOURCES}}
        agree[half] = {name: {} for name in scores}
        for name, p in scores.items():
            px = np.array(p, float)[ix]
            halves[half][name] = measure(px, hx)
            halves[half][name]["by_source"] = {s: measure(px[m], hx[m]) for s in SOURCES
                                               if (m := np.array([data[i]["source"] == s for i in ix])).any()}
            halves[half][name]["by_case"] = {c: measure(px[m], hx[m]) for c in CASES
                                             if (m := np.array([data[i].get("case") == c for i in ix])).any()}
            for i in ix:
                agree[half][name].setdefault(data[i]["source"], {})[f"{data[i]['question_id']}/{data[i]['mode']}/{data[i]['i']}"] = \
                    float((scores[name][i] > THRESHOLD) == h[i])
    if incumbent not in scores: sys.exit(f"today's judge {incumbent!r} was not measured (--no-llm?)")
    chosen, decision = choose_default(agree["choose"], agree["report"], incumbent)
    by_kappa = best_mean({k: round(halves["choose"][k]["kappa"], 6) for k in scores}, tiebreak=lambda k: -cost[k])
    rep = halves["report"][chosen]
    print(f"choosing half ({halves['choose']['n']} sentences): best agreement {decision['candidate']}, best kappa {by_kappa}; "
          f"today's judge {incumbent}; default: {chosen} ({decision['verdict'].get('rule')}, replaces: {decision['verdict']['replaces']})")
    print(f"reporting half ({halves['report']['n']}): {chosen} kappa {rep['kappa']:+.3f} {np.round(rep['kappa_ci'], 3)}, "
          f"agreement {rep['agreement']:.3f} {np.round(rep['agreement_ci'], 3)}, AUC {rep['auc']:.3f}")
    res = dict(question="does the cited chunk support the answer sentence? candidate judges against a person's reading",
               n_sentences=len(data), hand_supported=int(h.sum()), by_source={s: sum(d["source"] == s for d in data) for s in SOURCES},
               labelled_not_found=missing, stale_labels=stale, threshold=THRESHOLD, judges=judges, halves=halves,
               split="finrag.protocol.split_items(sentences, by question id, seed 0)", incumbent=incumbent,
               decision=decision, chosen=chosen, best_kappa_on_choosing_half=by_kappa,
               chosen_rule="finrag.protocol.choose_default on each sentence's agreement with the person, sources as corpora: the best macro "
                           "agreement on the choosing half replaces today's judge only if the reporting half shows the gain",
               default_rule="the check runs by default only with a judge at kappa >= 0.4 on the reporting half",
               default_on=bool(rep["kappa"] >= 0.4), cost_ms_per_pair=cost,
               sentences=[dict(source=d["source"], question_id=d["question_id"], mode=d["mode"], i=d["i"], case=d["case"], hand=d["hand"],
                               half="choose" if n in set(choose) else "report", conflicts=conflicts[n], **{k: scores[k][n] for k in scores})
                          for n, d in enumerate(data)])
    record(Path(a.out).stem, jsonable(res), vars(a), n={"choose": len(choose), "report": len(report)}, folder=Path(a.out).parent,
           seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"default judge: {chosen}; default on: {res['default_on']} -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
