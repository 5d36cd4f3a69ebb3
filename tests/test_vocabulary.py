"""One vocabulary: every enumeration the Python side accepts is the core's list.

Each enumerated field of the scenario models (found by introspecting their annotations)
must allow exactly the names ``_native.vocabulary()`` gives for it, in the core's order,
and no hand-copied list of those names (nor a conversion between spellings) may come
back into spec.py.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

from collateral import _native, cli, experiment, reproduce, spec
from collateral.experiment import TRACE_NAMES, ExperimentSettings
from collateral.reproduce.mmsys2011.sweep import LINKS
from collateral.units import parse_rate

VOCAB = _native.vocabulary()


def _sources(module: object) -> list[Path]:
    """A module's file, or every file of a package."""
    p = Path(module.__file__)
    return sorted(p.parent.glob("*.py")) if p.name == "__init__.py" else [p]


SPEC_PYS = _sources(spec)

# (model, field) -> the vocabulary key that lists what the field accepts.
FIELDS: list[tuple[type[BaseModel], str, str]] = [
    (spec.QueueSpec, "rule", "rule"),
    (spec.AqmSpec, "kind", "aqm"),
    (spec.TcpSpec, "recovery", "recovery"),
    (spec.TcpSpec, "cc", "cc"),
    (spec.TcpSpec, "profile", "profile"),
    (spec.TcpSpec, "ecn", "tcp_ecn"),
    (spec.TcpSpec, "direction", "direction"),
    (spec.CubicSpec, "variant", "cubic_variant"),
    (spec.HtcpSpec, "flavor", "htcp_flavor"),
    (spec.CbrSpec, "app", "app"),
    (spec.CbrSpec, "direction", "direction"),
    (spec.CbrSpec, "ecn", "cbr_ecn"),
    (spec.WebSpec, "direction", "direction"),
    (spec.MediaSpec, "controller", "media_controller"),
    (spec.MediaSpec, "direction", "direction"),
    (spec.MediaSpec, "ecn", "cbr_ecn"),
    (spec.Scenario, "link", "link_presets"),
    (spec.WorkloadSpec, "kind", "workload"),
    (spec.WorkloadSpec, "send_buffer", "send_buffer"),
    (ExperimentSettings, "traces", "trace"),
]


def literal_values(annotation: Any) -> list[str]:
    """The strings of the Literal inside an annotation (through Annotated, unions, lists)."""
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    if typing.get_origin(annotation) is Annotated:
        return literal_values(typing.get_args(annotation)[0])
    out: list[str] = []
    for arg in typing.get_args(annotation):
        out += [v for v in literal_values(arg) if v not in out]
    return out


def enumerated_fields() -> set[tuple[str, str]]:
    """Every (model, field) of the scenario models whose annotation holds a Literal."""
    models = [
        m
        for m in vars(spec).values()
        if isinstance(m, type)
        and issubclass(m, BaseModel)
        and m.__module__.startswith(spec.__name__)
    ]
    return {
        (m.__name__, name)
        for m in [*models, ExperimentSettings]
        for name, f in m.model_fields.items()
        if literal_values(f.annotation)
    }


def test_the_core_lists_every_enumeration_once():
    keys = {"rule", "aqm", "recovery", "cubic_variant", "htcp_flavor", "cc", "profile"}
    keys |= {"app", "direction", "trace", "link_presets", "tcp_ecn", "cbr_ecn"}
    keys |= {"aqm_info", "cc_info", "media_controller", "workload", "send_buffer"}
    keys |= {"bufferbloat_grades"}
    assert set(VOCAB) == keys
    assert set(VOCAB["aqm_info"]) == set(VOCAB["aqm"])
    assert set(VOCAB["cc_info"]) == set(VOCAB["cc"])
    for key, names in VOCAB.items():
        assert names and len(set(names)) == len(names), key
    for name, p in VOCAB["link_presets"].items():
        assert set(p) == {"down_bps", "up_bps"} and p["down_bps"] > 0 and p["up_bps"] > 0, name


