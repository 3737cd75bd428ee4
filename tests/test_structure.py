"""The library's layering (issue 23): the import graph of finrag/ has no cycle, and the shared core never imports a paper.

The graph is read with `ast` from every module of finrag/, module-level AND function-level imports alike (a lazy
import inside a function is still a dependency). The shared core is every module directly under finrag/ except the
top: the root CLI (cli*.py, which assembles the papers' command groups <paper>/cli.py), methods.py (the registry of
every paper's retrieval methods) and reproduce.py (papermill),
which may import everything.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "finrag"
PAPERS = ("finrag.graphrag", "finrag.hierarchical", "finrag.lattice", "finrag.testing")


def module_name(p: Path) -> str:
    parts = ("finrag",) + p.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(p: Path, mods: set) -> set:
    "The finrag modules `p` imports anywhere in its body (`from .x import y` resolved; `from . import m` names the module m)."
    name = module_name(p)
    pkg = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("finrag")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("finrag"): continue
            for a in node.names:                       # `from finrag import llm_server` imports the module llm_server
                sub = f"{target}.{a.name}"
                out.add(sub if sub in mods else target)
    resolved = set()
    for t in out:                                      # `finrag.x.y` where only `finrag.x` is a module (an attribute import)
        while t not in mods and "." in t: t = t.rsplit(".", 1)[0]
        if t in mods and t != name: resolved.add(t)
    return resolved


def import_graph() -> dict:
    files = [p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts and p.name != "_modidx.py"]
    mods = {module_name(p) for p in files}
    return {module_name(p): imports_of(p, mods) for p in files}


def find_cycle(graph: dict):
    "One import cycle as a list of modules (first == last), or None."
    state, stack = {}, []
    def visit(n):
        state[n] = 1; stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1: return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)): return c
        state[n] = 2; stack.pop()
        return None
    for n in sorted(graph):
        if n not in state and (c := visit(n)): return c
    return None


def core_modules(graph: dict) -> list:
    top = {"finrag.reproduce", "finrag.methods"}   # the top: papermill, the method registry (imports the papers)
    return sorted(m for m in graph if m.count(".") == 1 and m not in top and not m.startswith("finrag.cli")
                  and not m.startswith(PAPERS))


def test_graph_reader_sees_relative_and_lazy_imports():
    "The reader resolves relative imports and finds imports inside functions (a check that cannot see them cannot fail)."
    g = import_graph()
    assert "finrag.core" in g["finrag.config"]                       # `from .core import ...` at module level
    assert "finrag.graphrag.ingest" in g["finrag.graphrag.rag"]       # `from .ingest import NewsStore`
    assert "finrag.graphrag.rag" in g["finrag.graphrag.cli"]          # imported inside a command function
    assert {"finrag.graphrag.cli", "finrag.hierarchical.cli", "finrag.lattice.cli"} <= g["finrag.cli"]   # the root assembles the papers' groups
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert "finrag.retrieval" in core_modules(g) and "finrag.cli" not in core_modules(g) and "finrag.testing" not in core_modules(g)


def test_import_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None, f"import cycle: {' -> '.join(find_cycle(import_graph()))}"


def test_core_imports_no_paper_and_no_test_double():
    g = import_graph()
    bad = {m: sorted(t for t in g[m] if t.startswith(PAPERS)) for m in core_modules(g)}
    assert {m: t for m, t in bad.items() if t} == {}, "the shared core imports a paper package or finrag.testing"


def test_no_paper_imports_another():
    "The three papers stand side by side on the shared core: nothing in graphrag/, hierarchical/ or lattice/ imports another paper's package."
    g, papers = import_graph(), ("finrag.graphrag", "finrag.hierarchical", "finrag.lattice")
    own = lambda m: next((p for p in papers if m == p or m.startswith(p + ".")), None)
    bad = {m: sorted(t for t in g[m] if own(t) and own(t) != own(m)) for m in g if own(m)}
    assert {m: t for m, t in bad.items() if t} == {}, "a paper imports another paper"
    assert "finrag.fusion" in g["finrag.lattice.plus"] and "finrag.fusion" in g["finrag.hierarchical.rerank"]   # both fuse with the core's


def paper_floor_breaches(graph: dict) -> dict:
    """{paper module: the modules above the shared core it imports}: a paper may import its own package, the core and
    the shared option helpers (`finrag.cli_options`), never the top (the root CLI, the trainer CLI, the method registry)."""
    papers = ("finrag.graphrag", "finrag.hierarchical", "finrag.lattice")
    below = set(core_modules(graph)) | {"finrag", "finrag.cli_options"}
    own = lambda m: next((p for p in papers if m == p or m.startswith(p + ".")), None)
    bad = {m: sorted(t for t in graph[m] if own(t) != own(m) and t not in below) for m in graph if own(m)}
    return {m: t for m, t in bad.items() if t}


def test_the_three_papers_sit_on_one_floor():
    "Issue 55: the core's commands (`finrag train`, finrag.cli_train) live in the core; no paper imports them or any other module of the top."
    g = import_graph()
    assert "finrag.cli_train" in g["finrag.cli"] and "finrag.train" in g["finrag.cli_train"]   # the root assembles the trainer's group
    assert not any("finrag.cli_train" in g[m] for m in g if m.startswith(("finrag.graphrag", "finrag.hierarchical", "finrag.lattice")))
    assert paper_floor_breaches(g) == {}, paper_floor_breaches(g)
    up = {**g, "finrag.lattice.cli": g["finrag.lattice.cli"] | {"finrag.cli_train"}}   # the check can fail
    assert paper_floor_breaches(up) == {"finrag.lattice.cli": ["finrag.cli_train"]}


def _export_cells():
    "(notebook, public names, lines) of every `#| export` cell of the lesson notebooks."
    import nbformat
    out = []
    for nb in sorted((ROOT/"nbs").glob("*.ipynb")):
        for c in nbformat.read(nb, as_version=4).cells:
            if c.cell_type != "code" or not c.source.lstrip().startswith("#| export"): continue
            src = "\n".join(l for l in c.source.split("\n") if not l.startswith("#|")).strip()
            body = ast.parse(src).body
            names = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
            names += [t.id for n in body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
            out.append((nb.name, names, len(src.split("\n"))))
    return out


def test_export_cells_are_nbdev_sized():
    "One public name per export cell (at most 10 % hold more), median at most 15 lines (issue 23; fastcore: 7, nbdev: 11)."
    import statistics
    cells = _export_cells()
    multi = [(nb, names) for nb, names, _ in cells if len(names) > 1]
    assert len(multi) <= 0.10 * len(cells), f"{len(multi)} of {len(cells)} export cells hold more than one public name: {multi[:10]}"
    assert statistics.median(n for *_, n in cells) <= 15


# ---- importing a module never changes another module's registry entries: the same call gives the same run ----

IMPORT_ORDER_PROBE = r"""
import json, sys
if sys.argv[1] == "papers-first": import finrag.methods          # registers P2's transform and the papers' methods
from finrag.beir import load_beir
from finrag.retrieval import METHODS
from finrag.evaluation import eval_retrieval
ds = load_beir(sys.argv[2])
out = {}
for m in ("bm25", "dense", "hybrid"):
    r = eval_retrieval(ds, m, k=(10,), recall_k=(20,))
    out[m] = {"ndcg@10": r["ndcg@10"], "preretrieval": r.preretrieval, "run": r.run, "prepare": METHODS[m].prepare.__qualname__}
