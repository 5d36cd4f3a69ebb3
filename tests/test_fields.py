"""The flat scenario parameters are declared once (collateral.spec.fields.FIELDS); the
signatures of build_scenario and simulate, the CLI options of every command that takes
a scenario and the names errors are reported under all come from that declaration."""

from __future__ import annotations

import inspect

import pytest

import collateral
from collateral.cli import build_parser
from collateral.cli.emulate import TESTBED_HELP
from collateral.cli.scenario import option
from collateral.spec import SpecError, build_scenario, flat_param
from collateral.spec.fields import FIELDS, SAME


def _subparser(name: str):
    p = build_parser()
    sub = next(a for a in p._actions if a.dest == "command")
    return sub.choices[name]


def _options(name: str) -> dict[str, object]:
    return {s: a for a in _subparser(name)._actions for s in a.option_strings}


def test_build_scenario_and_simulate_take_exactly_the_declared_parameters():
    declared = [(f.name, f.default) for f in FIELDS]
    for func, skip in ((build_scenario, 0), (collateral.simulate, 1)):
        params = list(inspect.signature(func).parameters.values())[skip:]
        assert [(p.name, p.default) for p in params] == declared, func.__name__
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)


@pytest.mark.parametrize("command", ["simulate", "emulate"])
def test_every_declared_parameter_is_an_option_with_its_default(command):
    opts = _options(command)
    for f in FIELDS:
        action = opts[option(f.name)]
        assert action.dest == f.name
        want = f.default if f.cli_default is SAME else f.cli_default
        if f.types == (bool,) and f.default is False:
            want = False
        assert action.default == want, f.name
        # emulate says what differs on the testbed (real time, the kernel's TCP).
        testbed = TESTBED_HELP.get(f.name, {}).get("help") if command == "emulate" else None
        assert action.help == (testbed or f.help_text()), f.name


def test_the_advisor_takes_the_link_as_simulate_does():
    sim, adv = _options("simulate"), _options("advise")
    for name in ("link", "down", "up", "rtt", "profile"):
        assert adv[option(name)].help == sim[option(name)].help, name


def test_each_parameter_is_where_its_scenario_keys_land():
    for f in FIELDS:
        for path in f.lands:
            loc = tuple(0 if p == "*" else p for p in path)
            assert flat_param(loc) == f.name, (f.name, path)
            assert flat_param((*loc, "deeper")) in (f.name, *[g.name for g in FIELDS]), path
    # A TCP setting build_scenario does not take comes from the profile.
    assert flat_param(("tcp", 0, "initial_cwnd")) == "profile"
    assert flat_param(("cbr", 1, "interval")) == "cbr_interval"
    assert flat_param(("nothing", "here")) == "nothing"


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_a_value_of_the_wrong_type_names_its_parameter(field):
    with pytest.raises(SpecError) as err:
        build_scenario(**{field.name: object()})
    assert err.value.param == field.name


def test_an_unknown_parameter_is_a_type_error():
    with pytest.raises(TypeError, match="qeue"):
        build_scenario(qeue="20kB")
    with pytest.raises(TypeError, match="did you mean 'queue'"):
        collateral.simulate(qeue="20kB")
    # A parameter by the command line's name: told the parameter's, by both functions.
    for f in (build_scenario, collateral.simulate):
        with pytest.raises(
            TypeError, match="'downloads'; the command line's --downloads is 'tcp_flows'"
        ):
            f(downloads=2)
        with pytest.raises(TypeError, match="'tcp_f'; did you mean 'tcp_flows'"):
            f(tcp_f=2)


def test_the_docstring_lists_every_parameter():
    doc = build_scenario.__doc__ or ""
    assert all(f"``{f.name}``" in doc for f in FIELDS)
