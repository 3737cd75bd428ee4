"""Writes data/sample/beir_sample/: a made-up financial retrieval set in BEIR format (40 documents, 16 queries, graded 1).

Ten fictional companies x four documents (a results paragraph, a quarterly pipe table, a cash-flow paragraph, an
outlook paragraph). Queries name a company and a figure, so lexical and dense retrievers both have work to do and the
tables exercise table->JSON. Used by the quick runs of the P2/P3 experiment notebooks (tests/overrides) so that the
tests need nothing from ../shared/data. Deterministic: re-running rewrites the same bytes.

    python data/sample/make_beir_sample.py
"""
import csv, json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "beir_sample"
COMPANIES = [("Northwind Foods", "NWF", "packaged food"), ("Contoso Energy", "CSE", "solar power"),
             ("Fabrikam Semiconductors", "FBK", "memory chips"), ("Tailspin Airlines", "TSA", "regional flights"),
             ("Woodgrove Bank", "WGB", "retail banking"), ("Litware Software", "LTW", "accounting software"),
             ("Adatum Pharma", "ADP", "generic drugs"), ("Proseware Retail", "PRW", "discount stores"),
             ("Wingtip Toys", "WTT", "educational toys"), ("Alpine Ski Resorts", "ASR", "ski resorts")]


def docs_for(i, name, tick, sector):
    rev, growth, ni = 120 + 37 * i, 3 + (i * 7) % 19, 9 + 4 * i
    q = [round(rev / 4 * (0.9 + 0.05 * k), 1) for k in range(4)]
    eps = [round(0.21 + 0.03 * i + 0.02 * k, 2) for k in range(4)]
    fcf, capex, debt = 14 + 3 * i, 6 + i, 200 + 55 * i
    ebitda, margin = round(rev * (0.15 + 0.01 * i), 1), 15 + i
    return {
        f"{tick}-results": (f"{name} fiscal 2023 results",
            f"{name} ({tick}), a {sector} company, reported fiscal 2023 revenue of ${rev} million, up {growth}% YoY, "
            f"and net income of ${ni} million. Management credited pricing and volume in {sector}."),
        f"{tick}-quarters": (f"{name} quarterly results 2023",
            "| Quarter | Revenue ($M) | EPS ($) |\n|---|---|---|\n" +
            "\n".join(f"| Q{k+1} 2023 | {q[k]} | {eps[k]} |" for k in range(4))),
        f"{tick}-cashflow": (f"{name} cash flow and balance sheet",
            f"{name} generated free cash flow (FCF) of ${fcf} million in 2023 after capital expenditure of ${capex} "
            f"million. Total debt stood at ${debt} million at year end."),
        f"{tick}-outlook": (f"{name} 2024 outlook",
            f"For 2024, {name} expects EBITDA of ${ebitda} million, an EBITDA margin near {margin}%, and plans to "
            f"expand its {sector} business."),
    }, {"rev": rev, "eps3": eps[2], "fcf": fcf, "ebitda": ebitda}


def main():
    corpus, queries, qrels = {}, {}, []
    for i, (name, tick, sector) in enumerate(COMPANIES):
        docs, _ = docs_for(i, name, tick, sector)
        for d, (title, text) in docs.items(): corpus[d] = {"_id": d, "title": title, "text": text}
        asks = [(f"What revenue did {name} report for fiscal 2023?", f"{tick}-results"),
                (f"{name} earnings per share in the third quarter of 2023", f"{tick}-quarters"),
                (f"How much free cash flow did {name} generate?", f"{tick}-cashflow"),
                (f"What EBITDA does {name} expect for 2024?", f"{tick}-outlook")]
        for j, (text, doc) in enumerate(asks):
            if (i + j) % 5 in (0, 2):          # 16 of the 40 possible questions, spread over companies and doc types
                qid = f"q-{tick}-{j}"; queries[qid] = {"_id": qid, "text": text}; qrels.append((qid, doc, 1))
    (OUT / "qrels").mkdir(parents=True, exist_ok=True)
    with open(OUT / "corpus.jsonl", "w") as f:
        for d in corpus.values(): f.write(json.dumps(d) + "\n")
    with open(OUT / "queries.jsonl", "w") as f:
        for q in queries.values(): f.write(json.dumps(q) + "\n")
    with open(OUT / "qrels" / "test.tsv", "w", newline="") as f:
        w = csv.writer(f, delimiter="\t"); w.writerow(["query-id", "corpus-id", "score"]); w.writerows(qrels)
    print(f"{OUT}: {len(corpus)} documents, {len(queries)} queries")


if __name__ == "__main__":
    main()
