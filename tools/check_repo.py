"""`make check`: the notebooks are clean and the library is their export, checked on a copy (the checkout is untouched).

1. `nbdev-clean` on a copy of nbs/ must leave every notebook byte for byte unchanged (no outputs' noise, execution
   counts or metadata that nbdev-clean would strip: notebooks are committed clean);
2. `nbdev-export` on a copy of the repository must regenerate finrag/ byte for byte (nobody edits finrag/ by hand);
3. at least `MIN_OUTPUT_SHARE` of the lesson notebooks' code cells (`nbs/*.ipynb`, not nbs/experiments) carry an output
   (the lessons show what their examples compute; 283 of 1,121 = 25.2 % when the floor was set, from 11.5 %),
   and at least `MIN_NOTEBOOK_SHARE` of every lesson notebook's own (0-13 % in several when it was set;
   `#| export` cells count, so the example cells carry the outputs).
Exit 1 listing the problems, 0 when all hold.
"""
import filecmp, json, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
IGNORE = shutil.ignore_patterns(".venv", ".git", ".cache", ".ruff_cache", "runs", "stores", "site", "_build", "_docs",
                                "*.egg-info", "__pycache__", ".ipynb_checkpoints")


def changed(a:Path, b:Path, pattern:str) -> list[str]:
    "Files matching `pattern` under `a` that differ from, or are missing in, `b` (paths relative to `a`)."
    out = []
    for p in sorted(a.rglob(pattern)):
        if any(part in (".ipynb_checkpoints", "__pycache__") for part in p.parts): continue
        q = b/p.relative_to(a)
        if not q.exists() or not filecmp.cmp(p, q, shallow=False): out.append(str(p.relative_to(a)))
    out += [str(q.relative_to(b)) for q in sorted(b.rglob(pattern)) if "__pycache__" not in q.parts and not (a/q.relative_to(b)).exists()]
    return out


MIN_OUTPUT_SHARE = 0.25      # of all lesson code cells
MIN_NOTEBOOK_SHARE = 0.40    # of each lesson notebook's code cells


def output_shares(nbs:Path=ROOT/"nbs") -> dict[str, tuple[int, int]]:
    """{notebook stem: (code cells with at least one output, code cells)} of the lesson notebooks `nbs/*.ipynb` (no
    leading `_`; not nbs/experiments). Every code cell counts: `#| export`, `#| default_exp` and skipped cells too."""
    out = {}
    for p in sorted(nbs.glob("*.ipynb")):
        if p.name.startswith("_"): continue
        cells = [c for c in json.loads(p.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        out[p.stem] = (sum(bool(c.get("outputs")) for c in cells), len(cells))
    return out


def output_share(nbs:Path=ROOT/"nbs") -> tuple[int, int]:
    "(code cells with at least one output, code cells) over the lesson notebooks `nbs/*.ipynb` (no leading `_`)."
    shares = output_shares(nbs).values()
    return sum(k for k, _ in shares), sum(n for _, n in shares)


FLOORS = ROOT/"tools"/"output_floors.json"   # {notebook: [k, n]}: the lesson notebooks still under MIN_NOTEBOOK_SHARE, at their recorded share


def thin_notebooks(nbs:Path=ROOT/"nbs", floor:float=MIN_NOTEBOOK_SHARE, floors:dict|None=None) -> list[str]:
    """'name k/n' of the lesson notebooks with fewer than `floor` of their code cells carrying an output — for a notebook
    in `floors` (default: tools/output_floors.json, the ones not there yet), fewer than its recorded share: a ratchet
    that only goes up (raise a notebook to `floor` and delete its line)."""
    floors = json.loads(FLOORS.read_text()) if floors is None and FLOORS.exists() else (floors or {})
    need = lambda name, n: min(floor, floors[name][0]/floors[name][1]) if name in floors and floors[name][1] else floor
    return [f"{name} {k}/{n}" for name, (k, n) in output_shares(nbs).items() if n and k < need(name, n)*n]


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d)/"repo"
        shutil.copytree(ROOT, copy, ignore=IGNORE, symlinks=True)
        problems = []
        r = subprocess.run([str(BIN/"nbdev-clean")], cwd=copy, capture_output=True, text=True)
        if r.returncode: problems.append(f"nbdev-clean failed: {r.stderr.strip()[-500:]}")
        problems += [f"not clean (run nbdev-clean --fname {f}): {f}" for f in changed(ROOT/"nbs", copy/"nbs", "*.ipynb")]
        r = subprocess.run([str(BIN/"nbdev-export")], cwd=copy, capture_output=True, text=True)
        if r.returncode: problems.append(f"nbdev-export failed: {r.stderr.strip()[-500:]}")
        problems += [f"not the export of the notebooks (edit the notebook, run make export): finrag/{f}"
                     for f in changed(ROOT/"finrag", copy/"finrag", "*.py")]
    k, n = output_share()
    if k < MIN_OUTPUT_SHARE*n:
        problems.append(f"{k} of {n} lesson code cells carry an output ({k/n:.1%}), under the floor {MIN_OUTPUT_SHARE:.0%}: "
                        "end examples with the value they compute and run `make notebooks`")
    else: print(f"lesson code cells with output: {k} of {n} ({k/n:.1%}; floor {MIN_OUTPUT_SHARE:.0%})")
    if thin := thin_notebooks():
        problems.append(f"{len(thin)} lesson notebook(s) with under {MIN_NOTEBOOK_SHARE:.0%} of their code cells carrying an output "
                        f"(end examples with the value they compute, then `make notebooks`): {', '.join(thin)}")
    for p in problems: print(p)
    print("make check: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__": sys.exit(main())