@pytest.mark.parametrize(("model", "field", "key"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
def test_each_enumerated_field_allows_exactly_the_cores_names(model, field, key):
    assert literal_values(model.model_fields[field].annotation) == list(VOCAB[key])


def test_every_enumerated_field_is_checked_here():
    """A new Literal field must be added to FIELDS (and so compared with the core)."""
    checked = {(m.__name__, f) for m, f, _ in FIELDS}
    # The experiment's own choice, not a name of the core.
    own = {("ExperimentSettings", "seeds")}
    assert enumerated_fields() - own == checked


def test_the_module_constants_are_the_cores_lists():
    assert tuple(VOCAB["rule"]) == spec.RULES
    assert tuple(VOCAB["aqm"]) == spec.AQM_KINDS
    assert tuple(VOCAB["recovery"]) == spec.RECOVERY_STYLES
    assert tuple(VOCAB["cubic_variant"]) == spec.CUBIC_VARIANTS
    assert tuple(VOCAB["htcp_flavor"]) == spec.HTCP_FLAVORS
    assert spec.CC_ALGORITHMS == tuple(VOCAB["cc"]) == tuple(_native.congestion_controls())
    assert spec.PROFILES == tuple(VOCAB["profile"]) == tuple(_native.profiles())
    assert tuple(VOCAB["app"]) == spec.APP_PROFILES
    assert tuple(VOCAB["direction"]) == spec.DIRECTIONS
    assert tuple(VOCAB["workload"]) == spec.WORKLOADS
    assert tuple(VOCAB["trace"]) == TRACE_NAMES
    assert [t["name"] for t in _native.schema()["traces"]] == VOCAB["trace"]
    assert set(spec.AQM_SHORTHANDS) <= set(VOCAB["aqm"])
    assert spec.CBR_CHOICES[: len(VOCAB["direction"])] == tuple(VOCAB["direction"])


def test_link_presets_come_from_the_core():
    rates = {k: (p["down_bps"], p["up_bps"]) for k, p in VOCAB["link_presets"].items()}
    assert rates == spec.LINK_RATES
    human = spec.LINK_PRESETS
    assert {k: (parse_rate(d), parse_rate(u)) for k, (d, u) in human.items()} == rates
    assert {k: (float(d), float(u)) for k, (d, u) in rates.items()} == LINKS
    for name, (down, up) in rates.items():
        s = spec.Scenario(link=name)
        assert (s.down.rate, s.up.rate) == (down, up)


def test_names_cross_to_the_core_as_spelled():
    """The rule (and every other name) goes to the core exactly as Python spells it."""
    for rule in VOCAB["rule"]:
        limit = "20p" if rule == "ps" else "20kB"
        q = spec.QueueSpec(limit=limit, rule=rule)
        assert q.to_native()["rule"] == rule
    s = spec.build_scenario(rule="fb-loose", tcp_flows=0, cbr="none", duration="2s", warmup="1s")
    native = s.to_native()
    assert native["down"]["queue"]["rule"] == "fb-loose"
    _native.simulate(s.to_native_json())  # the core takes it


def test_unknown_names_are_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match=", ".join(VOCAB["rule"])):
        spec.QueueSpec(limit="20kB", rule="fb_strict")
    with pytest.raises(ValueError, match="adsl1"):
        spec.Scenario(link="adsl9")
    with pytest.raises(ValueError, match="quake3"):
        spec.CbrSpec(app="doom")
    with pytest.raises(ValueError, match="fq_codel"):
        spec.AqmSpec(kind="blue")
    # An AQM's hard-limit rule is the same vocabulary.
    assert spec.AqmSpec(kind="codel", limit_rule="fb-strict").to_native()["limit_rule"] == (
        "fb-strict"
    )
    with pytest.raises(ValueError, match=", ".join(VOCAB["rule"])):
        spec.AqmSpec(kind="codel", limit_rule="fb_strict")


def test_the_cli_offers_the_cores_names():
    parser = cli.build_parser()
    sim = next(
        a.choices["simulate"]
        for a in parser._actions
        if isinstance(a.choices, dict) and "simulate" in a.choices
    )
    opts = {o: a for a in sim._actions for o in a.option_strings}
    assert tuple(opts["--cbr"].choices) == (*VOCAB["direction"], "both", "none")
    for option, key in [
        ("--rule", "rule"),
        ("--cc", "cc"),
        ("--profile", "profile"),
        ("--app", "app"),
    ]:
        assert ", ".join(VOCAB[key]) in opts[option].help, option
    assert all(f"{name} = " in opts["--link"].help for name in VOCAB["link_presets"])
    assert ", ".join(spec.AQM_SHORTHANDS) in opts["--aqm"].help


def test_spec_py_copies_no_enumeration_by_hand():
    offenders = []
    nodes = [(p.name, n) for p in SPEC_PYS for n in ast.walk(ast.parse(p.read_text()))]
    for name, node in nodes:
        if not isinstance(node, ast.Subscript):
            continue
        if not (isinstance(node.value, ast.Name) and node.value.id == "Literal"):
            continue
        strings = [
            c.value
            for c in ast.walk(node.slice)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
        if strings:
            offenders.append((name, node.lineno, strings))
    assert not offenders, f"Literal[...] with hard-coded names in spec/: {offenders}"


def test_no_spelling_is_converted():
    """Names cross as they are spelled: no replace("-", "_") or back in the modules that
    build and store scenarios."""
    reproductions = sorted(Path(reproduce.__file__).parent.rglob("*.py"))
    for path in [*SPEC_PYS, *_sources(experiment), *reproductions]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "replace"
                and [a.value for a in node.args if isinstance(a, ast.Constant)]
                in (["-", "_"], ["_", "-"])
            ):
                pytest.fail(f"{path.name}:{node.lineno}: replace() converts a spelling")
