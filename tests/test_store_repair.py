"""The results store detects and repairs damage: every corrupt part is reported in one
line, left out of queries and counts, moved to quarantine/ by the next run and its
trials run again, so the store ends equal to an uninterrupted run. Also: a broken
store.json, shards of different N, duplicate trials, format 1 stores, the runner's
argument checks and a short kill sweep."""

import importlib.util
import json
import math
import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from collateral.experiment import load_experiment
from collateral.runner import parse_scheduler, run_experiment
from collateral.store import Store, StoreError, open_store

ROOT = Path(__file__).resolve().parents[1]

EXPERIMENT = textwrap.dedent(
    """
    [experiment]
    name = "repair"
    trials = 4
    seed = 5
    traces = ["cwnd"]

    [scenario]
    link = "adsl1"
    rtt = "100ms"
    duration = "4s"
    warmup = "1s"
    tcp = [{ cc = "newreno", profile = "linux-2.6.25" }]
    cbr = [{ direction = "down" }, { direction = "up" }]

    [sweep]
    "queue.rule" = ["fb-loose", "fb-strict"]
    "queue.limit" = ["20kB", "30kB", "40kB", "50kB", "60kB"]
    """
)
TOTAL = 2 * 5 * 4


def cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


@pytest.fixture(scope="module")
def exp_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("exp") / "repair.toml"
    path.write_text(EXPERIMENT)
    return path


@pytest.fixture(scope="module")
def exp(exp_path):
    return load_experiment(exp_path)


def tables(path) -> tuple[pd.DataFrame, pd.DataFrame]:
    st = open_store(path, notify=lambda m: None)
    s = st.query("SELECT * FROM summary ORDER BY key")
    s = s[sorted(s.columns)].reset_index(drop=True)
    c = st.query("SELECT * FROM cwnd ORDER BY key, time_s, flow, cwnd, ssthresh")
    return s, c.reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, exp):
    """An uninterrupted run, in one batch per worker."""
    out = tmp_path_factory.mktemp("ref") / "ref"
    r = run_experiment(exp, out, workers=1, progress=False)
    assert r.ran == TOTAL
    s, c = tables(out)
    assert len(s) == TOTAL and s["key"].is_unique and len(c) > TOTAL
    return s, c


def assert_equal_to_reference(path, reference) -> None:
    s, c = tables(path)
    keys = Store(path, notify=lambda m: None).keys()
    assert len(keys) == TOTAL and len(set(keys)) == TOTAL, "one row per trial, raw parts too"
    pd.testing.assert_frame_equal(s, reference[0], check_exact=True)  # NaN == NaN
    pd.testing.assert_frame_equal(c, reference[1], check_exact=True)


def small_parts(tmp_path, exp) -> Path:
    """A store of many small parts (batches of a few trials)."""
    out = tmp_path / "out"
    r = run_experiment(exp, out, workers=2, batch_seconds=0.05, max_batch=5, progress=False)
    assert r.ran == TOTAL
    assert len(list((out / "parts").iterdir())) >= 8
    return out


def pick_part(out: Path) -> tuple[Path, list[str], int]:
    """The part with the most trials: its directory, keys and cwnd rows."""
    best = max(
        (out / "parts").iterdir(),
        key=lambda p: (pq.read_metadata(p / "summary.parquet").num_rows, p.name),
    )
    keys = pq.read_table(best / "summary.parquet", columns=["key"]).column(0).to_pylist()
    assert len(keys) >= 2
    return best, keys, pq.read_metadata(best / "cwnd.parquet").num_rows


