"""How long the `#| export` cells of the lesson notebooks are: p50, p90 and max line counts, and the largest cells.

    python tools/cell_sizes.py [--top 15] [NOTEBOOK ...]

A cell's size is its number of source lines without the `#|` directive lines (a cell of `#| export` and one `def`
line counts 1). Every `nbs/*.ipynb` by default (not nbs/experiments); percentiles are nearest-rank.
"""
from __future__ import annotations
import argparse, json, math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export_cells(nb:Path) -> list[tuple[int, int, str]]:
    "[(cell index, lines, first code line)] of the `#| export` code cells of notebook `nb`."
    out = []
    for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
        if c["cell_type"] != "code": continue
        lines = "".join(c["source"]).splitlines()
        if not any(line.strip().replace(" ", "") == "#|export" for line in lines): continue
        code = [line for line in lines if not line.lstrip().startswith("#|")]
        first = next((line for line in code if line.strip() and not line.lstrip().startswith(("#", "@"))), "")
        out.append((i, len(code), first.strip()))
    return out


def percentile(xs:list[int], q:float) -> int:
    "The nearest-rank `q`-th percentile (0 < q <= 100) of `xs`."
    s = sorted(xs)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def sizes(paths:list[Path]) -> list[tuple[int, str, int, str]]:
    "[(lines, notebook name, cell index, first code line)] of every export cell of `paths`, largest first."
    rows = [(n, p.name, i, first) for p in paths for i, n, first in export_cells(p)]
    return sorted(rows, key=lambda r: (-r[0], r[1], r[2]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks to measure (default: nbs/*.ipynb)")
    ap.add_argument("--top", type=int, default=15, help="how many of the largest cells to list")
    a = ap.parse_args(argv)
    rows = sizes(a.notebooks or sorted((ROOT/"nbs").glob("*.ipynb")))
    if not rows: print("no export cells"); return
    ns = [r[0] for r in rows]
    print(f"{len(ns)} export cells: p50 {percentile(ns, 50)}, p90 {percentile(ns, 90)}, max {max(ns)} lines")
    for n, name, i, first in rows[:a.top]: print(f"{n:5d}  {name} [cell {i}]  {first[:70]}")


if __name__ == "__main__": main()
