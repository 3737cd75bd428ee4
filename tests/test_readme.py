"""The README's results tables quote results/*.json: every measured number in them must be in the JSON it names.

A results table is a Markdown table in the README whose section (the text since the last heading, the table's own
paragraph included) names one or more `results/<name>.json` files. Each cell number written with a decimal point
(0.905, 0.4883, 8.6 — metrics, p-values, seconds) must be, rounded to the decimals shown, some number in those files
(each file's envelope, `finrag.protocol.record`, numbers and all). The same holds in prose: in a paragraph or list item
that names results files, every number with a decimal point outside `code` (model sizes like 1.5B and versions aside)
is in the files it names — outside lists of more than 100 items (per-question rows), which would
match almost any number. Bold, brackets, signs and thousands separators are ignored. The check is by value, not by
key: a wrong 3-decimal number still matches some other value of results/p1_eval.json about one time in five (P2, P3:
one in 15–35; measured with random numbers), so it catches stale tables, not every typo. A table that names no results file is not checked, so
prose tables (the CLI, the models) need nothing; a helper who updates a JSON and the README together stays green,
one who updates only one of them is told which number and which file disagree.
"""
import json, re
import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUM = re.compile(r"(?<![\w.=:-])(?<!Python )-?\d+\.(\d+)(?![\d]|\.\d|B\b)")   # not a version (Python 3.11, ==0.1.1, Apache-2.0), a model size (1.5B) or a name (zsum:1.5)


def numbers(obj, max_list:int=100) -> list[float]:
    "Every int and float in a parsed JSON value (booleans and lists longer than `max_list` excluded)."
    if isinstance(obj, bool): return []
    if isinstance(obj, (int, float)): return [float(obj)]
    if isinstance(obj, dict): return [x for v in obj.values() for x in numbers(v, max_list)]
    if isinstance(obj, list): return [] if len(obj) > max_list else [x for v in obj for x in numbers(v, max_list)]
    return []


