"""Running experiments: resumable after SIGKILL, identical on every executor, the
results store and its queries, the CLI as a user runs it."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import collateral
from collateral.experiment import Experiment, load_experiment
from collateral.runner import run_experiment, summary_columns
from collateral.runner.batch import BatchTask, run_batch
from collateral.spec import CC_ALGORITHMS
from collateral.store import Store, open_store
from collateral.store.tables import rows_to_table

ROOT = Path(__file__).resolve().parents[1]


def experiment_text(duration="20s", limits=5, trials=4, traces=()):
    return textwrap.dedent(
        f"""
        [experiment]
        name = "t"
        trials = {trials}
        seed = 3
        traces = {json.dumps(list(traces))}

        [scenario]
        link = "adsl1"
        rtt = "100ms"
        duration = "{duration}"
        warmup = "2s"
        tcp = [{{ cc = "newreno", profile = "linux-2.6.25" }}]
        cbr = [{{ direction = "down" }}, {{ direction = "up" }}]

        [sweep]
        "queue.rule" = ["fb-loose", "fb-strict"]
        "queue.limit" = {{ from = "30000B", to = "{30000 + 500 * (limits - 1)}B", step = "500B" }}
        """
    )


def write_experiment(tmp_path, **kw) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(experiment_text(**kw))
    return path


def cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )


def cli_bg(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "collateral", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def summary(path) -> pd.DataFrame:
    df = open_store(path).summary()
    return df[sorted(df.columns)].sort_values("key").reset_index(drop=True)


def assert_same_tables(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a["key"]) == list(b["key"])
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def n_parts(path: Path) -> int:
    parts = path / "parts"
    return len(list(parts.iterdir())) if parts.is_dir() else 0


def wait_for_parts(proc, path: Path, n: int, timeout: float = 60) -> int:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and proc.poll() is None:
        k = n_parts(path)
        if k >= n:
            return k
        time.sleep(0.002)
    raise AssertionError(f"the run ended or stalled before {n} parts: {proc.communicate()}")


def test_sigkill_partway_then_rerun_equals_an_uninterrupted_run(tmp_path):
    exp = write_experiment(tmp_path, duration="180s", limits=25, trials=6)  # 300 trials
    total = 300
    ref = tmp_path / "ref"
    p = cli("run", str(exp), "-o", str(ref), "--no-progress")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "killed"
    args = ("run", str(exp), "-o", str(out), "--no-progress", "--batch-seconds", "0.01")
    stored = []
    for parts in (2, 15):  # kill twice, at different depths
        proc = cli_bg(*args)
        wait_for_parts(proc, out, n_parts(out) + parts)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        st = Store(out)
        keys = st.keys()
        assert len(keys) == len(set(keys)), "a trial was stored twice"
        stored.append(len(keys))
    assert 0 < stored[0] < stored[1] < total, stored  # killed partway, each time
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    assert f"already stored  {stored[1]:,}" in p.stdout, p.stdout
    keys = Store(out).keys()
    assert len(keys) == total and len(set(keys)) == total  # exactly one row per trial
    assert not any((out / "tmp").iterdir()), "half-written parts of the killed runs are gone"
    assert_same_tables(summary(out), summary(ref))
    # A rerun of a complete experiment runs nothing.
    p = cli(*args)
    assert p.returncode == 0 and "ran now         0" in p.stdout, p.stdout


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_cleanly_keeping_finished_trials(tmp_path, sig, status):
    # SIGTERM (Slurm's time limit) as Ctrl-C, but the status says which: 128 + signal.
    exp = write_experiment(tmp_path, duration="180s", limits=25, trials=6)
    out = tmp_path / "out"
    proc = cli_bg("run", str(exp), "-o", str(out), "--no-progress", "--batch-seconds", "0.05")
    wait_for_parts(proc, out, 3)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert f"{sig.name}: finishing the" in stderr and "Traceback" not in stderr
    assert "still missing" in stdout
    keys = Store(out).keys()
    assert 0 < len(keys) < 300 and len(keys) == len(set(keys))
    p = cli("run", str(exp), "-o", str(out), "--no-progress")
    assert p.returncode == 0 and len(set(Store(out).keys())) == 300


def test_identical_tables_on_1_and_n_workers_processes_shards_and_dask(tmp_path):
    exp = load_experiment(write_experiment(tmp_path, limits=4, trials=5))  # 40 trials
    ref = tmp_path / "one"
    r = run_experiment(exp, ref, workers=1, progress=False)
    assert (r.ran, r.already, r.failed) == (40, 0, [])
    base = summary(ref)
    assert len(base) == 40 and base["key"].is_unique

    run_experiment(exp, tmp_path / "two", workers=2, batch_seconds=0.005, progress=False)
    assert_same_tables(summary(tmp_path / "two"), base)

    run_experiment(exp, tmp_path / "proc", workers=2, executor="processes", progress=False)
    assert_same_tables(summary(tmp_path / "proc"), base)

    # Two shards in separate directories, merged; the shards partition the trials.
    a = run_experiment(exp, tmp_path / "s0", shard=(0, 2), progress=False)
    b = run_experiment(exp, tmp_path / "s1", shard=(1, 2), progress=False)
    assert a.ran + b.ran == 40 and a.ran and b.ran
    p = cli("merge", str(tmp_path / "s0"), str(tmp_path / "s1"))
    assert p.returncode == 0 and f"merged {b.ran} trials" in p.stdout, p.stderr
    assert_same_tables(summary(tmp_path / "s0"), base)
    assert Store(tmp_path / "s0").merge([tmp_path / "s1"]) == (0, b.ran)  # idempotent
    # Into a new directory: it takes the experiment file and its points, as a run writes.
    p = cli("merge", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1"))
    assert p.returncode == 0, p.stderr
    assert_same_tables(summary(tmp_path / "m"), base)
    for name in ("experiment.toml", "points.parquet"):
        assert (tmp_path / "m" / name).read_bytes() == (tmp_path / "s0" / name).read_bytes()

    # Two shards at once into one directory, as a Slurm array on a shared disk would.
    shared = tmp_path / "shared"
    procs = [cli_bg("run", exp.source, "-o", str(shared), "--shard", f"{i}/2") for i in (0, 1)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert_same_tables(summary(shared), base)

    pytest.importorskip("distributed")
    r = run_experiment(exp, tmp_path / "dask", scheduler="local:2", progress=False)
    assert r.ran == 40 and r.executor.startswith("dask")
    assert_same_tables(summary(tmp_path / "dask"), base)


def test_run_shows_progress_and_query_counts_rows(tmp_path):
    exp = write_experiment(tmp_path, limits=25, trials=4)  # 2 x 25 x 4 = 200 trials
    out = tmp_path / "out"
    p = cli("run", str(exp), "-o", str(out), "--progress")
    assert p.returncode == 0, p.stderr
    assert "trials/s" in p.stderr and "ETA" in p.stderr and "200/200" in p.stderr
    assert "ran now         200" in p.stdout and "trials/s on" in p.stdout
    q = cli(
        "query",
        str(out),
        "SELECT count(*) AS n, count(DISTINCT point) AS p FROM summary",
        "--format",
        "csv",
    )
    assert q.returncode == 0, q.stderr
    assert q.stdout.splitlines() == ["n,p", "200,50"]
    q = cli("query", str(out), "SELECT down_queue_rule, count(*) AS n FROM summary GROUP BY 1")
    assert q.returncode == 0 and "fb-loose" in q.stdout and "100" in q.stdout
    # Numbers without needless exponents; list cells in CSV as JSON.
    q = cli("query", str(out), "SELECT 1376540.5::DOUBLE AS g, 0.000116::DOUBLE AS d")
    assert q.returncode == 0 and "1,376,540" in q.stdout and "0.000116" in q.stdout, q.stdout
    assert "e+06" not in q.stdout
    q = cli("query", str(out), "SELECT [1.5, 2.0] AS l", "--format", "csv")
    assert q.returncode == 0 and q.stdout.splitlines() == ["l", '"[1.5, 2.0]"'], q.stdout
    # Columns of a known unit (declared or a parameter's suffix) in human units; --raw
    # and csv keep the stored numbers.
    sql = (
        "SELECT tcp0_goodput_bps, cbr0_delay_p95_s, rtt_s, queue_down_max_bytes"
        " FROM summary ORDER BY key LIMIT 1"
    )
    raw = cli("query", str(out), sql, "--format", "csv").stdout.splitlines()[1].split(",")
    g, p95, rtt, qmax = (float(x) for x in raw)
    q = cli("query", str(out), sql)
    assert f"{g / 1e6:.4g} Mbit/s" in q.stdout and f"{p95 * 1e3:.4g} ms" in q.stdout, q.stdout
    assert f"{rtt * 1e3:.4g} ms" in q.stdout and f"{qmax / 1e3:.4g} kB" in q.stdout, q.stdout
    q = cli("query", str(out), sql, "--raw")
    assert f"{g:,.0f}" in q.stdout and "Mbit/s" not in q.stdout, q.stdout
    q = cli("query", str(out), "SELEKT 1")
    assert q.returncode == 2 and q.stderr.startswith("collateral: error: SQL:")
    q = cli("query", str(tmp_path), "SELECT 1")
    assert q.returncode == 2 and "not a collateral results directory" in q.stderr
    dry = cli("run", str(exp), "-o", str(out), "--dry-run")
    assert dry.returncode == 0 and "to run: 0" in dry.stdout
    # Another experiment's results, or a foreign directory: the dry run refuses what the
    # run would (it counted them as a fresh store), and writes nothing.
    other = tmp_path / "other.toml"
    other.write_text(exp.read_text().replace('name = "', 'name = "other-', 1))
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    for target, says in ((out, "holds the results of experiment"), (tmp_path / "foreign",
                         "is not a collateral results directory")):  # fmt: skip
        dry = cli("run", str(other), "-o", str(target), "--dry-run")
        assert dry.returncode == 2 and says in dry.stderr, dry.stderr
    assert sorted(p.name for p in (tmp_path / "foreign").iterdir()) == ["notes.txt"]
    # A damaged store.json of this experiment's own directory: the run sets it aside and
    # writes it anew, so the dry run counts, and leaves it as it is.
    import shutil

    shutil.copytree(out, tmp_path / "damaged")
    (tmp_path / "damaged" / "store.json").write_text("{not json")
    dry = cli("run", str(exp), "-o", str(tmp_path / "damaged"), "--dry-run")
    assert dry.returncode == 0 and "to run: 0" in dry.stdout, dry.stderr
    assert (tmp_path / "damaged" / "store.json").read_text() == "{not json"
    assert (out / "views.sql").read_text().count("CREATE OR REPLACE VIEW summary") == 1


def test_rows_carry_parameters_versions_and_reproduce_with_simulate(tmp_path):
    traces = ("cwnd", "queue", "cbr", "drops", "congestion")
    exp = load_experiment(
        write_experiment(tmp_path, duration="10s", limits=1, trials=2, traces=traces)
    )
    out = tmp_path / "out"
    run_experiment(exp, out, progress=False)
    st = open_store(out)
    assert set(st.tables()) == {"summary", *traces}
    df = st.summary()
    trial = exp.trials()[1]
    row = df.set_index("key").loc[trial.key]
    assert row["seed"] == trial.seed and row["rep"] == 1 and row["point"] == trial.point.key
    assert row["down_queue_limit_bytes"] == 30000 and row["tcp0_cc"] == "newreno"
    assert "down_queue_limit_packets" not in row  # one unit per column
    assert row["model_version"] == collateral.native_version
    assert row["code_version"].startswith(f"collateral {collateral.__version__}")
    # The stored scenario and seed give the same trial again.
    sc = collateral.Scenario.model_validate_json(row["scenario"]).model_copy(
        update={"seed": int(row["seed"])}
    )
    again = collateral.simulate(sc)
    assert again.tcp[0]["goodput_bps"] == row["tcp0_goodput_bps"]
    assert again.cbr[0]["lost"] == row["cbr0_lost"]
    for name in traces:
        n = st.query(f"SELECT count(*) AS n FROM {name} WHERE key = '{trial.key}'")["n"][0]
        assert n == len(next(iter(again.traces[name].values()))), name
    pl = st.query("SELECT key, cbr0_delay_p95_s FROM summary", output="polars")
    assert pl.shape == (4, 2)


def test_store_refuses_other_experiments_and_concurrent_runs(tmp_path):
    exp = write_experiment(tmp_path, limits=1, trials=1)
    out = tmp_path / "out"
    assert cli("run", str(exp), "-o", str(out), "--no-progress").returncode == 0
    other = tmp_path / "other.toml"
    other.write_text(experiment_text(limits=1, trials=1).replace('name = "t"', 'name = "u"'))
    p = cli("run", str(other), "-o", str(out))
    assert p.returncode == 2 and "holds the results of experiment 't'" in p.stderr
    st = Store(out)
    st.lock()
    try:
        p = cli("run", str(exp), "-o", str(out), "--set", "experiment.trials=2")
        assert p.returncode == 2 and "another run is writing here" in p.stderr
    finally:
        st.unlock()
    # A half-written part of a dead writer is ignored by readers and cleaned by a run.
    dead = out / "tmp" / f"{os.uname().nodename}-999999999-x"
    dead.mkdir()
    (dead / "summary.parquet").write_bytes(b"garbage")
    assert len(Store(out).keys()) == 2
    assert cli("run", str(exp), "-o", str(out), "--no-progress").returncode == 0
    assert not dead.exists()


def test_examples_run_in_reduced_form(tmp_path):
    out = tmp_path / "rules"
    p = cli(
        "run",
        str(ROOT / "examples/queue-rules.toml"),
        "-o",
        str(out),
        "--no-progress",
        "--set",
        "experiment.trials=1",
        "--set",
        "scenario.duration=20s",
    )
    assert p.returncode == 0, p.stderr
    df = open_store(out).query(
        "SELECT down_queue_rule AS rule, count(*) AS n, min(tag_queue_bytes) AS lo"
        " FROM summary GROUP BY 1 ORDER BY 1"
    )
    assert df.to_dict("list") == {
        "rule": ["fb-loose", "fb-strict", "ps"],
        "n": [5, 5, 5],
        "lo": [10000, 10000, 10000],
    }
    fig6 = ROOT / "examples/mmsys-fig6.toml"
    reduced = [
        "--set", 'sweep.queue.limit={ from = "52500B", to = "52560B", step = "30B" }',
        "--set", "experiment.trials=2",
        "--set", "scenario.duration=20s",
    ]  # fmt: skip
    if "cubic" not in CC_ALGORITHMS:  # until the core has it
        reduced += ["--set", 'sweep.tcp.cc=["newreno"]']
    out = tmp_path / "fig6"
    p = cli("run", str(fig6), "-o", str(out), "--no-progress", *reduced)
    assert p.returncode == 0, p.stderr
    n_cc = 2 if "cubic" in CC_ALGORITHMS else 1
    assert len(set(Store(out).keys())) == n_cc * 2 * 3 * 2
    full = load_experiment(fig6) if "cubic" in CC_ALGORITHMS else None
    if full is not None:
        assert len(full) == 60_120


def test_experiment_from_dict_runs_through_the_python_api(tmp_path):
    exp = Experiment.from_dict(
        {
            "experiment": {"name": "api", "trials": 2},
            "scenario": {"link": "adsl2", "duration": "5s", "warmup": "1s", "tcp": [{}]},
            "sweep": {"rtt": ["20ms", "40ms"]},
        }
    )
    report = run_experiment(exp, tmp_path / "api", progress=False)
    assert report.ran == 4 and report.missing == 0
    # The workers' time, split into the core's (no GIL) and the hand-back of its results
    # (which here may wait for the GIL while another worker's first batch imports pyarrow),
    # fits in the run's wall time on its workers.
    assert report.busy_s > 0 and report.handoff_s > 0
    assert report.busy_s + report.handoff_s <= report.wall_s * report.workers
    df = collateral.query(
        tmp_path / "api", "SELECT rtt_s, avg(tcp0_goodput_bps) g FROM summary GROUP BY 1 ORDER BY 1"
    )
    assert list(df["rtt_s"]) == [0.02, 0.04] and (df["g"] > 1e6).all()


def test_cli_runs_on_a_dask_scheduler_by_address(tmp_path):
    distributed = pytest.importorskip("distributed")
    exp = write_experiment(tmp_path, limits=2, trials=3)  # 12 trials
    ref = tmp_path / "ref"
    run_experiment(load_experiment(exp), ref, progress=False)
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        out = tmp_path / "out"
        p = cli("run", str(exp), "-o", str(out), "--scheduler", cluster.scheduler_address)
        assert p.returncode == 0, p.stderr
        assert "dask (tcp://" in p.stdout
    assert_same_tables(summary(out), summary(ref))
    p = cli("run", str(exp), "-o", str(tmp_path / "x"), "--scheduler", "tcp://127.0.0.1:9")
    assert p.returncode == 2 and p.stderr.startswith("collateral: error: --scheduler: "), p.stderr
    assert not (tmp_path / "x").exists(), "an unreachable cluster writes nothing"


def test_a_batch_stores_what_its_trials_flattened_one_by_one_give():
    """A batch's summary table (the core's typed columns, the parameters typed once per
    point) is the table of its trials' rows built one by one: the same columns, types,
    values and nulls, across grids whose points lack each other's parameters; the
    parameters before the metrics, the scenario and versions last."""
    exp = Experiment.from_dict(
        {
            "experiment": {"name": "rows", "trials": 2},
            "scenario": {
                "link": "adsl1",
                "duration": "3s",
                "warmup": "1s",
                "tcp": [{}],
                "cbr": [{}],
            },
            "sweep": [
                {"queue.limit": ["20kB", "40kB"]},
                {"rtt": ["20ms"], "tags.kind": ["short"], "tags.n": [1.5]},
            ],
        }
    )
    trials = exp.trials()
    got = run_batch(BatchTask.of(trials, (), "test")).summary
    rows = [
        {
            "key": t.key,
            "point": t.point.key,
            "rep": t.rep,
            "seed": t.seed,
            **t.point.columns(),
            **summary_columns(collateral.simulate(t.scenario()).summary),
            "scenario": t.point.stored_scenario,
            "model_version": collateral.native_version,
            "code_version": "test",
        }
        for t in trials
    ]
    want = rows_to_table(rows)  # columns in first-seen order: the tags last
    assert got.num_rows == 6 and sorted(got.column_names) == sorted(want.column_names)
    assert got.select(want.column_names).equals(want)
    names = got.column_names
    assert names[:4] == ["key", "point", "rep", "seed"] and names.index("tag_n") < names.index(
        "events"
    )
    assert names[-3:] == ["scenario", "model_version", "code_version"]


def test_batches_finished_together_are_stored_as_one_part(tmp_path):
    """The batches that finish together go into one Parquet part (at most ``max_batch``
    rows a part) holding every row and trace row of each, the parameters one batch
    lacks null; batches whose columns are typed differently get a part each."""
    from collateral.runner.run import _commit

    exp = Experiment.from_dict(
        {
            "experiment": {"name": "merge", "trials": 2, "traces": ["cwnd"]},
            "scenario": {"link": "adsl1", "duration": "3s", "warmup": "1s", "tcp": [{}]},
            "sweep": [
                {"queue.limit": ["20kB", "40kB"], "tags.n": [1.5]},
                {"rtt": ["20ms"], "tags.kind": ["short"]},
                {"rtt": ["30ms"], "tags.kind": [7]},
            ],
        }
    )
    trials = exp.trials()
    by_grid = [trials[:4], trials[4:6], trials[6:]]
    res = [run_batch(BatchTask.of(ts, exp.traces, "test")) for ts in by_grid]
    assert "tag_kind" not in res[0].summary.column_names
    assert "tag_n" not in res[1].summary.column_names
    assert (
        res[1].summary.schema.field("tag_kind").type != res[2].summary.schema.field("tag_kind").type
    )

    def parts(st):
        return sorted(st.part_dirs(), key=lambda p: p.stat().st_mtime_ns)

    st = Store.create(tmp_path / "a", "merge", None)
    assert _commit(st, res[:2], 1000) == [0]
    (part,) = parts(st)
    got = pd.read_parquet(part / "summary.parquet")
    assert list(got["key"]) == [t.key for t in trials[:6]]
    assert got["tag_kind"].isna().sum() == 4 and list(got["tag_kind"][4:]) == ["short"] * 2
    assert list(got["tag_n"][:4]) == [1.5] * 4 and got["tag_n"][4:].isna().all()
    assert list(got.columns[-4:]) == ["tag_kind", "scenario", "model_version", "code_version"]
    cwnd = pd.read_parquet(part / "cwnd.parquet")
    want = sum(r.traces["cwnd"].num_rows for r in res[:2])
    assert len(cwnd) == want > 0 and set(cwnd["key"].astype(str)) == set(got["key"])

    st = Store.create(tmp_path / "b", "merge", None)
    assert _commit(st, res, 1000) == [0, 0, 0], "a string and a number column: no merge"
    st = Store.create(tmp_path / "c", "merge", None)
    assert _commit(st, res[:2], 5) == [0, 0], "at most max_batch rows a part"
    assert len(parts(st)) == 2 and sorted(st.keys()) == sorted(t.key for t in trials[:6])


def test_report_splits_the_workers_idle_time(tmp_path):
    """The run's report says how long the workers sat idle before their first batch and
    after their last: a worker that never got a batch idled the whole run; busy and idle
    together fit in the workers' time; the summary prints both shares."""
    from collateral.runner.progress import report_lines

    exp = load_experiment(write_experiment(tmp_path, limits=1, trials=1))  # 2 trials
    r = run_experiment(exp, tmp_path / "out", workers=4, progress=False)
    assert r.ran == 2 and r.batches == 2
    whole = r.wall_s * r.workers
    assert r.idle_start_s >= 2 * r.wall_s, "two of the four workers never ran a batch"
    assert r.idle_tail_s > 0
    assert r.busy_s + r.idle_start_s + r.idle_tail_s <= whole
    rows = dict(report_lines(r))
    start, tail = r.idle_start_s / whole, r.idle_tail_s / whole
    assert rows["workers idle"] == (
        f"{start:.1%} before their first batch, {tail:.1%} after their last"
    )


