"""``python -m bracket``: the headless command line (see ``bracket.cli``)."""

import os
import sys

from bracket.cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:  # `python -m bracket presets | head`: the reader left; end quietly
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 0
sys.exit(code)
