"""Start JupyterLab for finrag (`make lab`): register this environment's Python as the `python3` kernel (the kernelspec
every notebook names), then run `jupyter lab` on 127.0.0.1 with the repository as its root.

    python tools/lab.py [jupyter lab arguments, e.g. --no-browser --port 8899]

The kernelspec goes into this environment (`<venv>/share/jupyter/kernels/python3`) and `JUPYTER_PATH` puts that folder
first, so a `python3` kernel registered elsewhere for the user (another Python) cannot shadow it.
"""
from __future__ import annotations
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def register_kernel() -> dict:
    "Install this interpreter's kernelspec as `python3` in `sys.prefix`; return an environment whose JUPYTER_PATH finds it first."
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3",
                    "--display-name", "Python 3 (finrag)"], check=True, capture_output=True)
    share = str(Path(sys.prefix) / "share" / "jupyter")
    rest = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p and p != share]
    return dict(os.environ, JUPYTER_PATH=os.pathsep.join([share, *rest]))


def quiet_settings() -> None:
    "JupyterLab settings for an offline machine: no news feed, no update check (`<venv>/share/jupyter/lab/settings/overrides.json`)."
    f = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    cfg = json.loads(f.read_text()) if f.exists() else {}
    cfg.setdefault("@jupyterlab/apputils-extension:notification", {}).update(fetchNews="false", checkForUpdates=False)
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(cfg, indent=2))


def main(argv: list[str]) -> None:
    env = register_kernel()
    quiet_settings()
    cmd = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={ROOT}",
           "--LabApp.default_url=/lab/tree/nbs", *argv]
    if hasattr(os, "geteuid") and os.geteuid() == 0: cmd.append("--allow-root")   # containers and CI run as root
    os.execvpe(cmd[0], cmd, env)


if __name__ == "__main__":
    main(sys.argv[1:])
