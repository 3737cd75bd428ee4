"""Writes data/sample/beir_sample/: a MADE-UP financial retrieval set in BEIR format (40 documents, 32 queries, grade 1)
on which the retrieval methods differ; with --table it then measures them (results/sample_methods.json, the table of
data/sample/README.md).

Eight fictional companies x five documents: the fiscal 2022 and the fiscal 2023 results (near-duplicates: the same
sentences, other figures and year), a 2023 quarterly pipe table, 2023 segment rows as JSON records and a news item.
Each company has four questions, one judged document each, of these kinds (the last part of the query's id):

- paraphrase: a news item retold without a word of its document (checked here with finrag's BM25 tokenizer: no index
  term in common), so BM25 cannot find it and a dense retriever can;
- year: a figure of one fiscal year, the other year's results the near-duplicate distractor;
- figure: an exact figure of a quarterly table, without the company's name (dense retrievers read numbers poorly);
- ticker: a ticker, a quarter and a table column;
- segment: a JSON segment row (ticker or name, segment, field);
- units: a figure written in other units than its document ($1.47 billion vs $1,470 million), which only pre-retrieval's
  unit normalisation makes the same index term.

Deterministic: re-running rewrites the same bytes. Nothing here is copied from a public dataset.

    python data/sample/make_beir_sample.py           # the data
    python data/sample/make_beir_sample.py --table   # the data, then the methods measured on it
    python tools/render_results.py                   # the table of data/sample/README.md from the measurement
"""
import csv, json, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "beir_sample"
YEARS = (2022, 2023)
ORDINAL = ("first", "second", "third", "fourth")

# name, ticker, what it is, three segments, (news title, news text), the news item retold (no word in common)
COMPANIES = [
    ("Northwind Foods", "NWF", "a packaged food company", ("Cereals", "Snacks", "Frozen meals"),
     ("Northwind Foods recalls oat cereal",
      "Northwind Foods recalls its oat cereal after plastic fragments were found in boxes; the Dayton plant will stay "
      "shut for two weeks while inspectors check every line."),
     "Which grocery brand pulled the morning flakes from shelves over contamination and halted a factory?"),
    ("Contoso Energy", "CSE", "a solar power company", ("Utility-scale solar", "Rooftop installations", "Battery storage"),
     ("Contoso Energy cuts 400 jobs",
      "Contoso Energy will cut 400 jobs and close two panel installation depots in Arizona as falling subsidies "
      "squeeze rooftop solar demand."),
     "Which photovoltaic firm is laying off staff because government incentives for residential sun power shrank?"),
    ("Fabrikam Semiconductors", "FBK", "a memory chip company", ("DRAM", "NAND flash", "Foundry services"),
     ("Fabrikam Semiconductors opens a fab in Dresden",
      "Fabrikam Semiconductors opened a $2 billion wafer fab in Dresden, its first outside Asia, to build DRAM for "
      "carmakers."),
     "Which chipmaker started producing storage circuits for the auto industry at a new European factory?"),
    ("Tailspin Airlines", "TSA", "a regional airline company", ("Scheduled flights", "Charter", "Cargo"),
     ("Tailspin Airlines grounds twelve turboprops",
      "Tailspin Airlines grounded twelve turboprops after cracks were discovered in propeller hubs, cancelling 300 "
      "flights over the holiday weekend."),
     "Which regional carrier had to park part of its fleet when inspectors spotted damaged parts, scrapping trips "
     "during a vacation period?"),
    ("Woodgrove Bank", "WGB", "a retail banking company", ("Mortgages", "Consumer loans", "Wealth management"),
     ("Woodgrove Bank settles overdraft claims",
      "Woodgrove Bank agreed to pay a $45 million penalty to settle claims that it charged overdraft fees on accounts "
      "that had enough money."),
     "Which lender will hand regulators a fine over improper levies on clients whose balances were sufficient?"),
    ("Litware Software", "LTW", "an accounting software company", ("Cloud ledger", "Payroll", "Tax filing"),
     ("Litware Software hit by ransomware",
      "Litware Software suffered a ransomware attack that locked payroll tools for 1,200 small-business clients for "
      "three days."),
     "Which bookkeeping app vendor was targeted by hackers demanding a payment, leaving firms unable to pay wages?"),
    ("Adatum Pharma", "ADP", "a generic drug company", ("Generics", "Biosimilars", "Contract manufacturing"),
     ("Adatum Pharma wins approval for a cheaper cholesterol pill",
      "Adatum Pharma won approval to sell a cheaper copy of a blockbuster cholesterol pill, with launch planned for "
      "March."),
     "Which medicine manufacturer got the regulator's green light for a low-cost version of a popular statin?"),
    ("Proseware Retail", "PRW", "a discount retail company", ("Groceries", "Apparel", "Online"),
     ("Proseware Retail shuts 60 rural outlets",
      "Proseware Retail will shut 60 outlets in rural towns and move the savings into online orders with same-day "
      "pickup."),
     "Which bargain chain is closing shops in the countryside to shift money to e-commerce?"),
]
# the two questions of each company besides its paraphrase and year questions (four of each kind over the eight)
OTHER = [("figure", "segment"), ("ticker", "units"), ("figure", "units"), ("ticker", "segment"),
         ("figure", "segment"), ("ticker", "units"), ("figure", "units"), ("ticker", "segment")]


