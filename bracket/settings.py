"""Where Bracket keeps things, read once from ``.env`` and ``BRACKET_*`` variables.

This is the only module that reads ``os.environ`` for paths and URLs. ``.env`` in the
project root is loaded with python-dotenv without overriding variables already set in
the real environment, so ``BRACKET_RUNS_DIR=/big/disk python app.py`` always wins.

Every default is relative to the project (``runs/``, ``vendor/``, ``.venv/``); no path of
any particular machine is written here. Every path handed out is absolute (a relative
``BRACKET_*`` value is taken from the project folder), and :func:`absolute_path` is the one
way a path a person types (a CLI argument, a form field) becomes absolute: no command
Bracket writes or launches depends on the folder it was started from.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from os import PathLike, fspath
from os.path import expanduser, normpath
from pathlib import Path

from dotenv import load_dotenv

from bracket.errors import BracketError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_ENV_LOADED = False
_ENV_ERROR: str | None = None  # the damaged .env's message, raised again on every read


def load_env_file(path: Path | None = None) -> None:
    """Load ``.env`` once (or ``path``), never overriding the real environment. A damaged file
    raises its one ``BracketError`` on every read, so a caller that swallows it cannot make a
    later read go on without the file."""
    global _ENV_LOADED, _ENV_ERROR
    if _ENV_LOADED and path is None and _ENV_ERROR is None:
        return  # a damaged file is read again on every call: it raises until it is fixed
    env_path = path or PROJECT_ROOT / ".env"
    _ENV_LOADED, _ENV_ERROR = True, None
    if env_path.is_file():
        try:
            text = env_path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            _ENV_ERROR = (f"{env_path} cannot be read as UTF-8 text ({type(error).__name__}); fix or remove "
                          "it (it holds BRACKET_* settings, one NAME=value a line).")
            raise BracketError(_ENV_ERROR) from None
        if "\0" in text:
            _ENV_ERROR = (f"{env_path} holds a NUL byte, which no setting may contain; fix or remove that "
                          "line (one NAME=value a line).")
            raise BracketError(_ENV_ERROR)
        load_dotenv(stream=io.StringIO(text), override=False)


def env(name: str, default: str = "") -> str:
    """The value of ``name`` (a ``BRACKET_*`` variable) after ``.env`` was loaded."""
    load_env_file()
    return os.environ.get(name, default).strip()


def absolute_path(value: str | PathLike[str], base: Path | None = None) -> Path:
    """``value`` with ``~`` expanded, made absolute against ``base`` (default: the current
    folder) and normalised; the file system is not touched."""
    path = Path(expanduser(fspath(value)))
    if not path.is_absolute():
        path = (base if base is not None else Path.cwd()) / path
    return Path(normpath(path))


def venv_python(venv: Path, *, os_name: str | None = None) -> Path:
    """The python of the virtualenv ``venv``: ``Scripts\\python.exe`` on Windows, ``bin/python`` elsewhere."""
    if (os_name or os.name) == "nt":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


@dataclass(frozen=True)
class Settings:
    """Resolved paths and URLs; build one with :func:`get_settings`."""

    runs_dir: Path
    sd_scripts_dir: Path
    musubi_dir: Path
    sd_scripts_python: Path
    musubi_python: Path
    ai_toolkit_dir: Path
    ai_toolkit_python: Path
    demo_python: Path
    demo_data_dir: Path
    storage_url: str


def get_settings() -> Settings:
    """Read the current settings (cheap; call it where a default is needed)."""
    def path(name: str, default: Path | str) -> Path:
        return absolute_path(env(name) or default, PROJECT_ROOT)

    vendor = PROJECT_ROOT / "vendor"
    sd_dir = path("BRACKET_SD_SCRIPTS_DIR", vendor / "sd-scripts")
    musubi_dir = path("BRACKET_MUSUBI_DIR", vendor / "musubi-tuner")
    ai_toolkit_dir = path("BRACKET_AI_TOOLKIT_DIR", vendor / "ai-toolkit")
    runs_dir = path("BRACKET_RUNS_DIR", PROJECT_ROOT / "runs")
    if runs_dir.exists() and not runs_dir.is_dir():
        raise BracketError(f"BRACKET_RUNS_DIR {runs_dir} is a file, not a folder; set it to a folder (it is made "
                           "when missing), or give --out FOLDER.")
    return Settings(
        runs_dir=runs_dir,
        sd_scripts_dir=sd_dir,
        musubi_dir=musubi_dir,
        sd_scripts_python=path("BRACKET_SD_SCRIPTS_PYTHON", venv_python(sd_dir / ".venv")),
        musubi_python=path("BRACKET_MUSUBI_PYTHON", venv_python(musubi_dir / ".venv")),
        ai_toolkit_dir=ai_toolkit_dir,
        ai_toolkit_python=path("BRACKET_AI_TOOLKIT_PYTHON", venv_python(ai_toolkit_dir / ".venv")),
        demo_python=path("BRACKET_DEMO_PYTHON", sys.executable),
        demo_data_dir=path("BRACKET_DEMO_DATA_DIR", runs_dir / "demo-data"),
        storage_url=env("BRACKET_STORAGE_URL"),
    )

