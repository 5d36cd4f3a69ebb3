"""``merge``: the trials of several results directories of one experiment (e.g.
shards) into one, none twice."""

from __future__ import annotations

import argparse
from typing import Any

from ..display import short
from . import HELP
from .errors import fail
from .paths import input_store, output_dir


def add_parser(sub: Any) -> None:
    m = sub.add_parser(
        "merge",
        help=HELP["merge"],
        description="Copy into DEST the trials of each SRC that DEST lacks; a trial "
        "already in DEST is never copied twice.",
    )
    m.add_argument("dest", metavar="DEST", help="results directory to merge into")
    m.add_argument("sources", metavar="SRC", nargs="+", help="results directories to merge")


def run(args: argparse.Namespace) -> int:
    from ..store import Store, StoreError, schema_version

    # Every source (and DEST) checked before anything is merged: a bad second source
    # must not leave the first one merged.
    dest_path = output_dir("DEST", args.dest, "results/NAME")
    names: dict[str, str] = {}
    for src in args.sources:
        p = input_store("SRC", src)
        if p.resolve() == dest_path.resolve():
            fail(f"SRC: {short(src, 60)}: is DEST itself")
        try:
            st = Store(p)
            names[src] = st.meta().get("experiment")
            if st.schema_version() != schema_version():  # DEST is written in this one
                fail(
                    f"SRC: {st.path} holds results of schema version {st.schema_version()};"
                    f" this collateral writes version {schema_version()}: merging would mix"
                    " two schemas; run the experiment again into a new directory"
                )
        except StoreError as e:
            fail(f"SRC: {e}")
    if (dest_path / "store.json").exists():
        try:
            names[args.dest] = Store(dest_path).meta().get("experiment")
        except StoreError as e:
            fail(f"DEST: {e}")
    if len(set(names.values())) > 1:
        shown = ", ".join(f"{k} holds {v!r}" for k, v in names.items())
        fail(f"merge: not one experiment: {shown}")
    try:
        name = names[args.sources[0]]
        dest = Store.create(args.dest, name)
        dest.lock()
        try:
            added, skipped = dest.merge(args.sources)
            dest.write_views_sql()
        finally:
            dest.unlock()
    except StoreError as e:
        fail(f"merge: {e}")
    print(f"merged {added:,} trials into {args.dest} ({skipped:,} already there)")
    return 0