def test_report_says_when_the_trials_ran_on_the_tests_checked_build(tmp_path, monkeypatch):
    """A run's speed on the tests' build (what ./test.sh leaves installed) is not what a
    user gets: the summary says so, and says nothing on a release build."""
    from collateral import _native
    from collateral.runner.progress import report_lines

    exp = load_experiment(write_experiment(tmp_path, limits=1, trials=1))
    r = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    monkeypatch.setattr(_native, "build", lambda: {"checked": True, "pgo": ""})
    assert dict(report_lines(r))["core build"].startswith("checked (the tests')")
    monkeypatch.setattr(_native, "build", lambda: {"checked": False, "pgo": "use"})
    assert "core build" not in dict(report_lines(r))


def test_a_failing_submit_loses_no_finished_batch(tmp_path, monkeypatch):
    """Finished batches are stored even when handing out the next ones fails (a broken
    process pool, a lost Dask scheduler): every batch done by then is in the store."""
    from collateral.runner import run as runner

    futures = []  # (future, its trials' keys)
    done_then: list[str] = []

    class Breaks(runner.PoolExecutor):
        def submit(self, task):
            if len(futures) == 6:
                time.sleep(0.3)  # let the batches in flight finish
                done_then.extend(k for f, keys in futures if f.done() for k in keys)
                raise RuntimeError("the pool broke")
            fut = super().submit(task)
            futures.append((fut, [h[0] for h in task.heads]))
            return fut

    monkeypatch.setattr(runner, "PoolExecutor", Breaks)
    exp = load_experiment(write_experiment(tmp_path, duration="5s", limits=4, trials=4))
    with pytest.raises(RuntimeError, match="the pool broke"):
        run_experiment(exp, tmp_path / "out", workers=2, batch_seconds=0.05, max_batch=2)
    stored = set(open_store(tmp_path / "out").keys())
    assert len(done_then) >= 8 and set(done_then) <= stored
    assert stored <= {k for _, keys in futures for k in keys}


