"""Execute notebooks top to bottom in a fresh Jupyter kernel and keep their outputs (`make notebooks`).

    python tools/execute_notebooks.py [NOTEBOOK ...] [--llm TIER] [--out-dir DIR] [--check] [--timeout S]

Default: every lesson notebook (`nbs/*.ipynb`; the papermill experiments in `nbs/experiments/` are executed by
`finrag reproduce`). Each notebook runs as the tests run it: a new kernel of this environment (kernelspec `python3`,
see tools/lab.py), the notebook's folder as working directory, `IN_TEST=1`, cells flagged `#| notest` / `#| slow`
(pyproject `tst_flags`) or `#| eval: false` skipped (their outputs are cleared), an empty cache (a temporary
`FINRAG_CACHE_DIR`: nothing relies on a developer's LLM cache), progress bars off, and the LLM tier `--llm`
(`FINRAG_LLM`; default the tiny `smollm2-135m`, as in the tests).

Outputs that depend on the machine are not kept: stderr (warnings, progress), widget views, absolute paths of this
checkout, of temporary folders and of the home folder (replaced by `<repo>`, `<tmp>`, `~`), durations (`0.42 s`,
`12 ms`, `3.1 s/query` → `… s`; `build_seconds=0.03`, `latency_s=0.04` in reprs → `=…`), execution counts. The notebook is re-read just before writing and only the outputs of
cells whose id and source are unchanged are replaced, so edits made meanwhile are kept.

`--check` executes without writing (exit 1 if a notebook fails). `--out-dir` writes the executed notebooks there
instead of in place. Prints one line per notebook with its wall time, and warns about long text outputs (the
repository quotes datasets only briefly).

`--experiments` executes nothing: it copies the outputs of the papermill runs `finrag reproduce` wrote
(`runs/<name>.ipynb`) into the experiment notebooks `nbs/experiments/<name>.ipynb`, by cell id and source, scrubbed the
same way — the source notebooks keep their own parameters cell and never get papermill's injected one.
"""
from __future__ import annotations
import argparse, copy, json, os, re, subprocess, sys, tempfile, time, tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab import register_kernel  # noqa: E402


def lesson_notebooks() -> list[Path]:
    "The lesson notebooks: `nbs/*.ipynb` without a leading `_`."
    return sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith("_"))


def skip_flags() -> list[str]:
    "The test flags of pyproject `[tool.nbdev] tst_flags` (cells carrying one are not executed)."
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["nbdev"]
    return str(cfg.get("tst_flags", "notest")).split()


def skipped(src: str, flags: list[str]) -> bool:
    "True for a cell flagged with one of `flags` (`#| notest`) or `#| eval: false`."
    for line in src.splitlines():
        m = re.match(r"\s*#\s*\|\s*(.*)$", line)
        if not m: continue
        words = m.group(1).replace(":", " ").split()
        if any(w in flags for w in words): return True
        if words[:2] == ["eval", "false"]: return True
    return False


_DUR = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(\s?)(ms|µs|us|ns|s|sec|secs|seconds|min)(?![\w])")
_RATE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(\s?)([A-Za-z]+/s)(?![\w])")          # 26 docs/s, 2,475 rows/s
_SECONDS_LINE = re.compile(r"(\bseconds?\b[^:\n]{0,40}:)([^\n]*)")                        # seconds per stage: load 0.02, ...
_REPORT_SECONDS = re.compile(r"(?m)^(\s*seconds\s{2,})(.*)$")                                 # a report's row: `  seconds     0.50 retrieving + 1.25 answering`
_KW_SECONDS = re.compile(r"\b(\w*seconds|\w+_s|ms_per_query)=(\d[\d.]*(?:e[-+]?\d+)?)")        # reprs: build_seconds=3.4e-05, latency_s=0.04
_KEY_SECONDS = re.compile(r"""(['"]\w*(?:runtime|_per_second|seconds)['"]: )(['"]?)\d[\d.]*(?:e[-+]?\d+)?\2""")  # the trainer's log: 'train_runtime': '17.03'


