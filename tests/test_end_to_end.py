"""End to end through the real native core: the demo set-up, shortened."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import collateral
from collateral import _native
from collateral.plot import fig_cwnd_delay
from collateral.spec import CbrSpec, Scenario, demo_scenario


@pytest.fixture(scope="module")
def demo():
    return collateral.simulate(demo_scenario(duration="20s", warmup="5s"))


def test_summary_keys_and_plausible_values(demo):
    s = demo.summary
    for key in ("mode", "duration_s", "warmup_s", "events", "tcp", "cbr", "queues"):
        assert key in s
    # Wall-clock time is run metadata, not a (reproducible) result.
    assert "wall_s" not in s and demo.wall_s > 0
    assert s["duration_s"] == 20.0 and s["warmup_s"] == 5.0 and s["events"] > 0
    (tcp,) = demo.tcp
    assert tcp["flow"] == 0 and tcp["direction"] == "down" and tcp["cc"] == "newreno"
    assert 0 < tcp["goodput_bps"] <= 1_500_000  # cannot beat the bottleneck
    assert [c["flow"] for c in demo.cbr] == [1, 2]  # TCP flows are numbered first
    assert [c["direction"] for c in demo.cbr] == ["down", "up"]
    for c in demo.cbr:
        assert c["received"] + c["lost"] <= c["sent"]
        assert 0 <= c["delay_median_s"] <= c["delay_p95_s"] <= c["delay_max_s"]
    # A 20 kB byte queue at 1.5 Mbit/s holds at most 20000*8/1.5e6 = 107 ms of data,
    # plus one packet in service (1500*8/1.5e6 = 8 ms).
    assert demo.cbr[0]["delay_max_s"] < 0.107 + 0.008 + 0.002
    assert demo.queues["down"]["max_bytes"] <= 20_000


def test_traces_are_numpy_columns_of_equal_length(demo):
    for name, cols in demo.traces.items():
        lengths = {len(v) for v in cols.values()}
        assert len(lengths) == 1, name
        assert all(isinstance(v, np.ndarray) for v in cols.values())
    assert demo.traces["cwnd"]["cwnd"].dtype == np.uint32
    assert len(demo.traces["cbr"]["seq"]) > 0


def test_cwnd_series_on_real_trace(demo):
    t, cwnd, ssthresh = demo.cwnd_series(0, step="1ms", t0=5.0, t1=10.0)
    assert len(t) == 5001 and np.all(np.diff(t) > 0)
    assert np.all(cwnd >= 1) and np.all(np.isfinite(cwnd))
    assert np.nanmax(ssthresh) < 10_000  # finite after the first loss, which comes early


def test_same_seed_same_result_other_seed_differs():
    a = collateral.simulate(duration="6s", warmup="1s", seed=3)
    b = collateral.simulate(duration="6s", warmup="1s", seed=3)
    c = collateral.simulate(duration="6s", warmup="1s", seed=4)
    assert json.dumps(a.summary) == json.dumps(b.summary)  # no wall-clock time in it
    assert not np.array_equal(a.traces["cbr"]["sent_s"], c.traces["cbr"]["sent_s"])


def test_packet_limit_and_trace_switches():
    sc = collateral.build_scenario(queue="10p", duration="5s", warmup="1s")
    sc = sc.model_copy(update={"trace": sc.trace.model_copy(update={"queue": False})})
    r = collateral.simulate(sc)
    assert r.queues["down"]["max_packets"] <= 10
    assert len(r.traces["queue"]["time_s"]) == 0 and len(r.traces["cwnd"]["time_s"]) > 0


def test_no_cbr_received_gives_nan_delays():
    # One packet sent 10 ms before the end: still in flight (base one-way delay ~50 ms).
    cbr = CbrSpec(start="1.99s", interval="10s", jitter=0)
    r = collateral.simulate(Scenario(link="adsl1", duration="2s", warmup="1.9s", cbr=[cbr]))
    (c,) = r.cbr
    assert c["sent"] == 1 and c["received"] == 0
    assert math.isnan(c["delay_median_s"]) and math.isnan(c["delay_max_s"])


def test_native_rejects_bad_json_with_valueerror():
    with pytest.raises(ValueError, match="seed"):
        _native.simulate("{}")
    assert collateral.native_version == _native.version()
    assert collateral.__version__


def test_simulate_takes_scenario_or_kwargs_not_both():
    with pytest.raises(TypeError):
        collateral.simulate(demo_scenario(), seed=2)
    with pytest.raises(collateral.SpecError, match="queue"):
        collateral.simulate(queue="0p")


def test_fig_cwnd_delay_writes_the_format_asked_for(demo, tmp_path):
    paths = fig_cwnd_delay(demo, 5.0, 15.0, tmp_path / "fig1.svg")
    assert paths == [tmp_path / "fig1.svg"] and b"<svg" in paths[0].read_bytes()[:1000]
    assert not (tmp_path / "fig1.png").exists()
    paths = fig_cwnd_delay(demo, 5.0, 15.0, tmp_path / "fig1.png")
    assert paths[0].read_bytes()[:4] == b"\x89PNG" and paths[0].stat().st_size > 10_000
    # No suffix: a PNG.
    assert fig_cwnd_delay(demo, 5.0, 15.0, tmp_path / "fig2") == [tmp_path / "fig2.png"]
    with pytest.raises(ValueError, match="empty plot window"):
        fig_cwnd_delay(demo, 10.0, 10.0, tmp_path / "x.png")


def test_simulate_shows_its_keywords_and_names_a_typo():
    import inspect

    params = inspect.signature(collateral.simulate).parameters
    assert {"scenario", "link", "queue", "rtt", "cc", "ecn", "aqm"} <= set(params)
    assert params["queue"].default == "20kB"
    with pytest.raises(TypeError, match=r"unknown parameter 'qeue'; did you mean 'queue'\?"):
        collateral.simulate(qeue="20kB")
    # Written out for static completion, they are build_scenario's, one for one.
    own = [p for name, p in params.items() if name != "scenario"]
    theirs = list(inspect.signature(collateral.build_scenario).parameters.values())
    assert [(p.name, p.default, p.annotation) for p in own] == [
        (p.name, p.default, p.annotation) for p in theirs
    ]
    assert all(p.kind is p.KEYWORD_ONLY for p in own)
    with pytest.raises(TypeError, match=r"not both \(got rtt"):
        collateral.simulate(collateral.build_scenario(), rtt="20ms")


def test_a_models_signature_does_not_need_what_its_module_defines_later():
    """Each model gets its readable signature as it is defined: a default factory that
    uses what comes later in its module is shown, not called, and the class is made."""
    import inspect

    from pydantic import Field

    from collateral.spec.types import Duration, Model

    class Early(Model):
        wait: Duration = Field(default_factory=lambda: later())
        n: int = 3

    def later() -> int:
        return 10**9

    assert (
        str(inspect.signature(Early)) == "(*, wait: 'Duration' = <lambda>(), n: 'int' = 3) -> None"
    )
    assert Early().wait == 10**9


def test_spec_models_show_readable_signatures():
    import inspect

    from collateral.spec import CbrSpec

    # Built first: a model's build (on its first use) must not bring pydantic's back.
    collateral.Scenario(cbr=[CbrSpec(direction="up")])
    sig = inspect.signature(collateral.Scenario)
    assert str(sig.parameters["rtt"]) == "rtt: 'Duration' = '100ms'"
    assert str(sig.parameters["down"]) == "down: 'LinkSpec' = LinkSpec()"
    assert (
        str(inspect.signature(CbrSpec).parameters["budget"]) == "budget: 'Duration | None' = None"
    )
    assert "BeforeValidator" not in str(sig) and len(str(sig)) < 700
    from collateral.spec.types import Model

    def models(base: type) -> list[type]:
        return [m for sub in base.__subclasses__() for m in (sub, *models(sub))]

    shown = {m.__name__: str(inspect.signature(m)) for m in models(Model)}
    assert len(shown) >= 20 and not [n for n, s in shown.items() if "Annotated" in s]
    assert "steps: 'list[tuple[Duration, Rate]] | None'" in shown["DeliveryTraceSpec"]
    # A model's own module imported first (the package loads its models on first use).
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import inspect; from collateral.spec.leo import LeoSpec;"
            " print(inspect.signature(LeoSpec)); print('Fields:' in LeoSpec.__doc__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "rate_min: 'Rate', rate_max: 'Rate', delay_min: 'Duration' = '0s'" in out
    assert out.split()[-1] == "True"