def test_a_run_counts_the_stored_trials_of_points_the_file_no_longer_has(tmp_path):
    from collateral.runner.progress import report_lines

    out = tmp_path / "out"
    small = {"duration": "3s", "limits": 2, "trials": 1}
    first = load_experiment(write_experiment(tmp_path, **small))
    assert run_experiment(first, out, workers=1, progress=False).elsewhere == 0
    # The file edited (one limit fewer): the first run's trials of that limit stay.
    edited = load_experiment(write_experiment(tmp_path, **{**small, "limits": 1}))
    report = run_experiment(edited, out, workers=1, progress=False)
    assert (report.already, report.elsewhere) == (2, 2)
    rows = dict(report_lines(report))
    assert rows["not in the file"].startswith("2 stored trials of points the file no longer")
    path = write_experiment(tmp_path, **{**small, "duration": "4s"})  # every point changed
    p = cli("run", str(path), "-o", str(out), "--dry-run")
    assert (
        p.returncode == 0
        and "to run: 4; 4 stored of points not in the file or of another core" in p.stdout
    )
    # Fewer trials per point: the others are reps of points still in the file, said so.
    more = load_experiment(write_experiment(tmp_path, **{**small, "trials": 3}))
    run_experiment(more, out, workers=1, progress=False)
    fewer = write_experiment(tmp_path, **small)
    report = run_experiment(load_experiment(fewer), out, workers=1, progress=False)
    assert (report.elsewhere, report.extra_reps) == (8, 8)  # 4 points x 2 more reps
    rows = dict(report_lines(report))
    assert rows["beyond trials"].startswith("8 stored trials of the file's points beyond its 1")
    assert "filter by rep < 1" in rows["beyond trials"] and "not in the file" not in rows
    p = cli("run", str(fewer), "-o", str(out), "--dry-run")
    assert "to run: 0; 8 stored beyond its 1 trials per point" in p.stdout, p.stdout
    # Another seed: the same points, reps 0..n-1 of other trials, not beyond trials.
    reseeded = load_experiment(fewer, [("experiment.seed", 4)])
    report = run_experiment(reseeded, out, workers=1, progress=False)
    assert (report.elsewhere, report.extra_reps) == (12, 8), report
    assert dict(report_lines(report))["not in the file"].startswith("4 stored trials"), report