def results_tables(text:str) -> list[tuple[list[str], list[str]]]:
    "(results files named in the section, table lines) for each Markdown table of `text`."
    out, section, table = [], [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"): table.append(line); continue
        if table:
            files = sorted(set(re.findall(r"results/[\w.-]+\.json", "\n".join(section))))
            out.append((files, table)); section += table; table = []
        section = [] if line.startswith("#") else section + [line]
    return out


def quoted(table:list[str]) -> list[tuple[str, int]]:
    "(number as written, decimals) of the body cells of a table (header and separator rows skipped)."
    cells = [c for row in table[2:] for c in row.strip("|").split("|")]
    return [(m.group(0), len(m.group(1))) for c in cells for m in NUM.finditer(c.replace("**", "").replace(",", ""))]


def prose_blocks(text:str) -> list[str]:
    "The paragraphs and list items of `text` (tables, headings and fenced code left out), each as one string."
    out, cur, fence = [], [], False
    for line in text.splitlines() + [""]:
        if line.startswith("```"): fence = not fence; continue
        new = not line.strip() or line.startswith(("#", "|")) or re.match(r"^\s*([-*]|\d+\.) ", line)
        if fence or new:
            if cur: out.append("\n".join(cur))
            cur = [line] if (not fence and line.strip() and not line.startswith(("#", "|"))) else []
        else: cur.append(line)
    return out


def _missing(s:str, d:int, values:list) -> bool:
    return not any(abs(abs(v) - abs(float(s))) <= 0.5 * 10**-d + 1e-9 for v in values)


def mismatches(readme:Path, root:Path) -> list[str]:
    bad, text = [], re.sub(r"<!-- render: [\w-]+ -->.*?<!-- /render -->", "", readme.read_text(encoding="utf-8"), flags=re.S)   # rendered blocks: test_rendered_results_blocks_are_current
    for block in prose_blocks(text):
        files = sorted(set(re.findall(r"results/[\w.-]+\.json", block)))
        if not files or any(not (root/f).is_file() for f in files): continue
        values = [x for f in files for x in numbers(json.loads((root/f).read_text(encoding="utf-8")))]
        plain = re.sub(r"`[^`]*`", "", block).replace("**", "").replace(",", "")
        bad += [f"{m.group(0)} (in {block[:50]!r}) is in none of {files}" for m in NUM.finditer(plain) if _missing(m.group(0), len(m.group(1)), values)]
    for files, table in results_tables(text):
        if not files: continue
        missing = [f for f in files if not (root/f).is_file()]
        if missing: bad.append(f"{missing} named by the table starting {table[0][:60]!r} does not exist"); continue
        values = [x for f in files for x in numbers(json.loads((root/f).read_text(encoding="utf-8")))]
        bad += [f"{s} (table {table[0][:50]!r}) is in none of {files}" for s, d in quoted(table) if _missing(s, d, values)]
    return bad


PAGES = ("README.md", "docs/results.md", "docs/results-p1.md", "docs/results-p2.md", "docs/results-p3.md", "docs/performance.md",
         "docs/scaling.md", "docs/configuration.md")   # the front page and the lab journal


def test_readme_results_match_json():
    bad = [b for p in PAGES for b in mismatches(ROOT / p, ROOT)]
    assert bad == [], "README results tables disagree with results/*.json:\n" + "\n".join(bad)


def test_the_check_can_fail(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text(json.dumps({"rows": [{"ndcg@10": 0.74049, "p": 0.0113}]}))
    readme = tmp_path / "README.md"
    readme.write_text("## R\n\nFrom `results/r.json`:\n\n| m | nDCG@10 | p |\n|---|---|---|\n| bm25 | **0.740** | 0.011 |\n\n"
                      "## Prose\n\n| a | b |\n|---|---|\n| x | 0.123456 |\n")
    assert mismatches(readme, tmp_path) == []                     # rounded, bold; the prose table names no file
    readme.write_text(readme.read_text().replace("0.740", "0.745"))              # 0.74049 does not round to 0.745
    assert mismatches(readme, tmp_path) == ["0.745 (table '| m | nDCG@10 | p |') is in none of ['results/r.json']"]
    readme.write_text("## P\n\n- BM25 reaches 0.74 (`results/r.json`, `zsum:1.5`, the 1.5B tier, Python 3.11.7); p = 0.02.\n")
    assert mismatches(readme, tmp_path) == ["0.02 (in '- BM25 reaches 0.74 (`results/r.json`, `zsum:1.5`,') is in none of ['results/r.json']"]


# Counts a command produces: the README states them, a test checks them.
TEST_COUNT = re.compile(r"\((\d+) tests:")
CHUNKS = re.compile(r"(?<![\d,])(\d{1,3}(?:,\d{3})+|\d{4,}) chunks")


def stated_chunk_counts(text:str) -> list[tuple[int, str]]:
    "(count, line) of every 'N chunks' with N >= 1,000 in `text`, except counts the line names as the paper's or as pre-cleaning."
    out = []
    for line in text.splitlines():
        for m in CHUNKS.finditer(line):
            n = int(m.group(1).replace(",", ""))
            if n >= 1000 and not re.search(r"the paper|before the boilerplate", line): out.append((n, line.strip()[:80]))
    return out


def test_readme_fnspid_chunk_counts_match_the_store():
    "Every FNSPID store size the README states (N chunks, N >= 1,000) is the one the P1 experiments recorded."
    recorded = {json.loads((ROOT/"results"/f).read_text())["result"]["chunks"] for f in ("p1_fnspid_graph.json", "p1_eval.json")}
    assert len(recorded) == 1, f"the two P1 experiments ran on different stores: {recorded}"
    stated = [c for p in PAGES for c in stated_chunk_counts((ROOT/p).read_text(encoding="utf-8"))]
    assert stated, "the README states no FNSPID chunk count"
    assert [s for s in stated if s[0] not in recorded] == [], f"README chunk counts disagree with results ({recorded}): {stated}"
    assert stated_chunk_counts("a store of 1,417 chunks") == [(1417, "a store of 1,417 chunks")]     # the check can fail
    assert stated_chunk_counts("1,477 chunks from 255 articles (the paper); 80 chunks") == []


def test_readme_test_count(request):
    "The README's test count is the number of tests `make test` collects (checked when the whole suite runs)."
    cfg = request.config
    whole = [Path(a).resolve() for a in cfg.args] == [ROOT/"tests"] and not cfg.option.keyword and not cfg.option.markexpr
    if not whole: pytest.skip("not the whole suite: run `make test` (pytest tests) to check the README's test count")
    m = TEST_COUNT.search((ROOT/"README.md").read_text(encoding="utf-8"))
    assert m, "the README states no test count '(N tests: ...'"
    assert int(m.group(1)) == len(request.session.items), f"README says {m.group(1)} tests, `make test` collects {len(request.session.items)}"


def test_rendered_results_blocks_are_current():
    "The results blocks of the README and the results pages are what tools/render_results.py renders from the envelopes now."
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import render_results
    stale = [p for p in render_results.PAGES if (ROOT / p).exists() and render_results.render((ROOT / p).read_text(encoding="utf-8"))[0] != (ROOT / p).read_text(encoding="utf-8")]
    assert stale == [], f"stale results blocks in {stale}: run python tools/render_results.py"
    blocks = {name for p in render_results.PAGES if (ROOT / p).exists() for name in re.findall(r"<!-- render: ([\w-]+) -->", (ROOT / p).read_text(encoding="utf-8"))}
    assert {"p1-headline", "p2-headline", "p3-headline"} <= blocks, blocks
    assert render_results.render("<!-- render: p9 -->\nold\n<!-- /render -->")[1] == ["p9"]          # an unknown block is named, not dropped


def test_every_results_table_is_rendered():
    "Issue 39: a table of the results pages is generated from the envelopes (inside a render block), never typed by hand; every renderer is used."
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import render_results
    used, loose = set(), {}
    for p in ("docs/results.md", "docs/results-p1.md", "docs/results-p2.md", "docs/results-p3.md", "docs/performance.md", "data/sample/README.md"):
        text = (ROOT / p).read_text(encoding="utf-8")
        used |= set(re.findall(r"<!-- render: ([\w-]+) -->", text))
        rest = re.sub(r"<!-- render: [\w-]+ -->\n.*?<!-- /render -->", "", text, flags=re.S)
        rows = [l for l in rest.splitlines() if l.startswith("|")]
        if rows: loose[p] = rows[0]
    assert loose == {}, f"hand-typed tables on the results pages: {loose}; render them (tools/render_results.py)"
    assert set(render_results.RENDERERS) == used, f"renderers no page uses: {set(render_results.RENDERERS) - used}"


def test_readme_is_a_front_door():
    "Issue 39: what finrag is, the two commands, a CLI tour, one results table per paper and links; the journal lives in docs/results*.md."
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move measurements to docs/results-p*.md"
    assert max(map(len, lines)) <= 1000, "a README line over 1,000 characters"
