"""Where the report's results come from: the package's and the trials' code versions,
when the report was written, and on what machine."""

from __future__ import annotations

import datetime as dt
import os
import platform
from typing import Any

from .sections import Section


def metadata(stores: list[Any], sections: list[Section]) -> list[tuple[str, str]]:
    from .. import __version__

    versions: set[str] = set()
    for st in stores:
        try:
            df = st.query("SELECT DISTINCT code_version FROM summary")
            versions |= {str(v) for v in df["code_version"].dropna()}
        except Exception:  # an empty store has no summary view
            pass
    cpu = os.cpu_count() or 0
    return [
        ("collateral", __version__),
        ("code version of the trials", "; ".join(sorted(versions)) or "—"),
        ("report written", f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"),
        (
            "machine",
            f"{platform.node() or '—'} · {platform.system()} {platform.machine()} · {cpu} CPUs"
            f" · Python {platform.python_version()}",
        ),
        (
            "results",
            f"{len(sections)} directories, {sum(s.trials for s in sections):,} trials",
        ),
    ]
