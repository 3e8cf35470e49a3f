"""The Windows twin of an exported ``train.sh``: a PowerShell script, every value quoted.

:func:`powershell_script` writes what :func:`bracket.report.export.shell_script` writes for bash —
the header, ``cd`` into the run's folder, the environment the adapter set (never a secret),
the command — for Windows PowerShell 5.1 and PowerShell 7. Two layers of quoting:

* **PowerShell**: every value is a single-quoted string, in which nothing is expanded
  (``$``, backticks, ``;``, ``"`` and newlines are literal); only the single quote itself is
  special and is doubled — including the typographic quotes ‘ ’ ‚ ‛ that PowerShell also
  accepts as single quotes.
* **The program's command line**: Windows hands a program one string, which it splits
  again (the C runtime's rules: spaces separate, ``"`` groups, backslashes escape only before
  a ``"``). PowerShell 5.1 passes arguments holding ``"`` or empty strings wrongly to native
  programs, so the script does not let PowerShell build that string: Bracket builds it with
  :func:`subprocess.list2cmdline` (the same rules Python's ``subprocess`` uses on Windows),
  one quoted argument per line, and the script hands it to ``System.Diagnostics.Process``
  unchanged.

The file is UTF-8 with a byte-order mark (Windows PowerShell 5.1 reads a ``.ps1`` without one
in the ANSI code page, which would garble a path like ``Données d'été``). Run it with
``powershell -ExecutionPolicy Bypass -File train.ps1`` (or ``pwsh -File train.ps1``).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath

SCRIPT_NAME = "train.ps1"
#: characters PowerShell reads as a single quote (U+0027, U+2018, U+2019, U+201A, U+201B)
_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def ps_quote(value: object) -> str:
    """``value`` as a PowerShell single-quoted string literal (nothing inside is expanded)."""
    text = str(value)
    return "'" + "".join(ch * 2 if ch in _SINGLE_QUOTES else ch for ch in text) + "'"


def windows_argument(argument: object) -> str:
    """One argument quoted for a Windows command line (C runtime / ``CommandLineToArgvW`` rules)."""
    return subprocess.list2cmdline([str(argument)])


def _comment(text: object) -> str:
    return "# " + " ".join(str(text).split())  # a newline in a value cannot end the comment


def _arguments(variable: str, arguments: Sequence[str]) -> list[str]:
    return [f"{variable} = @(", *[f"    {ps_quote(windows_argument(arg))}" for arg in arguments], ") -join ' '"]


#: runs one program with one prepared command line in the current folder; returns its exit code
_INVOKE = [
    "function Invoke-Step([string]$Program, [string]$Arguments) {",
    "    $Start = New-Object System.Diagnostics.ProcessStartInfo",
    "    $Start.FileName = $Program",
    "    $Start.Arguments = $Arguments",
    "    $Start.UseShellExecute = $false",
    "    $Start.WorkingDirectory = (Get-Location).ProviderPath",
    "    $Process = [System.Diagnostics.Process]::Start($Start)",
    "    $Process.WaitForExit()",
    "    return $Process.ExitCode",
    "}",
]


def _setup_lines(number: int, command: Sequence[object], folder: PurePath, cwd: PurePath) -> list[str]:
    """One setup step: its program and arguments, run in ``folder``; a failure ends the script."""
    lines = [f"$SetupProgram{number} = {ps_quote(command[0])}",
             *_arguments(f"$Setup{number}", [str(a) for a in command[1:]])]
    moved = str(folder) != str(cwd)
    lines += [f"Push-Location -LiteralPath {ps_quote(folder)}"] if moved else []
    lines.append(f"$Code = Invoke-Step $SetupProgram{number} $Setup{number}")
    lines += ["Pop-Location"] if moved else []
    lines.append("if ($Code -ne 0) { exit $Code }")
    return lines


def powershell_script(command: Sequence[object], cwd: Path | PurePath, env: Mapping[str, str], *,
                      header: Sequence[str] = (), dropped_env: Sequence[str] = (),
                      alternative: tuple[Sequence[PurePath], Sequence[object]] | None = None,
                      setup: Sequence[tuple[Sequence[object], PurePath]] = ()) -> str:
    """A PowerShell script that runs ``command`` in ``cwd`` with ``env``; every value is quoted.
    ``setup`` — (command, folder) pairs run first, stopping at the first that fails (an export's
    caching); ``alternative`` — (folders, command): while every folder exists run that command
    instead, without ``setup`` (an export's optional speed-up, the session's caches; same program)."""
    program, arguments = str(command[0]), [str(a) for a in command[1:]]
    lines = [_comment(h) for h in header]
    lines.append(_comment(f"Run: powershell -ExecutionPolicy Bypass -File {SCRIPT_NAME}"))
    lines += [_comment(f"{name} is not written here (it looks like a secret); set $env:{name} yourself if "
                       "the trainer needs it.") for name in dropped_env]
    lines += ["$ErrorActionPreference = 'Stop'", f"Set-Location -LiteralPath {ps_quote(cwd)}"]
    lines += [f"$env:{name} = {ps_quote(value)}" for name, value in env.items() if _ENV_NAME.fullmatch(name)]
    lines += _INVOKE
    lines.append(f"$Program = {ps_quote(program)}")
    lines.append("# one argument per line, already quoted for the program's command line")
    lines += _arguments("$Arguments", arguments)
    steps = [line for number, (words, folder) in enumerate(setup, 1)
             for line in _setup_lines(number, words, folder, cwd)]
    if alternative is not None:
        folders, other = alternative
        test = " -and ".join(f"(Test-Path -LiteralPath {ps_quote(folder)} -PathType Container)" for folder in folders)
        lines.append("# optional speed-up: the session's caches, used only while they are all still there")
        lines.append(f"if ({test}) {{")
        lines += ["    " + line for line in _arguments("$Arguments", [str(a) for a in other[1:]])]
        lines += ["} else {", *["    " + line for line in steps], "}"] if steps else ["}"]
    else:
        lines += steps
    lines += ["exit (Invoke-Step $Program $Arguments)", ""]
    return "\n".join(lines)


def write_powershell_script(path: Path, command: Sequence[object], cwd: Path | PurePath,
                            env: Mapping[str, str], *, header: Sequence[str] = (),
                            dropped_env: Sequence[str] = ()) -> Path:
    """Write :func:`powershell_script` to ``path`` as UTF-8 with a BOM and LF line ends."""
    text = powershell_script(command, cwd, env, header=header, dropped_env=dropped_env)
    with open(path, "w", encoding="utf-8-sig", newline="\n") as handle:
        handle.write(text)
    return Path(path)