def scrub_text(s: str, tmp_roots: list[str]) -> str:
    "Replace absolute paths and durations in an output text (see the module docstring)."
    s = s.replace(str(ROOT), "<repo>")
    for t in tmp_roots: s = re.sub(re.escape(t) + r"[^\s'\"),\]]*", "<tmp>", s)
    s = s.replace(str(Path.home()), "~")
    s = _SECONDS_LINE.sub(lambda m: m.group(1) + re.sub(r"\d+\.\d+", "…", m.group(2)), s)
    s = _REPORT_SECONDS.sub(lambda m: m.group(1) + re.sub(r"\d+(?:\.\d+)?", "…", m.group(2)), s)
    s = _KW_SECONDS.sub(lambda m: f"{m.group(1)}=…", s)
    s = _KEY_SECONDS.sub(lambda m: f"{m.group(1)}{m.group(2)}…{m.group(2)}", s)
    s = _RATE.sub(lambda m: f"…{m.group(1)}{m.group(2)}", s)
    return _DUR.sub(lambda m: f"…{m.group(1)}{m.group(2)}", s)


def scrub_outputs(outputs: list, tmp_roots: list[str]) -> list:
    "Machine-independent outputs: no stderr, no widgets, no execution counts, paths and durations replaced."
    keep = []
    for o in outputs:
        if o.get("output_type") == "stream":
            if o.get("name") == "stderr": continue
            txt = o["text"] if isinstance(o["text"], str) else "".join(o["text"])
            o = dict(o, text=scrub_text(txt, tmp_roots))
        elif o.get("output_type") in ("execute_result", "display_data"):
            data = {k: v for k, v in o.get("data", {}).items() if "widget" not in k}
            if not data or set(data) == {"text/plain"} and re.search(r"\d+%\|", "".join(data["text/plain"])): continue
            for k in ("text/plain", "text/html", "text/markdown"):
                if k in data: data[k] = scrub_text(data[k] if isinstance(data[k], str) else "".join(data[k]), tmp_roots)
            o = dict(o, data=data, metadata={})
            if "execution_count" in o: o["execution_count"] = None
        keep.append(o)
    return keep


