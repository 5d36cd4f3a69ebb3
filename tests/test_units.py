"""Human units: every accepted form, exact conversions, and errors that say what is allowed."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collateral.units import (
    MAX_QUEUE_BYTES,
    QueueLimit,
    fmt_duration,
    fmt_rate,
    fmt_size,
    parse_duration,
    parse_queue_limit,
    parse_rate,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("1.5Mbit", 1_500_000),
        ("256kbit", 256_000),
        ("10Gbit", 10_000_000_000),
        ("1500000", 1_500_000),
        ("1500000bps", 1_500_000),
        ("2Mbps", 2_000_000),
        ("64kbps", 64_000),
        ("1Gbps", 1_000_000_000),
        ("24 Mbit/s", 24_000_000),
        ("1mbit", 1_000_000),  # tc spells mega with a small m
        ("0.5Mbit", 500_000),
        ("1e6", 1_000_000),
        (1_500_000, 1_500_000),
        (1.5e6, 1_500_000),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("100ms", 100_000_000),
        ("1.5s", 1_500_000_000),
        ("20us", 20_000),
        ("20µs", 20_000),
        ("500ns", 500),
        ("180s", 180_000_000_000),
        ("3min", 180_000_000_000),
        ("60", 60_000_000_000),  # a bare number is seconds
        ("0", 0),
        ("0.1s", 100_000_000),  # exact, not 0.1 as a float
        ("1h", 3_600_000_000_000),
        (2, 2_000_000_000),
    ],
)
def test_durations(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("40kB", 40_000),  # decimal, as the MMSys 2011 queue sizes
        ("40KB", 40_000),
        ("64KiB", 65_536),
        ("1MiB", 1_048_576),
        ("1500B", 1500),
        ("1500", 1500),
        ("1.5kB", 1500),
        ("1MB", 1_000_000),
    ],
)
def test_sizes(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("27p", QueueLimit(27, "packets")),
        ("27 packets", QueueLimit(27, "packets")),
        ("100pkts", QueueLimit(100, "packets")),
        ("20kB", QueueLimit(20_000, "bytes")),
        ("20000B", QueueLimit(20_000, "bytes")),
        ("20000", QueueLimit(20_000, "bytes")),
        ("64KiB", QueueLimit(65_536, "bytes")),
    ],
)
def test_queue_limits(text, limit):
    assert parse_queue_limit(text) == limit


@pytest.mark.parametrize(
    ("parse", "text", "fragment"),
    [
        (parse_rate, "-1Mbit", "must be positive"),
        (parse_rate, "0", "must be positive"),
        (parse_rate, "fast", "cannot parse"),
        (parse_rate, "1.5Mfurlong", "unknown rate unit"),
        (parse_rate, "1MBps", "byte rate"),
        (parse_rate, "1.5bit", "whole number"),
        (parse_rate, "", "cannot parse"),
        (parse_rate, True, "expected"),
        (parse_rate, float("nan"), "expected"),
        (parse_duration, "-1s", "cannot be negative"),
        (parse_duration, "10 parsec", "unknown duration unit"),
        (parse_duration, "1.5ns", "whole number"),
        (parse_duration, "1..5s", "cannot parse"),
        (parse_size, "40kb", "bits or bytes"),
        (parse_size, "0B", "must be positive"),
        (parse_size, "0.5B", "whole number"),
        (parse_size, "1kbit", "unknown size unit"),
        (parse_queue_limit, "0p", "must be positive"),
        (parse_queue_limit, "-5", "must be positive"),
        (parse_queue_limit, "2.5p", "whole number"),
        (parse_queue_limit, "20kb", "bits or bytes"),
        (parse_queue_limit, "lots", "cannot parse"),
    ],
)
def test_errors_say_what_is_allowed(parse, text, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        parse(text)
    assert "such as" in str(err.value)  # every message shows the accepted forms


@pytest.mark.parametrize(
    ("fmt", "value", "text"),
    [
        (fmt_rate, 1_500_000, "1.5Mbit"),
        (fmt_rate, 256_000, "256kbit"),
        (fmt_rate, 10**10, "10Gbit"),
        (fmt_rate, 1_234_567, "1.234567Mbit"),
        (fmt_duration, 100_000_000, "100ms"),
        (fmt_duration, 60_000_000_000, "60s"),
        (fmt_duration, 0, "0s"),
        (fmt_duration, 20_500, "20.5us"),
        (fmt_size, 20_000, "20kB"),
        (fmt_size, 186, "186B"),
    ],
)
def test_formatting(fmt, value, text):
    assert fmt(value) == text


@given(st.integers(min_value=1, max_value=10**13))
def test_rate_round_trip(bps):
    assert parse_rate(fmt_rate(bps)) == bps


@given(st.integers(min_value=0, max_value=10**15))
def test_duration_round_trip(ns):
    assert parse_duration(fmt_duration(ns)) == ns


@given(st.integers(min_value=1, max_value=10**12))
def test_size_round_trip(n):
    assert parse_size(fmt_size(n)) == n
    if n <= MAX_QUEUE_BYTES:  # a queue limit is bounded further
        assert parse_queue_limit(str(QueueLimit(n, "bytes"))) == QueueLimit(n, "bytes")
    else:
        with pytest.raises(ValueError, match="above the limit of 1GB"):
            parse_queue_limit(str(QueueLimit(n, "bytes")))


@pytest.mark.parametrize("parse", [parse_rate, parse_duration, parse_size, parse_queue_limit])
def test_parsers_remember_text_but_not_errors_or_other_inputs(parse):
    """The parsers remember their answers for text (a sweep parses the same strings for
    every point): the same answer again; an error raised again, each time; a list, which
    cannot be remembered, still refused with the parser's own error."""
    good = {parse_rate: "1.5Mbit", parse_duration: "1.5s", parse_size: "3kB"}.get(parse, "27p")
    assert parse(good) == parse(good) == parse(good)
    for _ in range(2):
        with pytest.raises(ValueError, match="cannot parse"):
            parse("1.5 furlongs!")
        with pytest.raises(ValueError, match="expected"):
            parse(["1s"])
    assert parse(1500) == parse(1500)  # numbers: parsed each time, the same answer


def test_copy_tree_copies_what_a_point_may_change():
    """A sweep point's copy of the scenario shares nothing that can be changed: dicts and
    lists are new at every depth; anything but TOML's types goes through deepcopy."""
    from collateral.experiment.paths import copy_tree

    shared = {"limit": "20kB"}
    base = {"down": shared, "up": shared, "tcp": [{"cc": "cubic"}, [1, 2.5, None, True]]}
    base["odd"] = {"s": {1, 2}}
    got = copy_tree(base)
    assert got == base
    got["down"]["limit"] = "40kB"
    got["tcp"][0]["cc"] = "reno"
    got["tcp"][1].append(3)
    got["odd"]["s"].add(3)
    assert base == {
        "down": {"limit": "20kB"},
        "up": {"limit": "20kB"},
        "tcp": [{"cc": "cubic"}, [1, 2.5, None, True]],
        "odd": {"s": {1, 2}},
    }
    assert got["up"]["limit"] == "20kB", "the two links no longer share a table"