def test_compare_names_the_side_with_no_trials(tmp_path):
    exp = load_experiment(write_experiment(tmp_path, duration="3s", limits=1, trials=1))
    run_experiment(exp, tmp_path / "sim", workers=1, progress=False)
    Store.create(tmp_path / "empty", exp.name, exp.text)
    for args, side in (("sim", "empty"), "EMU_DIR"), (("empty", "sim"), "SIM_DIR"):
        p = cli("compare", *(str(tmp_path / a) for a in args))
        assert p.returncode == 2, p.stderr
        assert (
            p.stderr.strip()
            == f"collateral: error: {side}: {tmp_path / 'empty'}: no trials stored yet"
        )


def test_a_run_says_when_each_points_trials_came_out_identical(tmp_path):
    """The responsiveness workload draws nothing on the seed: the end-of-run report says
    that every point's trials are the same; a scenario with CBR jitter gets no note."""
    from collateral.runner.progress import report_lines

    def run(scenario: str) -> dict[str, str]:
        (tmp_path / "e.toml").write_text(
            textwrap.dedent(
                """
                [experiment]
                name = "same"
                trials = 2
                seed = 1
                [scenario]
                down = { rate = "8Mbit" }
                up = { rate = "1Mbit" }
                duration = "12s"
                """
            )
            + scenario
            + '\n[sweep]\n"down.queue.limit" = ["20kB", "40kB"]\n'
        )
        out = tmp_path / f"s{len(list(tmp_path.iterdir()))}"
        report = run_experiment(load_experiment(tmp_path / "e.toml"), out, progress=False)
        return dict(report_lines(report, Store(out)))

    same = run('workload = { kind = "responsiveness" }')
    assert "each of the 2 points with several came out identical" in same["note"]
    assert "note" not in run('cbr = [{ direction = "down", jitter = "1ms" }]')


