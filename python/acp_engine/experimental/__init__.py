"""Experimental ACP APIs: :mod:`acp_engine.experimental.v2`, the version 2 draft."""
