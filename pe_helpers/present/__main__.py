"""``python -m pe_helpers.present NB``: the present-mode launcher (see :mod:`pe_helpers.present`)."""

from . import main

raise SystemExit(main())