def _random_bytes(n: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(n)


def _flip_middle(f: Path) -> None:
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0xFF
    f.write_bytes(bytes(b))


def _edit_manifest(part: Path) -> None:
    man = json.loads((part / "manifest.json").read_text())
    man["files"]["summary.parquet"]["bytes"] += 7
    (part / "manifest.json").write_text(json.dumps(man))


# (id, damage done to the part, fragment of the one-line reason)
CORRUPTIONS = [
    (
        "summary truncated",
        lambda p: os.truncate(p / "summary.parquet", (p / "summary.parquet").stat().st_size // 2),
        "summary.parquet:",
    ),
    (
        "summary emptied",
        lambda p: os.truncate(p / "summary.parquet", 0),
        "summary.parquet: 0 bytes",
    ),
    (
        "summary random bytes, other size",
        lambda p: (p / "summary.parquet").write_bytes(_random_bytes(3000)),
        "summary.parquet: 3,000 bytes, manifest says",
    ),
    (
        "summary random bytes, same size",
        lambda p: (p / "summary.parquet").write_bytes(
            _random_bytes((p / "summary.parquet").stat().st_size)
        ),
        "summary.parquet: content differs from its checksum",
    ),
    (
        "summary one byte flipped",
        lambda p: _flip_middle(p / "summary.parquet"),
        "summary.parquet: content differs from its checksum",
    ),
    (
        "summary deleted, its trace rows orphaned",
        lambda p: (p / "summary.parquet").unlink(),
        "summary.parquet missing; its trace rows would be orphaned",
    ),
    (
        "trace truncated",
        lambda p: os.truncate(p / "cwnd.parquet", 100),
        "cwnd.parquet: 100 bytes, manifest says",
    ),
    ("trace emptied", lambda p: os.truncate(p / "cwnd.parquet", 0), "cwnd.parquet: 0 bytes"),
    (
        "trace random bytes, same size",
        lambda p: (p / "cwnd.parquet").write_bytes(
            _random_bytes((p / "cwnd.parquet").stat().st_size, 2)
        ),
        "cwnd.parquet: content differs from its checksum",
    ),
    (
        "trace one byte flipped",
        lambda p: _flip_middle(p / "cwnd.parquet"),
        "cwnd.parquet: content differs from its checksum",
    ),
    ("trace deleted", lambda p: (p / "cwnd.parquet").unlink(), "cwnd.parquet missing"),
    ("manifest deleted", lambda p: (p / "manifest.json").unlink(), "no manifest.json"),
    (
        "manifest garbage",
        lambda p: (p / "manifest.json").write_bytes(b"\x00garbage\xff"),
        "manifest.json: not valid JSON",
    ),
    (
        "manifest truncated",
        lambda p: os.truncate(p / "manifest.json", 40),
        "manifest.json: not valid JSON",
    ),
    (
        "manifest emptied",
        lambda p: os.truncate(p / "manifest.json", 0),
        "manifest.json: not valid JSON",
    ),
    (
        "manifest disagrees",
        _edit_manifest,
        "summary.parquet:",
    ),
    (
        "a table not in the manifest",
        lambda p: shutil.copy(p / "cwnd.parquet", p / "queue.parquet"),
        "queue.parquet is not in the manifest",
    ),
]


@pytest.mark.parametrize(
    "damage, reason", [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS]
)
def test_damaged_part_is_reported_left_out_quarantined_and_rerun(
    tmp_path, exp, reference, capsys, damage, reason
):
    out = small_parts(tmp_path, exp)
    part, keys, cwnd_rows = pick_part(out)
    damage(part)

    # Readers: one line, the part left out of the counts and of every view.
    notes: list[str] = []
    st = open_store(out, notify=notes.append)
    s = st.query("SELECT key FROM summary")
    assert len(notes) == 1, notes
    line = notes[0]
    assert "\n" not in line and f"part {part.name} damaged (" in line and reason in line, line
    assert f"its {len(keys)} trials counted as missing" in line, line
    assert set(s["key"]) == set(reference[0]["key"]) - set(keys) and s["key"].is_unique
    n_cwnd = st.query("SELECT count(*) AS n FROM cwnd")["n"][0]
    assert n_cwnd == len(reference[1]) - cwnd_rows  # no orphaned trace rows either
    assert st.done_keys() == set(reference[0]["key"]) - set(keys)
    assert [pr.part for pr in st.verify()] == [part.name]
    assert part.is_dir(), "a reader moves nothing"

    # The next run: one line, the part in quarantine/, exactly its trials run again.
    capsys.readouterr()
    r = run_experiment(exp, out, progress=False)
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("collateral:")]
    assert len(err) == 1, err
    assert f"part {part.name} damaged (" in err[0] and reason in err[0]
    assert f"moved to quarantine/, its {len(keys)} trials will be rerun" in err[0]
    assert (r.already, r.ran, r.missing, r.failed) == (TOTAL - len(keys), len(keys), 0, [])
    assert not part.exists() and (out / "quarantine" / part.name / "reason.txt").is_file()
    assert_equal_to_reference(out, reference)
    assert Store(out).verify(full=True) == []


def test_cli_truncated_trace_part_query_dry_run_and_run(tmp_path, exp, exp_path, reference):
    out = small_parts(tmp_path, exp)
    part, keys, _ = pick_part(out)
    os.truncate(part / "cwnd.parquet", 100)
    q = cli("query", str(out), "SELECT count(*) AS n FROM summary", "--format", "csv")
    assert q.returncode == 0, q.stderr
    assert q.stdout.split() == ["n", str(TOTAL - len(keys))]
    assert len(q.stderr.splitlines()) == 1 and q.stderr.startswith(f"collateral: store {out}")
    q = cli("query", str(out), "SELECT count(DISTINCT key) AS n FROM cwnd", "--format", "csv")
    assert q.returncode == 0 and q.stdout.split() == ["n", str(TOTAL - len(keys))], q.stderr
    d = cli("run", str(exp_path), "-o", str(out), "--dry-run")
    assert d.returncode == 0 and f"to run: {len(keys)}" in d.stdout, d.stdout + d.stderr
    p = cli("run", str(exp_path), "-o", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "moved to quarantine/" in lines[0], p.stderr
    assert f"ran now         {len(keys)} " in p.stdout
    assert "Traceback" not in p.stderr
    assert_equal_to_reference(out, reference)
    d = cli("run", str(exp_path), "-o", str(out), "--dry-run")
    assert "to run: 0" in d.stdout and not d.stderr


def test_duplicate_part_counted_once_then_quarantined(tmp_path, exp, reference, capsys):
    out = small_parts(tmp_path, exp)
    part, keys, _ = pick_part(out)
    shutil.copytree(part, out / "parts" / "zzzz-copy")  # sorts last: the copy
    notes: list[str] = []
    st = open_store(out, notify=notes.append)
    assert st.query("SELECT count(*) AS n FROM summary")["n"][0] == TOTAL
    assert st.query("SELECT count(*) AS n FROM cwnd")["n"][0] == len(reference[1])
    assert len(notes) == 1 and "part zzzz-copy duplicate (" in notes[0], notes
    assert len(st.done_keys()) == TOTAL and len(st.keys()) == TOTAL + len(keys)
    capsys.readouterr()
    r = run_experiment(exp, out, progress=False)
    assert (r.already, r.ran) == (TOTAL, 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "zzzz-copy" in err[0] and "moved to quarantine/" in err[0], err
    assert (out / "quarantine" / "zzzz-copy").is_dir()
    assert_equal_to_reference(out, reference)


def test_overlapping_part_counted_once_then_rewritten(tmp_path, exp, reference, capsys):
    """A part holding some trials of another part and some of its own (as two shards of
    different N could write before commits were checked)."""
    out = small_parts(tmp_path, exp)
    a, a_keys, _ = pick_part(out)
    b = next(p for p in sorted((out / "parts").iterdir()) if p != a)
    sb, cb = pq.read_table(b / "summary.parquet"), pq.read_table(b / "cwnd.parquet")
    sa, ca = pq.read_table(a / "summary.parquet"), pq.read_table(a / "cwnd.parquet")
    k = a_keys[0]
    summary = pa.concat_tables([sb, sa.filter(pc.equal(sa.column("key"), k))])
    cwnd = pa.concat_tables([cb, ca.filter(pc.equal(ca.column("key").cast(pa.string()), k))])
    st = Store(out)
    tmp = st._write_tmp(summary, {"cwnd": cwnd})  # an old writer: no commit check
    shutil.move(b, tmp_path / "b-elsewhere")
    os.rename(tmp, out / "parts" / "zzzz-overlap")

    notes: list[str] = []
    st = open_store(out, notify=notes.append)
    s = st.query("SELECT * FROM summary ORDER BY key")
    assert len(s) == TOTAL and s["key"].is_unique  # the copy of k is left out
    assert len(notes) == 1 and "part zzzz-overlap overlap (1 of its" in notes[0], notes
    assert st.query("SELECT count(*) AS n FROM cwnd")["n"][0] == len(reference[1])
    capsys.readouterr()
    r = run_experiment(exp, out, progress=False)
    assert (r.already, r.ran) == (TOTAL, 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rewrote it as part" in err[0], err
    assert_equal_to_reference(out, reference)


def test_format_1_store_reads_and_is_migrated(tmp_path, exp, reference, capsys):
    out = small_parts(tmp_path, exp)
    for m in (out / "parts").glob("*/manifest.json"):
        m.unlink()
    meta = json.loads((out / "store.json").read_text())
    (out / "store.json").write_text(json.dumps({**meta, "format": 1}))
    notes: list[str] = []
    assert len(open_store(out, notify=notes.append).summary()) == TOTAL and not notes
    part, keys, _ = pick_part(out)
    os.truncate(part / "cwnd.parquet", 50)
    st = open_store(out, notify=notes.append)
    assert len(st.summary()) == TOTAL - len(keys)
    assert len(notes) == 1 and "cwnd.parquet: unreadable" in notes[0], notes
    capsys.readouterr()
    r = run_experiment(exp, out, progress=False)
    assert r.ran == len(keys)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "moved to quarantine/" in err[0] and "now format 2" in err[1], err
    assert json.loads((out / "store.json").read_text())["format"] == 2
    assert all((p / "manifest.json").is_file() for p in (out / "parts").iterdir())
    assert_equal_to_reference(out, reference)
    # A format 2 store treats a part without a manifest as damaged.
    part, keys, _ = pick_part(out)
    (part / "manifest.json").unlink()
    assert len(open_store(out, notify=lambda m: None).summary()) == TOTAL - len(keys)


STORE_JSON = [
    ("empty", b"", "empty (0 bytes)"),
    ("blank", b"  \n", "empty (3 bytes)"),
    ("garbage", b"garbage\n", "not valid JSON"),
    ("random bytes", random.Random(3).randbytes(300), "store.json: not"),
    ("truncated", None, "not valid JSON"),
    ("a list", b"[1, 2]", "expected a JSON object, found list"),
    ("no name", b'{"format": 2, "schema": 2}', "no experiment name"),
    ("bad format", b'{"experiment": "repair", "format": "x"}', "'format' must be a positive"),
]


@pytest.mark.parametrize(
    "content, fragment", [c[1:] for c in STORE_JSON], ids=[c[0] for c in STORE_JSON]
)
def test_broken_store_json_is_one_line(tmp_path, exp, content, fragment):
    out = tmp_path / "out"
    run_experiment(exp, out, progress=False)
    meta = out / "store.json"
    if content is None:
        content = meta.read_bytes()[: meta.stat().st_size // 2]
    meta.write_bytes(content)
    # Readers, and a writer of another experiment, refuse in one line and change nothing.
    for call in (lambda: open_store(out), lambda: Store.create(out, "other"), Store(out).meta):
        with pytest.raises(StoreError) as e:
            call()
        msg = str(e.value)
        assert "\n" not in msg and str(meta) in msg and fragment in msg, msg
    assert meta.read_bytes() == content
    # A run of the experiment its experiment.toml names sets it aside and writes it anew.
    notes: list[str] = []
    st = Store.create(out, "repair", notify=notes.append)
    assert len(notes) == 1 and "store.json damaged" in notes[0], notes
    assert st.meta()["experiment"] == "repair"
    assert [p.read_bytes() for p in (out / "quarantine").glob("store.json.*")] == [content]
    assert run_experiment(exp, out, progress=False).ran == 0


def test_broken_store_json_cli_query_exit_2_run_repairs(tmp_path, exp_path, exp, reference):
    out = tmp_path / "out"
    run_experiment(exp, out, progress=False)
    before = sorted(p.name for p in (out / "parts").iterdir())
    meta = out / "store.json"
    meta.write_bytes(meta.read_bytes()[:20])  # truncated
    p = cli("query", str(out), "SELECT 1")
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("collateral: error:") and "store.json: not valid JSON" in p.stderr
    assert sorted(p.name for p in (out / "parts").iterdir()) == before, "nothing touched"
    # The next run of the experiment repairs it, in one line; the parts are kept.
    p = cli("run", str(exp_path), "-o", str(out), "--no-progress")
    assert p.returncode == 0 and "ran now         0 " in p.stdout, p.stdout + p.stderr
    assert len(p.stderr.splitlines()) == 1 and "store.json damaged" in p.stderr, p.stderr
    assert sorted(p.name for p in (out / "parts").iterdir()) == before
    assert_equal_to_reference(out, reference)


def test_store_json_rewritten_over_format_1_parts_keeps_them(tmp_path, exp, reference):
    out = tmp_path / "out"
    run_experiment(exp, out, progress=False)
    for m in (out / "parts").glob("*/manifest.json"):
        m.unlink()
    (out / "store.json").unlink()
    r = run_experiment(exp, out, progress=False)
    assert r.ran == 0
    assert_equal_to_reference(out, reference)


# -- shards and duplicates -----------------------------------------------------------


def test_shards_of_another_n_are_refused_while_shards_run(tmp_path, exp_path, exp, reference):
    out = tmp_path / "out"
    running = Store.create(out, "repair")
    running.lock((0, 2))  # as a `--shard 0/2` run would hold it
    try:
        p = cli("run", str(exp_path), "-o", str(out), "--shard", "0/3")
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
        assert "--shard 0/3 refused: shards of 2 are running here" in p.stderr
        other = Store(out)
        with pytest.raises(StoreError, match="--shard 1/3 refused"):
            other.lock((1, 3))
        with pytest.raises(StoreError, match="another run is writing here"):
            other.lock()  # a whole run
        with pytest.raises(StoreError, match="shard 0/2 is already running"):
            other.lock((0, 2))
        other.lock((1, 2))  # the other shard of the same N: fine
        other.unlock()
        d = cli("run", str(exp_path), "-o", str(out), "--shard", "1/2", "--dry-run")
        assert d.returncode == 0 and "stored in" in d.stdout
    finally:
        running.unlock()
    # Once they have ended, another N may run: the trials stored are not run again.
    a = run_experiment(exp, out, shard=(0, 2), progress=False)
    b = run_experiment(exp, out, shard=(0, 3), progress=False)
    keys = Store(out).keys()
    assert len(keys) == len(set(keys)) == a.ran + b.ran
    d = cli("run", str(exp_path), "-o", str(out), "--dry-run")
    assert (
        d.returncode == 0
        and f"stored in {out}: {len(keys)}; to run: {TOTAL - len(keys)}" in d.stdout
    )
    c = run_experiment(exp, out, progress=False)
    assert (c.already, c.ran, c.missing) == (len(keys), TOTAL - len(keys), 0)
    assert_equal_to_reference(out, reference)


def test_concurrent_shards_of_different_n_never_store_a_trial_twice(tmp_path, exp_path, reference):
    """Started together, one of them is refused or both run: either way one row per trial."""
    out = tmp_path / "out"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "collateral", "run", str(exp_path), "-o", str(out),
             "--no-progress", "--batch-seconds", "0.001", "--shard", shard],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for shard in ("0/2", "0/3", "1/3")
    ]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 2), err
        assert proc.returncode == 0 or "refused: shards of" in err, err
    keys = Store(out).keys()
    assert len(keys) == len(set(keys))
    p = cli("run", str(exp_path), "-o", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert_equal_to_reference(out, reference)


def test_commit_leaves_out_trials_already_stored(tmp_path, exp, reference):
    out = tmp_path / "out"
    run_experiment(exp, out, shard=(0, 2), progress=False)
    ref = tmp_path / "ref"
    run_experiment(exp, ref, progress=False)
    parts = sorted((ref / "parts").iterdir())
    full = pa.concat_tables(
        [pq.read_table(p / "summary.parquet") for p in parts], promote_options="default"
    )
    cwnd = pa.concat_tables([pq.read_table(p / "cwnd.parquet") for p in parts])
    assert len(full) == TOTAL
    a, b = Store(out), Store(out)  # two writers, as two processes would be
    have = a.done_keys(refresh=True)
    assert 0 < len(have) < len(full)
    part, dropped = b.commit_part(full, {"cwnd": cwnd})  # b has never looked before
    assert part is not None and dropped == len(have)
    assert len(pq.read_table(part / "summary.parquet")) == len(full) - len(have)
    assert a.commit_part(full, {"cwnd": cwnd}) == (None, len(full))  # all stored now
    assert_equal_to_reference(out, reference)
    assert Store(out).verify(full=True) == []


# -- the runner's arguments ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["x", "", "local:abc", "local:1e30", "local:-1", "local:", "local:99999999", "ftp://h:1",
     "tcp://h", "tcp://h:0", "tcp://h:70000", "tcp://:8786", "tcp://h :1", "inproc://"],
)  # fmt: skip
def test_bad_scheduler_is_a_value_error_naming_the_option_before_anything(tmp_path, exp, text):
    with pytest.raises(ValueError, match=r"^--scheduler: ") as e:
        parse_scheduler(text)
    assert "\n" not in str(e.value)
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="--scheduler"):
        run_experiment(exp, tmp_path / "out", scheduler=text, progress=False)
    assert time.monotonic() - t0 < 5 and not (tmp_path / "out").exists()