def test_a_rerun_says_when_the_file_relabels_stored_points(tmp_path):
    """Tags label a point without being part of its key: relabelling them in the file
    runs nothing and the stored rows keep the old labels; the report says so (a query
    by the new label silently found the other point)."""
    from collateral.runner.progress import report_lines

    text = textwrap.dedent(
        """
        [experiment]
        name = "tags"
        trials = 1
        [scenario]
        link = "adsl1"
        duration = "4s"
        warmup = "1s"
        tcp = [{ cc = "cubic" }]
        [[sweep]]
        [[sweep.zip]]
        "queue.limit" = ["20kB", "40kB"]
        "tags.size" = ["small", "big"]
        """
    )
    f = tmp_path / "t.toml"
    f.write_text(text)
    first = run_experiment(load_experiment(f), tmp_path / "s", progress=False)
    assert first.ran == 2 and first.stale_tags == 0
    f.write_text(text.replace('"small", "big"', '"big", "huge"'))
    again = run_experiment(load_experiment(f), tmp_path / "s", progress=False)
    assert again.ran == 0 and again.stale_tags == 2
    # The example is the file's first point: 20 kB, relabelled from small to big.
    assert "tag_size 'small' stored, 'big' in the file" in dict(report_lines(again))["stale tags"]
    f.write_text(text)  # back as stored: nothing to say
    assert run_experiment(load_experiment(f), tmp_path / "s", progress=False).stale_tags == 0


def test_a_signal_delivered_twice_at_once_is_one_stop(monkeypatch):
    """timeout(1) sends its signal to the command and to its process group: the same
    signal again within half a second is the first, not a second that abandons the
    batches in flight; later, or another signal, still abandons them."""
    from collateral.runner import run as run_mod

    now = [100.0]
    monkeypatch.setattr(run_mod.time, "monotonic", lambda: now[0])
    names = []
    stop = run_mod._Stop(names.append)
    stop._handle(signal.SIGINT, None)
    now[0] += 0.01
    stop._handle(signal.SIGINT, None)  # the repeat: no KeyboardInterrupt
    assert names == ["SIGINT"]
    with pytest.raises(KeyboardInterrupt):
        stop._handle(signal.SIGTERM, None)  # another signal at once: a second
    now[0] += 1.0
    with pytest.raises(KeyboardInterrupt):
        stop._handle(signal.SIGINT, None)  # the same one later: a second