def figures(i):
    "The made-up figures of company i: annual {year: {...}}, quarterly rows of 2023, segment rows of 2023."
    annual = {}
    for y in YEARS:
        d = y - 2022
        annual[y] = {"rev": round(240 + 57.3 * i + 21.7 * d + 0.4 * (i % 3), 1), "ni": round(18 + 6.1 * i + 3.3 * d, 1),
                     "eps": round(0.62 + 0.11 * i + 0.07 * d, 2), "gm": round(31 + 2.3 * i - 1.4 * d, 1),
                     "growth": 3 + 5 * i % 11, "debt": 1150 + 230 * i + 90 * d}
    annual[2023]["growth"] = round(100 * (annual[2023]["rev"] / annual[2022]["rev"] - 1))   # the two years agree
    rev = annual[2023]["rev"]
    quarters = [{"q": f"Q{k + 1} 2023", "rev": round(rev / 4 * (0.91 + 0.06 * k) + 0.3 * i, 1),
                 "eps": round(0.13 + 0.027 * i + 0.019 * k + 0.004 * (i % 2), 2),
                 "gm": round(29.5 + 2.3 * i + 0.7 * k, 1)} for k in range(4)]
    shares = (0.5, 0.3, 0.2)
    segments = [{"rev": round(rev * s + 1.1 * j, 1), "opinc": round(rev * s * (0.08 + 0.03 * j + 0.01 * i), 1),
                 "employees": 900 + 410 * i + 170 * j * (j + 1) + 13 * i * j} for j, s in enumerate(shares)]
    return annual, quarters, segments


def documents(i, name, tick, sector, segs, news):
    "{doc id: (title, text)} of company i."
    annual, quarters, segments = figures(i)
    docs = {}
    for y in YEARS:
        a = annual[y]
        docs[f"{tick}-fy{y}"] = (f"{name} fiscal {y} annual results",
            f"{name} ({tick}), {sector}, reported revenue of ${a['rev']} million for fiscal {y}, up "
            f"{a['growth']}% on the prior year, net income of ${a['ni']} million and diluted EPS of ${a['eps']:.2f}. "
            f"Gross margin was {a['gm']}%. Total debt stood at ${a['debt']:,} million at year end.")
    docs[f"{tick}-q2023"] = (f"{name} ({tick}) quarterly results, 2023",
        "| Quarter | Revenue ($M) | Diluted EPS ($) | Gross margin (%) |\n|---|---|---|---|\n" +
        "\n".join(f"| {r['q']} | {r['rev']} | {r['eps']:.2f} | {r['gm']} |" for r in quarters))
    docs[f"{tick}-seg2023"] = (f"{name} ({tick}) segment data, fiscal 2023",
        "\n".join(json.dumps({"segment": s, "revenue_usd_m": r["rev"], "operating_income_usd_m": r["opinc"],
                              "employees": r["employees"]}) for s, r in zip(segs, segments)))
    docs[f"{tick}-news"] = news
    return docs