def test_good_schedulers_parse():
    assert parse_scheduler("local") == ("local", 0)
    assert parse_scheduler("local:0") == ("local", 0)
    assert parse_scheduler("local:2") == ("local", 2)
    assert parse_scheduler("tcp://10.0.0.1:8786") == ("address", "tcp://10.0.0.1:8786")
    assert parse_scheduler("sched.cluster:8786") == ("address", "sched.cluster:8786")
    assert parse_scheduler("tls://[::1]:8786")[0] == "address"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 0, -1, 1e6, "x"])
def test_bad_batch_seconds_is_a_value_error_before_anything(tmp_path, exp, value):
    with pytest.raises(ValueError, match="batch_seconds"):
        run_experiment(exp, tmp_path / "out", batch_seconds=value, progress=False)
    assert not (tmp_path / "out").exists()


def test_cli_scheduler_local_minus_one_does_not_hang(tmp_path, exp_path):
    p = cli("run", str(exp_path), "-o", str(tmp_path / "out"), "--scheduler", "local:-1")
    assert p.returncode == 2 and "--scheduler" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


# -- kill safety -----------------------------------------------------------------------


def test_quick_kill_sweep(tmp_path):
    """benchmarks/kill_sweep.py in small: a few SIGKILLs of `collateral run`, rerun until
    complete, equal to an uninterrupted run, nothing left behind."""
    spec = importlib.util.spec_from_file_location("kill_sweep", ROOT / "benchmarks/kill_sweep.py")
    ks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ks)
    f = ks.sweep(kills=3, seed=5, trials=2, limits=10, workdir=tmp_path, log=lambda m: None)
    assert f["kills"] >= 3 and f["rows"] and all(r == f["trials"] == 40 for r in f["rows"]), f
    assert not any(f["summary_mismatches"]) and not any(f["cwnd_mismatches"]), f
    assert f["duplicate_rows_seen"] == 0 and not f["quarantined"] and not f["leftovers"], f
    assert not f["held_locks"] and f["processes_left"] == 0 and f["failed_runs"] == 0, f
    assert f["ok"]
