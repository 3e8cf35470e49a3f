"""``python -m bracket``: the headless command line (see ``bracket.cli``)."""

import sys

from bracket.cli import main

sys.exit(main())
