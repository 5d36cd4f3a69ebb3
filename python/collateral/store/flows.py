"""The ``flows`` view: the summary's wide per-flow columns (``tcp0_goodput_bps``,
``cbr1_delay_p95_s``, ``web0_pages_completed``) as one row per trial and flow, with
the flow's kind, index and direction and the metrics under common names
(``goodput_bps``, ``delay_p95_s``). Its columns come from the declared schema
(:func:`collateral.schema.flow_columns`); which flows a store holds, from the summary's
columns. A flow's labels are its parameter columns (``tcp0_direction``, ``tcp0_cc``; a group given
as one table rather than a list, as a single call's ``media = {...}``, has them without
the index: ``media_direction``, and the call's ``cc`` is its ``controller``), the
direction else the stored scenario's (``scenario``: ``$.tcp[0].direction``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .sandbox import sql_str
from .tables import IDENTITY_COLUMNS

#: The trial's columns each flow row repeats (join ``summary`` on ``key`` for the rest).
TRIAL_IDS = ("key", "point", "rep", "seed")
#: A real-time flow without an application profile is plain CBR: its ``app``.
PLAIN_CBR = "cbr"
_SQL_TYPES = {
    "float64": "DOUBLE",
    "uint64": "UBIGINT",
    "uint32": "UINTEGER",
    "uint8": "UTINYINT",
    "string": "VARCHAR",
}


#: A label whose parameter has another name in the scenario: (group, label) -> parameter.
_PARAMETER_OF = {("media", "cc"): "controller"}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def flows_view_sql(names: Iterable[str]) -> str:
    """``CREATE VIEW flows`` over the view ``summary``, whose columns are ``names``."""
    from ..schema import flow_columns, flow_groups, flow_labels

    have = set(names)
    metrics = flow_columns()
    labels = {
        x: c["dtype"]
        for g in flow_groups()
        for c in g["columns"]
        if (x := c["name"]) in flow_labels(g)
    }
    selects = []
    for g in flow_groups():
        key, prefix = g["key"], g["prefix"]
        own = {c["name"] for c in g["columns"]}
        found = re.compile("^" + re.escape(prefix).replace(re.escape("{i}"), r"(\d+)"))
        indices = sorted({int(m[1]) for n in have if (m := found.match(n))})
        for i in indices:
            p = prefix.replace("{i}", str(i))
            cols = [_ident(c) for c in TRIAL_IDS if c in have]
            cols += [f"{sql_str(key)} AS kind", f"{i}::UINTEGER AS flow_index"]
            cols.append(f"{sql_str(p.rstrip('_'))} AS name")
            for lab in labels:
                param = _PARAMETER_OF.get((key, lab), lab)
                # The list's column, or the single table's for the first flow.
                names = [p + param] + ([f"{key}_{param}"] if i == 0 else [])
                found = [_ident(n) for n in names if lab in own and n in have]
                if lab == "direction" and "scenario" in have:
                    paths = [f"$.{key}[{i}].direction"] + ([f"$.{key}.direction"] if i == 0 else [])
                    found += [f"json_extract_string(scenario, {sql_str(x)})" for x in paths]
                src = (
                    "NULL"
                    if not found
                    else found[0]
                    if len(found) == 1
                    else (f"coalesce({', '.join(found)})")
                )
                cols.append(f"{src}::{_SQL_TYPES[labels[lab]]} AS {_ident(lab)}")
            if key == "cbr":
                app = _ident(f"{p}app") if f"{p}app" in have else "NULL"
                cols.append(f"coalesce({app}, {sql_str(PLAIN_CBR)}) AS app")
            else:
                cols.append("NULL::VARCHAR AS app")
            for m, c in metrics.items():
                src = _ident(p + m) if m in own and p + m in have else "NULL"
                cols.append(f"{src}::{_SQL_TYPES[c['dtype']]} AS {_ident(m)}")
            # Points of other sweeps may have fewer flows: their rows have none here.
            count = f"{key}_flows"
            where = f"{_ident(count)} > {i}" if count in have else "true"
            single = sorted(n for n in have if n.startswith(f"{key}_") and n != count)
            if i == 0 and single and count in have:
                # A point that gave the group as one table has its columns, no count.
                table = f"{_ident(count)} IS NULL AND {_ident(single[0])} IS NOT NULL"
                where = f"({where} OR ({table}))"
            selects.append(f"SELECT {', '.join(cols)} FROM summary WHERE {where}")
    if not selects:  # no flow at all: the columns, no row
        ids = {c: IDENTITY_COLUMNS[c] for c in TRIAL_IDS}
        cols = [f"NULL::{_SQL_TYPES[t]} AS {_ident(c)}" for c, t in ids.items()]
        cols += ["NULL::VARCHAR AS kind", "NULL::UINTEGER AS flow_index", "NULL::VARCHAR AS name"]
        cols += [f"NULL::{_SQL_TYPES[t]} AS {_ident(x)}" for x, t in labels.items()]
        cols.append("NULL::VARCHAR AS app")
        cols += [f"NULL::{_SQL_TYPES[c['dtype']]} AS {_ident(m)}" for m, c in metrics.items()]
        selects.append(f"SELECT {', '.join(cols)} LIMIT 0")
    return "CREATE OR REPLACE VIEW flows AS " + " UNION ALL ".join(selects)
