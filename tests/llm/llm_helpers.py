"""Helpers of the LLM adapter tests (run trainer specs, fake-module env, tfevents, inventories)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bracket import settings

FAKES = Path(__file__).resolve().parent / "fakes"
FAKE_SITE = FAKES / "site"
INVENTORIES = Path(__file__).resolve().parent / "inventories"


def write_alpaca(path: Path, rows: int = 60) -> Path:
    lines = [
        json.dumps({"instruction": f"Add {n} and {n + 1}.", "input": "" if n % 2 else "show work",
                    "output": str(2 * n + 1)})
        for n in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def dispatching_python(folder: Path, *, fail_at_rungs: bool = False) -> Path:
    """A 'trainer python' that runs ``llm_generate.py`` (with the fake model modules) or the fake
    trainer; ``fail_at_rungs``: a generation at a rung (its output in ``rungs/step-<N>``) exits 1."""
    path = folder / "bin" / "python"
    path.parent.mkdir(parents=True)
    trainer = FAKES / "fake_llm_trainer.py"
    lines = [f"#!{sys.executable}", "import pathlib, runpy, sys", f"sys.path.insert(0, {str(FAKE_SITE)!r})",
             "if sys.argv[1].endswith('llm_generate.py'):", "    script, sys.argv = sys.argv[1], sys.argv[1:]"]
    if fail_at_rungs:
        lines += ["    if any('/rungs/step-' in pathlib.Path(a).as_posix() for a in sys.argv):",
                  "        sys.exit('FAKE GENERATION ERROR at a rung')"]
    lines += ["else:", f"    script = {str(trainer)!r}", "    sys.argv = [script] + sys.argv[1:]",
              "runpy.run_path(script, run_name='__main__')"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def fake_module_env(**extra: str) -> dict[str, str]:
    """The environment of a trainer-venv script run with the fake modules first on the path."""
    env = {**os.environ, **extra}  # the fake modules stay first even where ``extra`` sets PYTHONPATH
    env["PYTHONPATH"] = os.pathsep.join([str(FAKE_SITE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_spec(spec, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a LaunchSpec the way the runner does (argv list, its cwd and env)."""
    spec.cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(spec.cmd, cwd=spec.cwd, env=spec.env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def read_tags(logging_dir: Path, glob: str = "**/events.out.tfevents.*") -> dict[str, list[tuple[int, float]]]:
    from bracket.session.scoring import read_scalars

    return read_scalars(logging_dir, glob)


def load_inventory(name: str) -> dict:
    return json.loads((INVENTORIES / name).read_text(encoding="utf-8"))


def trainer_venv_python(name: str) -> Path | None:
    """``vendor/<name>/.venv``'s python (made by ``./install.sh --llm-trainers``), or None."""
    venv = settings.PROJECT_ROOT / "vendor" / name / ".venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return python if python.is_file() else None