def questions(i, name, tick, segs, paraphrase):
    "[(kind, question, judged doc id)] of company i."
    annual, quarters, segments = figures(i)
    y = YEARS[i % 2]
    metric = [("What net income did {n} report for fiscal {y}?"), ("How much revenue did {n} make in fiscal {y}?"),
              ("{n} diluted EPS for fiscal {y}"), ("What was the gross margin of {n} in fiscal {y}?")][i % 4]
    k = (i + 1) % 4
    qs = [("paraphrase", paraphrase, f"{tick}-news"), ("year", metric.format(n=name, y=y), f"{tick}-fy{y}")]
    for kind in OTHER[i]:
        if kind == "figure":
            qs.append((kind, f"Which company reported diluted EPS of ${quarters[k]['eps']:.2f} in the {ORDINAL[k]} quarter of 2023?"
                       if i % 4 == 0 else f"Which company had revenue of ${quarters[k]['rev']} million in Q{k + 1} 2023?",
                       f"{tick}-q2023"))
        elif kind == "ticker":
            qs.append((kind, f"{tick} gross margin Q{k + 1} 2023" if i % 4 == 1 else f"{tick} Q{k + 1} 2023 diluted EPS",
                       f"{tick}-q2023"))
        elif kind == "segment":
            j = i % 3
            qs.append((kind, f"How many employees work in the {segs[j]} segment of {name}?" if i % 2 == 0
                       else f"{tick} {segs[j]} operating income fiscal 2023", f"{tick}-seg2023"))
        elif kind == "units":
            qs.append((kind, f"Which company carried total debt of ${annual[2023]['debt'] / 1000:g} billion at the end of fiscal 2023?",
                       f"{tick}-fy2023"))
    return qs


def kind(qid:str) -> str:
    "The kind of question of a query id (`q-NWF-paraphrase` -> 'paraphrase')."
    return qid.rsplit("-", 1)[1]


def build():
    "(corpus {id: {_id, title, text}}, queries {id: {_id, text}}, qrels [(qid, doc id, 1)])."
    corpus, queries, qrels = {}, {}, []
    for i, (name, tick, sector, segs, news, para) in enumerate(COMPANIES):
        for d, (title, text) in documents(i, name, tick, sector, segs, news).items():
            corpus[d] = {"_id": d, "title": title, "text": text}
        for k, text, doc in questions(i, name, tick, segs, para):
            qid = f"q-{tick}-{k}"                         # the kind of question is the id's last part
            queries[qid] = {"_id": qid, "text": text}; qrels.append((qid, doc, 1))
    return corpus, queries, qrels


def check(corpus, queries, qrels):
    "The design holds: a paraphrase shares no BM25 index term with its document; a figure question's figure is in its document only."
    from finrag.retrieval import BM25Retriever, doc_text
    tok, gold = BM25Retriever(corpus).tokenize, {q: d for q, d, _ in qrels}
    for q in queries:
        if kind(q) == "paraphrase":
            common = set(tok(queries[q]["text"])) & set(tok(doc_text(corpus[gold[q]])))
            assert not common, f"{q} shares {common} with {gold[q]}"
        if kind(q) == "figure":
            fig = queries[q]["text"].split("$")[1].split()[0]
            assert [d for d in corpus if fig in corpus[d]["text"]] == [gold[q]], f"{q}: {fig} is not in {gold[q]} alone"
    assert len({d["title"] for d in corpus.values()}) == len(corpus) and len({x["text"] for x in queries.values()}) == len(queries)


def write(out=OUT):
    "Write the BEIR folder `out` (corpus.jsonl, queries.jsonl, qrels/test.tsv); returns `out`."
    corpus, queries, qrels = build()
    check(corpus, queries, qrels)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w") as f:
        for d in corpus.values(): f.write(json.dumps(d) + "\n")
    with open(out / "queries.jsonl", "w") as f:
        for q in queries.values(): f.write(json.dumps(q) + "\n")
    with open(out / "qrels" / "test.tsv", "w", newline="") as f:
        w = csv.writer(f, delimiter="\t"); w.writerow(["query-id", "corpus-id", "score"]); w.writerows(qrels)
    print(f"{out}: {len(corpus)} documents, {len(queries)} queries")
    return out


def measure(out=OUT):
    "Measure every LLM-free method on the sample (`finrag.methods.method_table`) and record it as results/sample_methods.json."
    import os, time
    from finrag.beir import load_beir
    from finrag.methods import method_table
    from finrag.protocol import record
    ds, t0, load = load_beir(out, "test"), time.time(), os.getloadavg()
    tab = method_table(ds, groups={q: kind(q) for q in ds.queries})
    path = record("sample_methods", {"ndcg@10": tab.drop(columns="ran").to_dict(orient="index"), "ran": tab["ran"].to_dict(),
                                     "spread": float(tab["all"].max() - tab["all"].min())},
                  params={"data": "data/sample/beir_sample", "split": "test"}, n=tab.attrs["n"], seconds=time.time() - t0,
                  loadavg_start=load, folder=HERE.parent.parent / "results", writer="data/sample/make_beir_sample.py")
    print(tab.round(4).to_string()); print(f"{path}: then python tools/render_results.py")


if __name__ == "__main__":
    write()
    if "--table" in sys.argv[1:]: measure()
