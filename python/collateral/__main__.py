"""``python -m collateral`` runs the CLI (as the ``collateral`` script does)."""

from .cli import main

raise SystemExit(main())
