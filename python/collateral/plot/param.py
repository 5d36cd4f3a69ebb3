"""The parameters of a summary table (Param, params()): by dotted sweep key, store column
or alias, in display units; derived ones (queue kind, queue limit in bytes or packets);
the sweep keys as the store's experiment file writes them."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import Unit, column_unit, fmt_tick
from ..vocabulary import AQM_INFO

if TYPE_CHECKING:
    import pandas as pd

_IDENTITY = {"key", "point", "rep", "seed", "scenario", "model_version", "code_version", "phases"}


def kind_name(kind: object) -> str:
    """A queue kind as figures name it: the discipline's display name, as the core
    declares it (``fq_codel`` -> FQ-CoDel); no kind is drop-tail."""
    if kind is None:
        return "drop-tail"
    return str(AQM_INFO.get(str(kind), {}).get("display", kind))


@dataclass
class Param:
    """An x, hue, facet or where value: per trial, in human units."""

    key: str
    values: pd.Series  # per row (human units; strings for categories)
    unit: str = ""
    numeric: bool = False
    aliases: list[str] = field(default_factory=list)
    note: str = ""
    error: str | None = None  # why it cannot be plotted (a limit in bytes and packets)
    consumes: str = ""  # a tag column it reads (not listed as a key of its own)
    #: Per row, the discipline the note speaks of (None where it does not apply): the
    #: note is said again over the rows a ``where`` keeps (:meth:`note_over`).
    note_rows: pd.Series | None = None
    order: list[Any] = field(default_factory=list)  # category order

    def note_over(self, keep: Any) -> str:
        """The note over the rows ``keep`` (a boolean mask) only: the disciplines a
        ``--where`` left out are not named, and none left means no note."""
        if self.note_rows is None:
            return self.note
        which = ", ".join(sorted(set(self.note_rows[keep].dropna())))
        return f"{which}{self.note[self.note.index(':') :]}" if which else ""

    @property
    def swept(self) -> bool:
        return self.values.nunique(dropna=False) > 1

    @property
    def name(self) -> str:
        """The key in words, as axes, legends and panels name it (:func:`key_name`)."""
        return key_name(self.key, bool(self.unit))

    @property
    def label(self) -> str:
        return Unit(self.unit).label(self.name)

    def show(self, v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "none"
        if self.numeric:
            return f"{fmt_tick(float(v))} {self.unit}".strip()
        return str(v)


#: Abbreviations written in capitals when a key is put in words.
_ACRONYMS = {"tcp", "cbr", "rtt", "cc", "aqm", "ecn", "mss", "bdp", "owd", "mos"}


def key_name(key: str, has_unit: bool = False) -> str:
    """A dotted key in words: ``down.queue.limit`` -> "down queue limit", ``tcp.cc`` ->
    "TCP CC", ``tcp[1].cc`` -> "TCP 1 CC", ``tags.queue_bytes`` -> "queue bytes"; with
    ``has_unit``, a ``_s`` or ``_bps`` suffix is dropped (the axis shows the unit:
    ``tags.rtt_s`` -> "RTT")."""
    words = [w for w in re.split(r"[.\[\]_]+", key.removeprefix("tags.")) if w]
    if has_unit and len(words) > 1 and words[-1] in ("s", "bps"):
        words = words[:-1]
    return " ".join(w.upper() if w in _ACRONYMS else w for w in words) or key


_GROUPED = re.compile(r"^(tcp|cbr|web|phases|media)(\d+)_(.+)$")
#: Groups a scenario may give as one table (``media = {...}``): ``media_controller``.
_SINGLE = re.compile(r"^(media|workload)_(.+)$")
_UNIT_SUFFIX = re.compile(r"_(s|bps)$")


def _dotted(col: str) -> str:
    """A parameter column as the dotted key an experiment file writes."""
    if col.startswith("tag_"):
        return "tags." + col[4:]
    m = _GROUPED.match(col)
    if m:
        return f"{m[1]}[{m[2]}].{_UNIT_SUFFIX.sub('', m[3])}"
    m = _SINGLE.match(col)
    if m:
        return f"{m[1]}.{_UNIT_SUFFIX.sub('', m[2])}"
    for d in ("down", "up"):
        for sub in ("queue", "framing"):
            if col.startswith(f"{d}_{sub}_"):
                return f"{d}.{sub}.{_UNIT_SUFFIX.sub('', col[len(d) + len(sub) + 2 :])}"
        if col.startswith(f"{d}_"):
            return f"{d}.{_UNIT_SUFFIX.sub('', col[len(d) + 1 :])}"
    return _UNIT_SUFFIX.sub("", col)


def _is_param_column(col: str) -> bool:
    from ..schema import column

    return col not in _IDENTITY and column(col) is None and col not in ("mode",)


def _series_param(key: str, col: str, s: pd.Series) -> Param:
    import pandas as pd

    num = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
    if num:
        u = column_unit(col, s)
        return Param(key, u.of(s.astype(float)), u.name, True)
    vals = s.astype(object).where(s.notna(), None)
    if not pd.api.types.is_string_dtype(s):  # bools, categories ...: as text
        vals = vals.map(lambda v: v if v is None else str(v))
    # In order of first appearance, as dict.fromkeys would give, hashed in C.
    return Param(key, vals, "", False, order=list(pd.unique(vals.dropna())))


def _queue_params(df: pd.DataFrame, d: str) -> list[Param]:
    """``D.queue.kind`` and ``D.queue.limit`` (bytes where every limit is known in bytes)."""
    import pandas as pd

    n = len(df)
    kind_col = df.get(f"{d}_queue_kind", pd.Series([None] * n, index=df.index))
    rule = df.get(f"{d}_queue_rule", pd.Series([None] * n, index=df.index))
    kind = kind_col.astype(object).where(kind_col.notna(), None)
    shown = kind.map(kind_name)
    out = [
        Param(
            f"{d}.queue.kind",
            shown,
            aliases=[f"{d}_queue_kind"],
            order=list(dict.fromkeys(shown)),
            note="the discipline: drop-tail or the AQM's kind",
        )
    ]
    # The limit is stored in one column per unit: bytes (FB rules) or packets.
    cols = [c for c in (f"{d}_queue_limit_bytes", f"{d}_queue_limit_packets") if c in df.columns]
    if not cols:
        return out

    def num(c: str) -> pd.Series:
        if c not in df.columns:
            return pd.Series([float("nan")] * n, index=df.index)
        return pd.to_numeric(df[c], errors="coerce").astype(float)

    in_bytes = num(f"{d}_queue_limit_bytes").notna()
    limit = num(f"{d}_queue_limit_bytes").where(in_bytes, num(f"{d}_queue_limit_packets"))
    bytes_ = limit.where(in_bytes)
    tagged = ""
    for t in (f"tag_{d}_queue_limit_bytes", "tag_queue_limit_bytes"):
        if t in df.columns:
            tv = pd.to_numeric(df[t], errors="coerce").astype(float)
            bytes_ = tv.where(tv.notna(), bytes_)
            tagged = t
    known = limit.notna()
    key = f"{d}.queue.limit"
    if known.any() and bytes_[known].notna().all():
        p = Param(key, bytes_ / 1e3, "kB", True, cols)  # as scaled
        if tagged and (~in_bytes & known).any():
            which = ", ".join(sorted(set(shown[~in_bytes & known])))
            p.note = f"{which}: packet limits shown at the byte sizes swept (packets_of, {tagged})"
            p.note_rows = shown.where(~in_bytes & known)
            p.consumes = tagged
        return [*out, p]
    if known.any() and not in_bytes[known].any():
        return [*out, Param(key, limit, "packets", True, cols)]
    p = Param(key, limit, "", True, cols)
    owner = pd.Series(
        [k if k != "drop-tail" else f"drop-tail {r}" for k, r in zip(shown, rule, strict=True)],
        index=df.index,
    )
    kinds = [
        f"{', '.join(sorted(set(owner[known & m])))} in {u}"
        for m, u in ((in_bytes, "bytes"), (~in_bytes, "packets"))
    ]
    p.error = (
        f"{key} counts bytes for some points and packets for others ({'; '.join(kinds)}),"
        " and the store does not record the byte size each packet limit stands for; sweep the"
        ' packet limits as sizes with packets_of = "1500B" (examples/buffer-sweep.toml),'
        f" plot a tag that records them, or --x {d}_queue_limit_bytes for the byte limits"
        " alone"
    )
    return [*out, p]


def params(df: pd.DataFrame) -> dict[str, Param]:
    """Every parameter of a summary table by dotted key (swept or not), derived ones
    (``D.queue.kind``, ``D.queue.limit`` in bytes, ``tcp.X`` for all flows) included."""
    out: dict[str, Param] = {}
    for col in df.columns:
        if not _is_param_column(col) or re.fullmatch(r"(down|up)_queue_limit_(bytes|packets)", col):
            continue
        key = _dotted(col)
        p = _series_param(key, col, df[col])
        if key != col:
            p.aliases.append(col)
        out.setdefault(key, p)
    for d in ("down", "up"):
        for p in _queue_params(df, d):
            out[p.key] = p
    # Every flow's value, when the flows agree on every trial: tcp.cc, cbr.interval ...
    for key in list(out):
        m = re.fullmatch(r"(tcp|cbr|web|media)\[0\]\.(.+)", key)
        if not m or f"{m[1]}.{m[2]}" in out:  # media.X of a single call stays its own
            continue
        group, rest = m[1], m[2]
        same = [k for k in out if re.fullmatch(rf"{group}\[\d+\]\.{re.escape(rest)}", k)]
        first = out[key].values
        if all(out[k].values.equals(first) for k in same):
            p = Param(
                f"{group}.{rest}",
                first,
                out[key].unit,
                out[key].numeric,
                [],
                note=f"the same for every {group} flow",
                order=out[key].order,
            )
            out[p.key] = p
    # queue.X: the downstream queue's, unless only the upstream one varies.
    for key in list(out):
        if key.startswith("down.queue."):
            rest = key.removeprefix("down.queue.")
            up = out.get(f"up.queue.{rest}")
            pick = up if up is not None and up.swept and not out[key].swept else out[key]
            out[f"queue.{rest}"] = Param(
                f"queue.{rest}",
                pick.values,
                pick.unit,
                pick.numeric,
                [],
                note=pick.note or f"queue.{rest} = {pick.key}",
                error=pick.error,
                order=pick.order,
            )
    return out


def sweep_keys(
    store_dir: Path, sweep: list[tuple[str, list[Any]]] | None = None
) -> dict[str, list[str]]:
    """The sweep keys as the run wrote them, each with its values as text in their order
    (a whole queue's as its kind): ``sweep``, the run's own (``--set`` applied; see
    ``Store.read_sweep``), else the store's experiment file's; {} if unreadable."""
    keys: dict[str, list[str]] = {}
    if sweep is not None:
        for k, vals in sweep:
            keys.setdefault(k, []).extend(_as_text(x) for x in vals)
        return {k: list(dict.fromkeys(v)) for k, v in keys.items()}
    try:
        data = tomllib.loads((store_dir / "experiment.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    from ..experiment import is_axis_table

    def note(key: str, v: Any) -> None:
        vals = v.get("values", []) if isinstance(v, dict) else v
        got = keys.setdefault(key, [])
        got.extend(_as_text(x) for x in (vals if isinstance(vals, list) else []))

    def walk(t: Any, prefix: str = "") -> None:
        if not isinstance(t, dict):
            return
        for k, v in t.items():
            if not prefix and k == "zip":
                for g in v if isinstance(v, list) else [v]:
                    walk(g)
            elif isinstance(v, dict) and not is_axis_table(v):
                walk(v, f"{prefix}{k}.")
            else:
                note(f"{prefix}{k}", v)

    sweep = data.get("sweep", {})
    for t in sweep if isinstance(sweep, list) else [sweep]:
        walk(t)
    return {k: list(dict.fromkeys(v)) for k, v in keys.items()}


def _as_text(x: Any) -> str:
    """A swept value as :func:`sweep_keys` lists it: a whole queue as its discipline."""
    return kind_name(x.get("kind")) if isinstance(x, dict) else str(x)


def written_to_param(key: str, ps: Mapping[str, Param]) -> str | None:
    """A sweep key as written (``tcp.cc``, ``down.queue``, ``queue.limit``) -> a param."""
    if key in ps and ps[key].swept:
        return key
    heads = [key, key.replace("queue.", "down.queue.", 1)] if key.startswith("queue") else [key]
    for head in heads:
        if head in ps and ps[head].swept:
            return head
        under = [k for k, p in ps.items() if k.startswith(head + ".") and p.swept]
        for pref in (f"{head}.kind", f"{head}.limit"):
            if pref in under:
                return pref
        if under:
            return under[0]
    return None


def codes(s: pd.Series) -> tuple[int, ...]:
    import pandas as pd

    return tuple(pd.factorize(s.astype(object).where(s.notna(), "\0none"))[0].tolist())
