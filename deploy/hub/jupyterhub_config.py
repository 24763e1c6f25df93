"""JupyterHub's configuration for `make hub` (python -m pe_helpers.hub serve): everything is in
pe_helpers.hub.configure, which reads the PE_HUB_* variables the launcher sets."""

from pe_helpers.hub import configure

configure(c)  # noqa: F821 - `c` is the config object JupyterHub provides to this file
