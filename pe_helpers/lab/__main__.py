"""``python -m pe_helpers.lab``: see :mod:`pe_helpers.lab.cli`."""

import sys

from .cli import main

sys.exit(main())
