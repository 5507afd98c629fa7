"""`python -m evalctl`: the same as the `evalctl` command."""

from __future__ import annotations

from evalctl.cli import main

raise SystemExit(main())