print(json.dumps(out, sort_keys=True))
"""


def test_import_order_does_not_change_a_run():
    import json, subprocess, sys
    beir = str(ROOT / "data" / "sample" / "beir_sample")
    outs = []
    for first in ("core-only", "papers-first"):
        p = subprocess.run([sys.executable, "-c", IMPORT_ORDER_PROBE, first, beir], capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1]
    assert all(not v["preretrieval"] and v["ndcg@10"] > 0 for v in outs[0].values()), outs[0]


MAX_MODULE_LINES = 450   # issue 39: a module a reader can hold in mind; nbdev's generated index (_modidx.py) is not a module of code


def test_no_module_is_over_the_line_budget():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "finrag").rglob("*.py")
            if p.name != "_modidx.py" and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines (split the notebook: a new `default_exp`): {long}"


def wide_functions(folder=LIB, at_least: int = 10) -> dict:
    "{'module:function': number of parameters} of the functions of `folder` taking at least `at_least` (self, cls excluded; *args, **kw count one each)."
    out = {}
    for p in sorted(Path(folder).rglob("*.py")):
        if p.name == "_modidx.py": continue
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = n.args
                k = len([x for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]) + bool(a.vararg) + bool(a.kwarg)
                if k >= at_least: out[f"{p.relative_to(folder)}:{n.name}"] = k
    return out


def test_constructors_take_config_records_not_a_dozen_keywords():
    "Issue 39: at most 5 functions take 10 or more parameters and none more than 12 (a settings record `config=` and keyword variants instead)."
    wide = wide_functions()
    assert len(wide) <= 5 and max(wide.values(), default=0) <= 12, wide


def test_the_width_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text("def f(a, b, c, d, e, f, g, h, i, *, j=1, **kw): pass\nclass C:\n    def __init__(self, a): pass\n")
    assert wide_functions(tmp_path) == {"m.py:f": 11}


# ---- one list per name set: a literal list of names spelled in two modules is a second list that can drift ----

NAME = r"[\w.+:@<>-]+"   # a name as finrag's choices spell them ('top-down', 'ce+lexical', 'zsum:auto'); not a sentence


def name_lists(sources: dict, at_least: int = 3) -> dict:
    "{the names, sorted: ['module:line', ...]} of every literal tuple, list or set of `at_least` or more string names in `sources` ({module: its text})."
    import re
    out = {}
    for mod, text in sources.items():
        for n in ast.walk(ast.parse(text)):
            if not isinstance(n, (ast.Tuple, ast.List, ast.Set)) or len(n.elts) < at_least: continue
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) and re.fullmatch(NAME, e.value) for e in n.elts):
                out.setdefault(tuple(sorted(e.value for e in n.elts)), []).append(f"{mod}:{n.lineno}")
    return out


def duplicated_name_lists(sources: dict, at_least: int = 3) -> dict:
    "The name lists of `name_lists` that appear in more than one module (the same names in any order)."
    return {k: v for k, v in name_lists(sources, at_least).items() if len({x.rsplit(":", 1)[0] for x in v}) > 1}


def library_sources() -> dict:
    return {str(p.relative_to(LIB)): p.read_text(encoding="utf-8") for p in sorted(LIB.rglob("*.py"))
            if "__pycache__" not in p.parts and p.name != "_modidx.py"}


def test_no_name_list_is_spelled_in_two_modules():
    "A list of names (a setting's choices, a registry's keys) lives in one module, the paper's settings or the core, and is imported elsewhere."
    dup = duplicated_name_lists(library_sources())
    assert dup == {}, "the same list of names is spelled in more than one module (declare it once and import it): " + \
        "; ".join(f"{list(k)} at {', '.join(v)}" for k, v in dup.items())


def test_the_duplicate_name_list_check_can_fail():
    src = {"a.py": 'MODES = ("vector", "graph", "auto")\nX = ("vector", "graph")\n',
           "b.py": 'def f(m):\n    if m not in ["auto", "graph", "vector"]: raise ValueError(m)\n    return ("not a name", "b", "c"), ("vector", "graph")\n',
           "c.py": 'A = ("x", "y", "z")\nB = ("z", "y", "x")   # one module twice: not a second list elsewhere\n'}
    assert duplicated_name_lists(src) == {("auto", "graph", "vector"): ["a.py:1", "b.py:2"]}
    assert ("vector", "graph") not in duplicated_name_lists(src) and ("graph", "vector") in duplicated_name_lists(src, at_least=2)
    assert duplicated_name_lists({"a.py": 'T = ("top-down", "bottom-up", "hybrid")', "b.py": 'S = ["hybrid", "top-down", "bottom-up"]'}) == \
        {("bottom-up", "hybrid", "top-down"): ["a.py:1", "b.py:1"]}
    assert len(library_sources()) > 50 and any(k == ("extractive", "llm") for k in name_lists(library_sources(), 2))   # it reads the library


# ---- lines in finrag/ hold 120 characters (nbdev's generated `__all__` is nbdev's width, not ours) ----

MAX_LINE = 120


def long_lines(text: str, limit: int = MAX_LINE) -> list:
    "[(line number, characters)] of the lines of `text` over `limit`, except the `__all__` line nbdev writes after `# %% auto #0`."
    lines = text.splitlines()
    return [(i + 1, len(x)) for i, x in enumerate(lines)
            if len(x) > limit and not (x.startswith("__all__ = [") and i and lines[i - 1] == "# %% auto #0")]


def test_lines_hold_120_characters():
    over = {m: long_lines(s) for m, s in library_sources().items()}
    bad = {m: v[:3] for m, v in over.items() if v}
    assert not bad, f"lines over {MAX_LINE} characters (wrap them in the notebook, then nbdev-export): {bad}"


def test_the_line_check_can_fail():
    allx = "x = 1\n# %% auto #0\n__all__ = [" + "'a', " * 40 + "]\n"
    assert long_lines(allx) == []                                 # nbdev's own line
    assert long_lines("y = '" + "b" * 130 + "'\n") == [(1, 136)]