def execute(path: Path, env: dict, timeout: int = 600, flags: list[str] | None = None) -> tuple[dict, float]:
    """Run notebook `path` in a fresh kernel, skipping cells flagged with one of `flags` (default: `skip_flags()`); return
    (executed notebook with every cell, seconds). Raises `nbclient.exceptions.CellExecutionError` naming the failing cell."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    flags = skip_flags() if flags is None else flags
    run = copy.deepcopy(nb)
    run.cells = [c for c in run.cells if not (c.cell_type == "code" and skipped(c.source, flags))]
    old = dict(os.environ)
    os.environ.clear(); os.environ.update(env)      # the kernel inherits this process's environment
    try:
        t0 = time.perf_counter()
        from finrag.reproduce import kernel_manager_class     # IPC sockets: no "TCP without encryption" warning
        NotebookClient(run, kernel_name="python3", timeout=timeout, allow_errors=False, kernel_manager_class=kernel_manager_class(),
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        secs = time.perf_counter() - t0
    finally:
        os.environ.clear(); os.environ.update(old)
    done = {c.get("id"): c for c in run.cells}
    for c in nb.cells:
        if c.cell_type != "code": continue
        c.outputs = done[c.get("id")].outputs if c.get("id") in done else []
    return nb, secs


def write_outputs(path: Path, executed: dict, dst: Path, tmp_roots: list[str]) -> int:
    "Copy the scrubbed outputs of `executed` into the current file `path` (by cell id, same source only), write `dst`."
    cur = json.loads(path.read_text(encoding="utf-8"))
    ex = {c.get("id"): c for c in executed["cells"]}
    n = 0
    for c in cur["cells"]:
        if c["cell_type"] != "code": continue
        e = ex.get(c.get("id"))
        if e is None or "".join(c["source"]) != e["source"]: continue
        c["outputs"] = scrub_outputs([dict(o) for o in e["outputs"]], tmp_roots)
        c["execution_count"] = None
        n += bool(c["outputs"])
        for o in c["outputs"]:
            txt = o.get("text") or o.get("data", {}).get("text/plain") or ""
            if len(txt if isinstance(txt, str) else "".join(txt)) > 5000:
                print(f"  warning: {path.name} cell {c.get('id')}: a {len(txt)}-character text output; keep outputs short", flush=True)
    cur.setdefault("metadata", {}).setdefault("kernelspec", {"display_name": "python3", "language": "python", "name": "python3"})
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(cur, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    # nbdev-clean with the project's [tool.nbdev] settings (keeps outputs, strips noisy metadata): no churn later
    subprocess.run([str(Path(sys.executable).parent / "nbdev-clean"), "--fname", str(dst)], cwd=ROOT, check=True, capture_output=True)
    return n


def copy_experiment_outputs() -> int:
    "`--experiments`: outputs of `runs/<name>.ipynb` (finrag reproduce, production defaults) → `nbs/experiments/<name>.ipynb`."
    import nbformat
    missing = 0
    for p in sorted((ROOT / "nbs" / "experiments").glob("*.ipynb")):
        run = ROOT / "runs" / p.name
        if not run.exists():
            print(f"no {run.relative_to(ROOT)}: run `finrag reproduce` for {p.stem} first"); missing += 1; continue
        ex = nbformat.read(run, as_version=4)
        n = write_outputs(p, ex, p, sorted({tempfile.gettempdir(), "/tmp"}, key=len, reverse=True))
        print(f"{run.relative_to(ROOT)} -> {p.relative_to(ROOT)} ({n} cells with output)")
    return 1 if missing else 0


def kernel_env(cache_dir: str, llm: str) -> dict:
    "The environment of the fresh kernels (see the module docstring)."
    env = register_kernel()
    env.update(IN_TEST="1", TQDM_DISABLE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               RAGAS_DO_NOT_TRACK="true", FINRAG_CACHE_DIR=cache_dir, MPLBACKEND="module://matplotlib_inline.backend_inline")
    env["FINRAG_LLM"] = llm
    for k in ("FINRAG_LLM_BASE_URL", "FINRAG_LLM_MODEL", "FINRAG_LLM_API_KEY", "FINRAG_SETTINGS"): env.pop(k, None)
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: every lesson notebook nbs/*.ipynb)")
    ap.add_argument("--llm", default="smollm2-135m", help="LLM tier (FINRAG_LLM) of the run; default: smollm2-135m (tiny)")
    ap.add_argument("--out-dir", default=None, help="write executed notebooks here instead of in place")
    ap.add_argument("--check", action="store_true", help="execute only; write nothing")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    ap.add_argument("--experiments", action="store_true", help="copy outputs of runs/<name>.ipynb into nbs/experiments/<name>.ipynb")
    a = ap.parse_args(argv)
    if a.experiments: return copy_experiment_outputs()
    nbs = [Path(p).resolve() for p in a.notebooks] or lesson_notebooks()
    from nbclient.exceptions import CellExecutionError
    failed = []
    with tempfile.TemporaryDirectory(prefix="finrag-nbexec-") as tmp:
        env = kernel_env(str(Path(tmp) / "cache"), a.llm)
        tmp_roots = sorted({tempfile.gettempdir(), "/tmp", "/var/folders"}, key=len, reverse=True)
        for p in nbs:
            try: nb, secs = execute(p, env, a.timeout)
            except CellExecutionError as e:
                failed.append(p.name)
                msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
                tb = [i for i, l in enumerate(msg) if "Traceback" in l or l.startswith("----> ")]
                show = msg[:12] + ["  ..."] + msg[tb[-1]:][:12] if tb else msg[-25:]   # the cell, then where it failed
                print(f"FAILED {p.relative_to(ROOT)}:\n  " + "\n  ".join(show), flush=True)
                continue
            if a.check: print(f"{secs:7.1f}s  {p.relative_to(ROOT)}", flush=True); continue
            dst = Path(a.out_dir).resolve() / p.name if a.out_dir else p
            n = write_outputs(p, nb, dst, tmp_roots)
            print(f"{secs:7.1f}s  {p.relative_to(ROOT)} -> {dst.relative_to(ROOT) if dst.is_relative_to(ROOT) else dst} ({n} cells with output)", flush=True)
    if failed: print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
