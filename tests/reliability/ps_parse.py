"""Read back what bracket.report.powershell writes, by the rules PowerShell and Windows apply (no pwsh here).

* :func:`ps_literals` — the single-quoted string literals of a script, in order, with the
  text before each on its line (``#`` comments skipped), decoded as PowerShell does: any of
  ' ‘ ’ ‚ ‛ delimits, and two of them in a row inside the string stand for the first one.
* :func:`crt_split` — a Windows command line split into arguments by the C runtime's rules
  (``CommandLineToArgvW``): blanks separate, ``"`` toggles quoting, 2n backslashes before a
  ``"`` are n backslashes, 2n+1 are n and a literal ``"``, other backslashes are literal.
* :func:`read_launcher` — program, arguments, folder and environment of a ``train.ps1``, and the
  (program, arguments) of each command it runs before training.
"""

from __future__ import annotations

from pathlib import Path

QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_literals(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    i, line_start = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            i += 1
            line_start = i
        elif ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif ch in QUOTES:
            prefix = text[line_start:i].strip()
            value, i = [], i + 1
            while True:
                if i >= len(text):
                    raise AssertionError("unterminated PowerShell string")
                if text[i] in QUOTES:
                    if i + 1 < len(text) and text[i + 1] in QUOTES:
                        value.append(text[i])
                        i += 2
                        continue
                    i += 1
                    break
                value.append(text[i])
                i += 1
            found.append((prefix, "".join(value)))
        else:
            i += 1
    return found


def crt_split(line: str) -> list[str]:
    args: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            return args
        current: list[str] = []
        quoted = False
        while i < n and (quoted or line[i] not in " \t"):
            if line[i] == "\\":
                j = i
                while j < n and line[j] == "\\":
                    j += 1
                count = j - i
                if j < n and line[j] == '"':
                    current.append("\\" * (count // 2))
                    if count % 2:
                        current.append('"')
                        j += 1
                    i = j
                else:
                    current.append("\\" * count)
                    i = j
            elif line[i] == '"':
                quoted = not quoted
                i += 1
            else:
                current.append(line[i])
                i += 1
        args.append("".join(current))


def read_launcher(path: Path) -> dict:
    raw = Path(path).read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "train.ps1 must be UTF-8 with a BOM (Windows PowerShell 5.1)"
    text = raw[3:].decode("utf-8")
    literals = ps_literals(text)
    env = {prefix[len("$env:"):].rstrip(" =").strip(): value for prefix, value in literals
           if prefix.startswith("$env:")}
    program = next(value for prefix, value in literals if prefix.startswith("$Program"))
    cwd = next(value for prefix, value in literals if prefix.startswith("Set-Location -LiteralPath"))
    start = text.index("$Arguments = @(")
    end = text.index(") -join ' '", start)
    pieces = [value for _, value in ps_literals(text[start + len("$Arguments = @("):end])]
    setup, number = [], 1
    while f"$SetupProgram{number} = " in text:  # the commands run before training (an export's caching)
        step_program = next(value for prefix, value in literals if prefix == f"$SetupProgram{number} =")
        first = text.index(f"$Setup{number} = @(")
        last = text.index(") -join ' '", first)
        words = [value for _, value in ps_literals(text[first + len(f"$Setup{number} = @("):last])]
        setup.append((step_program, crt_split(" ".join(words))))
        number += 1
    return {"text": text, "program": program, "cwd": cwd, "env": env, "pieces": pieces,
            "arguments": crt_split(" ".join(pieces)), "setup": setup}
