"""A results directory's section of the report: its name, description, trial counts,
figures, table of key numbers and experiment file."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ..emulate.timing import store_line
from .figures import FigureView, figures, own_figure
from .key_numbers import key_numbers
from .tables import Table


@dataclass
class Section:
    id: str
    name: str
    description: str
    quick: bool
    path: str
    trials: int
    points: int
    trials_per_point: str
    figures: list[FigureView]
    numbers: Table | None
    experiment_text: str
    notes: list[str] = field(default_factory=list)

    @property
    def claims(self) -> list[Any]:
        return [c for f in self.figures for c in f.claims]


def _experiment_file(store: Any) -> tuple[str, dict[str, Any]]:
    p = store.path / "experiment.toml"
    if not p.is_file():
        return "", {}
    text = p.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text, {}


def _slug(name: str, taken: set[str]) -> str:
    s = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "results"
    out, i = s, 2
    while out in taken:
        out, i = f"{s}-{i}", i + 1
    taken.add(out)
    return out


def section(store: Any, taken: set[str]) -> Section:
    meta = store.meta()
    name = meta.get("experiment", store.path.name)
    quick = name.endswith("-quick")
    base = name.removesuffix("-emu").removesuffix("-quick")
    text, parsed = _experiment_file(store)
    exp = parsed.get("experiment", {}) if isinstance(parsed.get("experiment"), dict) else {}
    description = str(exp.get("description", "")).strip()
    df = store.summary()
    n = len(df)
    points = int(df["point"].nunique()) if "point" in df.columns and n else 0
    if points:
        per = df.groupby("point").size()
        tpp = (
            f"{per.iloc[0]} trial{'s' if per.iloc[0] != 1 else ''} per point"
            if per.nunique() == 1
            else f"{per.min()}–{per.max()} trials per point"
        )
        tpp = f"{points:,} points × {tpp}" if points > 1 else tpp
    else:
        tpp = "no trials"
    figs = figures(store, base, quick, tpp, description)
    notes = []
    timing = store_line(df) if n else None  # did the testbed keep real time?
    if timing:
        notes.append(timing + ".")
    if not figs and n:
        own = own_figure(store, df, description)
        if own is not None:
            figs = [own]
        else:
            notes.append("No figure: the store has no measure to plot.")
    return Section(
        id=_slug(name, taken),
        name=name,
        description=description,
        quick=quick,
        path=str(store.path),
        trials=n,
        points=points,
        trials_per_point=tpp,
        figures=figs,
        numbers=key_numbers(df) if n else None,
        experiment_text=text,
        notes=notes,
    )
