"""Build data/gazetteer.csv from pytickersymbols' index constituents plus the hand-kept rows in data/gazetteer_extra.csv.

Run from the repository root (needs the dev extra: pytickersymbols==1.17.10):

    python tools/build_gazetteer.py [--extra data/gazetteer_extra.csv] [--out data/gazetteer.csv]

Output columns (see data/README.md): id, label, name, ticker, aliases ('|'-separated), bare (1 = the ticker also matches
as a bare upper-case word in running text). The build is deterministic; it fails on an alias that two ids claim.
"""
from __future__ import annotations
import argparse, csv, re, sys
from pathlib import Path

INDICES = ("S&P 500", "NASDAQ 100", "DOW JONES", "S&P 100")   # pytickersymbols index names (US listings)
LABELS = {"STOCK_TICKER", "EQUITY_INDEX", "INVESTMENT_BANK", "ORGANIZATION"}
# legal-form suffixes stripped to make the short alias ('Apple Inc.' -> 'Apple'); Group/Holdings are NOT stripped
# automatically ('Match Group' -> 'Match', 'Booking Holdings' -> 'Booking' would be English words)
SUFFIX = re.compile(r"(,?\s+(Inc\.?|Incorporated|Corporation|Corp\.?|Company|Companies|Co\.|plc|PLC|Limited|Ltd\.?|"
                    r"N\.V\.|S\.A\.|Class [A-C]))+$")
# tickers of 3+ letters that are English words or common acronyms: they match only in exchange forms ($X, NYSE: X),
# like every ticker of 1-2 letters. (Picked by hand from the constituents: common words, months, tech/finance acronyms.)
WORD_TICKERS = set("""ALL ARE HAS NOW WELL TEAM LOW COST FAST KEY MET BALL ICE SHOP APP CAT FIX ARM TECH BEN POOL FOX KIM
UPS DECK BRO KEYS COP DOC GEN TAP HOOD MAR COIN DASH USB TEL HON LIN AMP DIS TRI CARR REG HAL DOW HUM ERIE MAS PEP PEG
PSA YUM WAT MOS LEN CMS COR COO URI TER STE ESS EXE XYZ IEX AES ADP FANG LULU OTIS APA DAL ADM GIS TXT CPT MAA EQT
FER SAN ING RIO VALE SE ON IT""".split())

def display_name(name:str) -> str:
    "pytickersymbols' name without a parenthesised note or a leading 'The'."
    return re.sub(r"^The\s+", "", re.sub(r"\s*\(.*?\)", "", name)).strip()

def short_name(name:str) -> str:
    "The name without its legal-form suffix ('Tesla, Inc.' -> 'Tesla')."
    return SUFFIX.sub("", name).strip()

def auto_aliases(name:str) -> list[str]:
    d = display_name(name); s = short_name(d)
    return list(dict.fromkeys(a for a in (d, s) if a))

def bare_ok(ticker:str) -> bool:
    "Upper-case tickers of 3+ characters that are not English words match bare (case-sensitive)."
    return len(ticker) >= 3 and ticker.isupper() and ticker not in WORD_TICKERS

def company_rows() -> dict[str, dict]:
    from pytickersymbols import PyTickerSymbols
    pts, rows = PyTickerSymbols(), {}
    for idx in INDICES:
        for s in pts.get_stocks_by_index(idx):
            t = s["symbol"].strip().upper()
            if t in rows: continue
            rows[t] = dict(id=t, label="STOCK_TICKER", name=display_name(s["name"]), ticker=t,
                           aliases=auto_aliases(s["name"]), bare=int(bare_ok(t)))
    return rows

def merge_extra(rows:dict, path:Path) -> dict:
    "Apply data/gazetteer_extra.csv: new rows, or overrides of generated ones ('-Alias' removes an alias)."
    with open(path, newline="", encoding="utf-8") as f:
        for i, r in enumerate(csv.DictReader(f), 1):
            rid = (r.get("id") or "").strip()
            if not rid: sys.exit(f"{path}: row {i}: field 'id' is empty")
            label = (r.get("label") or "").strip()
            if label and label not in LABELS: sys.exit(f"{path}: row {i}: field 'label': {label!r} not in {sorted(LABELS)}")
            add = [a.strip() for a in (r.get("aliases") or "").split("|") if a.strip()]
            row = rows.get(rid)
            if row is None:
                if not label or not (r.get("name") or "").strip(): sys.exit(f"{path}: row {i}: a new id needs label and name")
                t = (r.get("ticker") or "").strip()
                row = rows[rid] = dict(id=rid, label=label, name=r["name"].strip(), ticker=t, aliases=auto_aliases(r["name"]),
                                       bare=int(bare_ok(t)) if t else 0)
            else:
                if label: row["label"] = label
                if (r.get("name") or "").strip():
                    row["name"] = r["name"].strip(); row["aliases"] = auto_aliases(row["name"])
                if (r.get("ticker") or "").strip(): row["ticker"] = r["ticker"].strip()
            for a in add:
                if a.startswith("-"): row["aliases"] = [x for x in row["aliases"] if x != a[1:]]
                elif a not in row["aliases"]: row["aliases"].append(a)
            if (r.get("bare") or "").strip(): row["bare"] = int(r["bare"])
    return rows

def check(rows:dict):
    "Fail when two ids claim the same alias (case-insensitive) — the resolver would have to guess."
    seen, bad = {}, []
    for r in rows.values():
        for a in r["aliases"]:
            k = a.lower()
            if k in seen and seen[k] != r["id"]: bad.append(f"{a!r}: {seen[k]} and {r['id']}")
            seen.setdefault(k, r["id"])
    if bad: sys.exit("alias claimed by two ids (remove one with '-Alias' in the extra file):\n  " + "\n  ".join(bad))

ORDER = {"EQUITY_INDEX": 0, "INVESTMENT_BANK": 1, "STOCK_TICKER": 2, "ORGANIZATION": 3}

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--extra", default="data/gazetteer_extra.csv"); p.add_argument("--out", default="data/gazetteer.csv")
    a = p.parse_args(argv)
    rows = merge_extra(company_rows(), Path(a.extra)); check(rows)
    with open(a.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n"); w.writerow(["id", "label", "name", "ticker", "aliases", "bare"])
        for r in sorted(rows.values(), key=lambda r: (ORDER[r["label"]], r["id"])):
            w.writerow([r["id"], r["label"], r["name"], r["ticker"], "|".join(r["aliases"]), r["bare"]])
    print(f"{a.out}: {len(rows)} rows " + ", ".join(f"{l} {sum(r['label']==l for r in rows.values())}" for l in ORDER))

if __name__ == "__main__": main()
