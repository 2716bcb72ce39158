"""`ctxtop audit`: the per-session rows, the tables, the report, reuse by content, the engines and object stores.

A folder of real logs is audited (the demo, tests/data's Codex session that keeps its rules,
the shared fixtures when present, and a garbage file), and the results are read back with DuckDB.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxtop.context.fleet.columns import COMPACTION_COLUMNS, SESSION_COLUMNS
from ctxtop.context.fleet.session import audit_session
from ctxtop.tui.cli import main
from ctxtop.tui.demo import demo_path

from ..conftest import DATA, SHARED_FIXTURES

duckdb = pytest.importorskip("duckdb", reason="the fleet extra is not installed")

from ctxtop.tui.commands.fleet.tables import read_parquet  # noqa: E402 - after the extra is known to be there

CODEX_KEEPS = "codex_local_compaction.jsonl"


@pytest.fixture
def fleet(tmp_path):
    """A folder of sessions: the demo, a Codex session that keeps its rules, the real fixtures, a garbage file."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(demo_path(), folder / "demo_session.jsonl")
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    (folder / "deep" / "er").mkdir(parents=True)
    shutil.copy(DATA / "claude_compact.jsonl", folder / "deep" / "er" / "claude_compact.jsonl")
    (folder / "garbage.jsonl").write_bytes(b"\x00\xff not a log \x1b[31m at all\n" * 10)
    (folder / "notes.txt").write_text("not a log name: never looked at")
    os.mkfifo(folder / "live.jsonl")  # not a regular file: never opened (a read would wait for a writer)
    for session_folder in ("cline_task", "openhands_v1", "opencode_storage"):  # sessions kept as folders of files
        shutil.copytree(DATA / session_folder, folder / "folders" / session_folder)
    if SHARED_FIXTURES.is_dir():
        shutil.copytree(SHARED_FIXTURES, folder / "fixtures")
    return folder


def audit(capsys, *argv):
    code = main(["audit", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def rows_by_name(out):
    return {row["path"].rsplit("/", 1)[-1]: row for row in read_parquet(out / "sessions.parquet")}


def test_a_folder_of_sessions_gives_a_row_each_and_names_the_garbage(fleet, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = audit(capsys, fleet, "--out", out)
    assert code == 0 and stdout == ""
    assert sorted(p.name for p in out.iterdir()) == ["compactions.parquet", "report.html", "report.md", "sessions.parquet", "skipped"]
    sessions = read_parquet(out / "sessions.parquet")
    # Ours (3 files, 3 folders), and the fixtures' 21 logs: SOURCES.md is no log name, and the 2 sub-agent
    # transcripts belong to their session.
    assert len(sessions) == len({r["path"] for r in sessions}) == 6 + (21 if SHARED_FIXTURES.is_dir() else 0)
    assert list(sessions[0]) == list(SESSION_COLUMNS)
    assert not any("/subagents/" in r["path"] for r in sessions)
    rows = rows_by_name(out)
    assert (rows["cline_task"]["format"], rows["openhands_v1"]["format"], rows["opencode_storage"]["format"]) == (
        "cline", "openhands-events", "opencode")
    assert "live.jsonl" not in rows

    demo = rows["demo_session.jsonl"]
    assert (demo["rules"], demo["rules_kept_at_end"], demo["retention"], demo["violations"]) == (3, 0, 0.0, 3)
    assert (demo["format"], demo["agent"], demo["model"], demo["messages"], demo["compactions"]) == (
        "claude-code", "claude-code", "claude-sonnet-4-5-20250929", 390, 3)
    assert demo["constraint_evaporation"] == 2 and demo["recovery_none"] == 3 and demo["first_finding_at"] == 204
    assert demo["cache_rewrite_tokens"] == 1351 + 1316 + 1323 and demo["cost_estimated"] is True
    assert demo["content_digest"] and demo["ctxtop_version"]

    codex = rows[CODEX_KEEPS]
    assert (codex["format"], codex["rules"], codex["rules_kept_at_end"], codex["retention"], codex["compactions"]) == ("codex", 2, 2, 1.0, 1)
    assert codex["violations"] == 0 and codex["tool_calls"] >= 1
    [codex_compaction] = [c for c in read_parquet(out / "compactions.parquet") if c["path"] == codex["path"]]
    # No price for the model, and the summarizing call not in the log: its tokens are an estimate all the same.
    assert codex_compaction["cost_usd"] is None and codex_compaction["cost_estimated"] is True
    assert codex_compaction["cache_read_tokens"] == 0  # as the first call after it logs

    compactions = read_parquet(out / "compactions.parquet")
    assert list(compactions[0]) == list(COMPACTION_COLUMNS)
    demo_compactions = [c for c in compactions if c["path"] == demo["path"]]
    assert [(c["compaction"], c["message"], c["generation"]) for c in demo_compactions] == [(1, 204, 1), (2, 306, 2), (3, 383, 3)]
    first = demo_compactions[0]
    assert first["rules_paraphrased"] == ["budget-8000"] and sorted(first["rules_lost"]) == ["no-phone-numbers", "wecom-only"]
    assert sorted(first["rules_dropped"]) == ["budget-8000", "no-phone-numbers", "wecom-only"]
    assert first["failure_modes"] == ["constraint_evaporation"] and first["recovery"] == "none" and first["facts_lost"] > 0
    assert sum(r["compactions"] for r in sessions) == len(compactions)

    skipped = (out / "skipped").read_text().splitlines()
    garbage = [line for line in skipped if line.startswith(str(fleet / "garbage.jsonl"))]
    assert len(garbage) == 1 and "not a session log ctxtop knows" in garbage[0] and "\x1b" not in garbage[0]
    assert not any("notes.txt" in line for line in skipped)
    report = (out / "report.md").read_text()
    assert "garbage.jsonl" in report and "not a session log ctxtop knows" in report and "\x1b" not in report
    assert f"`ctxtop {fleet / 'demo_session.jsonl'} --at 204`" in report
    evaporated = sum(r["constraint_evaporation"] for r in sessions)
    assert evaporated >= 2  # the demo's first compaction, and claude_compact's
    assert f"| constraint evaporation | {evaporated} |" in report  # the report sums the table
    html = (out / "report.html").read_text()
    assert "garbage.jsonl" in html and "constraint evaporation" in html and "default-src 'none'" in html
    assert f"{len(sessions)} session(s) audited, 1 skipped; 0 result(s) reused" in err


def test_a_second_run_reuses_what_did_not_change(fleet, tmp_path, capsys):
    out = tmp_path / "out"
    assert audit(capsys, fleet, "--out", out)[0] == 0
    first = read_parquet(out / "sessions.parquet")
    code, _, err = audit(capsys, fleet, "--out", out)
    # Every result is reused, the garbage file's reason too: the same bytes give the same answer.
    assert code == 0 and f"; {len(first) + 1} result(s) reused from an earlier run, 0 read anew;" in err
    assert read_parquet(out / "sessions.parquet") == first
    with open(fleet / CODEX_KEEPS, "ab") as log:  # a session goes on: only it is read again
        log.write(b'{"timestamp":"2026-01-01T00:10:00Z","type":"response_item","payload":{"type":"message","role":"user",'
                  b'"content":[{"type":"input_text","text":"Never delete migrations."}]}}\n')
    code, _, err = audit(capsys, fleet, "--out", out)
    assert code == 0 and f"; {len(first)} result(s) reused from an earlier run, 1 read anew;" in err
    changed = rows_by_name(out)[CODEX_KEEPS]
    assert changed["messages"] == rows_by_name_of(first)[CODEX_KEEPS]["messages"] + 1
    assert changed["content_digest"] != rows_by_name_of(first)[CODEX_KEEPS]["content_digest"]


def rows_by_name_of(rows):
    return {row["path"].rsplit("/", 1)[-1]: row for row in rows}


def test_worker_processes_give_the_same_rows(fleet, tmp_path, capsys, monkeypatch):
    from ctxtop.tui.commands.fleet import engines

    monkeypatch.setattr(engines, "TASKS_PER_WORKER", 3)  # workers replaced several times over the folder
    assert audit(capsys, fleet, "--out", tmp_path / "one", "--no-reuse")[0] == 0
    assert audit(capsys, fleet, "--out", tmp_path / "two", "--jobs", "2", "--no-reuse")[0] == 0
    for table in ("sessions.parquet", "compactions.parquet"):
        assert read_parquet(tmp_path / "one" / table) == read_parquet(tmp_path / "two" / table)
    assert (tmp_path / "one" / "skipped").read_text() == (tmp_path / "two" / "skipped").read_text()


def test_worker_processes_start_well_beside_a_folder_named_ctxtop(tmp_path):
    # A clone's parent holds a folder named ctxtop: with an editable install, a process started there (python -m,
    # the workers' fork server) imported it as a namespace package, and every session was skipped for the
    # version its row records ("module 'ctxtop' has no attribute '__version__'").
    (tmp_path / "ctxtop").mkdir()
    command = [sys.executable, "-m", "ctxtop", "audit", str(DATA / CODEX_KEEPS), str(DATA / "claude_compact.jsonl"),
               "--out", "out", "--jobs", "2", "--no-reuse"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "2 session(s) audited, 0 skipped" in result.stderr, result.stderr
    assert all(row["ctxtop_version"] not in (None, "") for row in read_parquet(tmp_path / "out" / "sessions.parquet"))


@pytest.mark.parametrize("failure, reason", [
    (RuntimeError("a bug"), "internal error: RuntimeError: a bug"),
    # (the machine's memory, not the log's bytes: a run with fewer jobs beside it reads it; it was skipped for good)
    (MemoryError(), "out of memory while auditing it"),
])
def test_a_session_skipped_for_a_bug_of_ctxtops_is_audited_again_next_run(tmp_path, capsys, monkeypatch, failure, reason):
    from ctxtop.context.fleet import session

    def broken(*_args):
        raise failure

    working = session._audit
    monkeypatch.setattr(session, "_audit", broken)
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "one")
    assert code == 0 and "0 session(s) audited, 1 skipped" in err
    assert reason in (tmp_path / "one" / "skipped").read_text()
    monkeypatch.setattr(session, "_audit", working)  # (not undo(): that would also give back the real cache folder)
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "two")  # not the skip kept from the first run
    assert code == 0 and "1 session(s) audited, 0 skipped; 0 result(s) reused from an earlier run, 1 read anew" in err


def test_the_per_session_function_never_raises_and_cleans_log_text(tmp_path):
    hostile = tmp_path / "a\x1b]52;c;aGk=\x07b.jsonl"
    shutil.copy(DATA / CODEX_KEEPS, hostile)
    result = audit_session(str(hostile))
    assert result.row is not None and "\x1b" not in result.row["path"] and "\x07" not in result.row["path"]
    assert audit_session(str(tmp_path / "missing.jsonl")).skipped
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert audit_session(str(empty)).skipped


def test_file_names_reach_the_tables_and_reports_without_control_sequences_when_reused_too(tmp_path, capsys):
    folder = tmp_path / "names"
    folder.mkdir()
    hostile = "ok\x1b]0;PWNED\x07\u202e.jsonl"
    shutil.copy(DATA / CODEX_KEEPS, folder / hostile)
    try:  # a byte that is not UTF-8 (Latin-1 "café"): os.fsdecode reads it as a lone surrogate
        undecodable = os.fsdecode(b"caf\xe9.jsonl")
        shutil.copy(demo_path(), folder / undecodable)
        junk = os.fsdecode(b"junk\xff.jsonl")
        (folder / junk).write_bytes(b"not a log\n")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses file names that are not UTF-8")
    runs = []
    for out in (tmp_path / "first", tmp_path / "reused"):
        code, _, err = audit(capsys, folder, "--out", out)
        assert code == 0 and "Traceback" not in err, err
        runs.append(out)
    assert "; 3 result(s) reused from an earlier run, 0 read anew;" in err  # the second run read nothing anew
    for out in runs:
        paths = {row["path"].rsplit("/", 1)[-1] for row in read_parquet(out / "sessions.parquet")}
        # Spelled out as bash's $'…' spells them: printable, one name per file, and the report's command opens it.
        assert paths == {"ok\\x1b]0;PWNED\\x07\\u202e.jsonl", "caf\\xe9.jsonl"}
        assert {row["path"].rsplit("/", 1)[-1] for row in read_parquet(out / "compactions.parquet")} <= paths
        skipped = (out / "skipped").read_text(encoding="utf-8")
        assert skipped.startswith(f"{folder}/junk\\xff.jsonl\t")
        for name in ("skipped", "report.md", "report.html"):
            text = (out / name).read_text(encoding="utf-8")
            assert not any(ch in text for ch in "\x1b\x07\u202e"), name
    assert read_parquet(runs[0] / "sessions.parquet") == read_parquet(runs[1] / "sessions.parquet")


def test_two_names_that_clean_alike_stay_two_and_each_command_opens_its_own(tmp_path, capsys):
    from ctxtop.context.fleet.report import open_command

    folder = tmp_path / "p"
    folder.mkdir()
    shutil.copy(DATA / CODEX_KEEPS, folder / "a.jsonl")
    shutil.copy(demo_path(), folder / "a\x1b[0m.jsonl")
    assert audit(capsys, folder, "--out", tmp_path / "out")[0] == 0
    assert sorted(row["path"].rsplit("/", 1)[-1] for row in read_parquet(tmp_path / "out" / "sessions.parquet")) == [
        "a.jsonl", "a\\x1b[0m.jsonl"]
    assert open_command({"path": "a\\x1b[0m.jsonl", "first_finding_at": 30}) == "ctxtop $'a\\x1b[0m.jsonl' --at 30"
    assert open_command({"path": "-rf.jsonl", "first_finding_at": None}) == "ctxtop ./-rf.jsonl"  # not an option
    # An object in a store is opened once copied here (ctxtop opens local files; `ctxtop s3://…` says so).
    assert open_command({"path": "s3://logs/p/s.jsonl", "first_finding_at": 3}) == "ctxtop s.jsonl --at 3 (once s3://logs/p/s.jsonl is copied here)"


def test_bad_arguments_and_a_missing_extra_are_one_line(tmp_path, capsys, monkeypatch):
    code, _, err = audit(capsys, tmp_path / "nothing-here", "--out", tmp_path / "out")
    # A PATH that does not exist is a skipped entry, not a crash; the run says so and fails (exit 2).
    assert code == 2 and "0 session(s) audited, 1 skipped" in err and "Traceback" not in err
    assert "no such file or folder" in (tmp_path / "out" / "skipped").read_text()
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code, _, err = audit(capsys, fifo, "--out", tmp_path / "o1")  # named on its own: never opened, so never waited on
    assert code == 0 and "pipe.jsonl\tnot a regular file" in (tmp_path / "o1" / "skipped").read_text()
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "o2", "--storage-option", "novalue")
    assert code == 2 and err.count("\n") == 1 and "KEY=VALUE" in err
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "o3", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and "--engine dask" in err
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "o5", "--encoding", "nope")
    assert code == 2 and err.count("\n") == 1 and "unknown encoding 'nope'" in err and not (tmp_path / "o5").exists()
    monkeypatch.setitem(sys.modules, "duckdb", None)  # as if the extra were not installed
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "o4")
    assert code == 2 and err.count("\n") == 1 and "pip install 'ctxtop[fleet]'" in err and "duckdb" in err
    assert not (tmp_path / "o4").exists()


def test_the_dask_engine_gives_the_same_rows(fleet, tmp_path, capsys):
    pytest.importorskip("distributed")
    assert audit(capsys, fleet, "--out", tmp_path / "local", "--no-reuse")[0] == 0
    code, _, err = audit(capsys, fleet, "--out", tmp_path / "dask", "--engine", "dask", "--jobs", "2", "--no-reuse")
    assert code == 0, err
    for table in ("sessions.parquet", "compactions.parquet"):
        assert read_parquet(tmp_path / "local" / table) == read_parquet(tmp_path / "dask" / table)
    assert (tmp_path / "local" / "skipped").read_text() == (tmp_path / "dask" / "skipped").read_text()


def test_the_dask_engine_uses_an_existing_cluster(fleet, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    assert audit(capsys, fleet / CODEX_KEEPS, fleet / "demo_session.jsonl", "--out", tmp_path / "local")[0] == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            code, _, err = audit(capsys, fleet / CODEX_KEEPS, fleet / "demo_session.jsonl", "--out", tmp_path / "dask",
                                 "--engine", "dask", "--scheduler", cluster.scheduler_address, "--no-reuse")
            assert code == 0, err
            assert sum(client.run(lambda: 1).values()) == 1  # the cluster is still up: the run left it as it found it
    assert read_parquet(tmp_path / "local" / "sessions.parquet") == read_parquet(tmp_path / "dask" / "sessions.parquet")


def test_the_dask_engine_shows_nothing_of_dask_even_when_its_workers_complain_at_shutdown(tmp_path):
    pytest.importorskip("distributed")
    from ..dask_shutdown_noise import CALLBACK_FAILED, HEARTBEAT_FAILED

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "tests.dask_shutdown_noise", "audit", str(DATA / CODEX_KEEPS),
                             str(demo_path()), "--out", str(tmp_path / "out"), "--engine", "dask", "--jobs", "2", "--no-reuse"],
                            cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout == "", result.stderr
    # Only ctxtop's own line: neither Dask's logs nor a traceback, from the workers or from this process.
    assert result.stderr.startswith("ctxtop: 2 session(s) audited, 0 skipped;") and result.stderr.count("\n") == 1, result.stderr
    assert HEARTBEAT_FAILED not in result.stderr and CALLBACK_FAILED not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("address", ["http-port", "garbage", "http://127.0.0.1:1", "tls://127.0.0.1:1"])
def test_a_scheduler_address_that_is_no_dask_schedulers_is_one_line(tmp_path, capsys, monkeypatch, address):
    pytest.importorskip("distributed")
    from ctxtop.tui.commands.fleet import engines

    monkeypatch.setattr(engines, "SCHEDULER_SECONDS", 2)
    with socket.socket() as server:  # a service that takes the connection and says nothing (an HTTP port, waiting for a request)
        server.bind(("127.0.0.1", 0))
        server.listen()
        if address == "http-port":
            address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        code, out, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out", "--engine", "dask", "--scheduler", address,
                               "--no-reuse")  # (it waited for ever, or was an internal error)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"ctxtop: error: cannot reach the Dask scheduler at {address}: ") and "internal error" not in err


def test_a_local_dask_cluster_that_cannot_start_is_one_line(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")

    def no_cluster(*args, **kwargs):
        raise OSError("[Errno 24] Too many open files")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out", "--engine", "dask", "--no-reuse")
    assert code == 2 and err == "ctxtop: error: cannot start a local Dask cluster: OSError: [Errno 24] Too many open files\n"


def test_a_local_dask_cluster_gets_no_more_workers_than_sessions_to_audit(tmp_path, capsys, monkeypatch):
    # --jobs 64 on one session started 64 worker processes (some 100 MB each), where the local engine starts one.
    distributed = pytest.importorskip("distributed")
    asked = []

    def counted(*args, **kwargs):
        asked.append(kwargs.get("n_workers"))
        raise OSError("not started in this test")

    monkeypatch.setattr(distributed, "LocalCluster", counted)
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out", "--engine", "dask", "--jobs", "64", "--no-reuse")
    assert code == 2 and asked == [1], err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def s3_server(monkeypatch):
    """A real S3-compatible server (moto's server mode) on a free local port: no network, nothing mocked in-process."""
    server_module = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    port = _free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def test_s3_in_and_out_round_trip(fleet, tmp_path, capsys, s3_server):
    import s3fs

    options = {"endpoint_url": s3_server, "key": "testing", "secret": "testing"}
    store = s3fs.S3FileSystem(skip_instance_cache=True, **options)
    store.mkdir("fleet-bucket")
    for name in ("demo_session.jsonl", CODEX_KEEPS, "garbage.jsonl"):
        store.put_file(str(fleet / name), f"fleet-bucket/logs/{name}")
    flags = [f"--storage-option={key}={value}" for key, value in options.items()]
    code, _, err = audit(capsys, "s3://fleet-bucket/logs", "--out", "s3://fleet-bucket/audit", *flags)
    assert code == 0, err
    assert sorted(p.rsplit("/", 1)[-1] for p in store.ls("fleet-bucket/audit", refresh=True)) == [
        "compactions.parquet", "report.html", "report.md", "sessions.parquet", "skipped"]
    store.get_file("fleet-bucket/audit/sessions.parquet", str(tmp_path / "sessions.parquet"))
    rows = rows_by_name_of(read_parquet(tmp_path / "sessions.parquet"))
    assert sorted(rows) == ["codex_local_compaction.jsonl", "demo_session.jsonl"]
    assert rows["demo_session.jsonl"]["path"] == "s3://fleet-bucket/logs/demo_session.jsonl"
    assert (rows["demo_session.jsonl"]["retention"], rows[CODEX_KEEPS]["retention"]) == (0.0, 1.0)
    local = tmp_path / "local"
    assert audit(capsys, fleet / "demo_session.jsonl", fleet / CODEX_KEEPS, "--out", local)[0] == 0
    same = ("rules", "rules_kept_at_end", "violations", "compactions", "tool_calls", "cache_rewrite_usd", "constraint_evaporation")
    for name, row in rows_by_name(local).items():
        assert {k: rows[name][k] for k in same} == {k: row[k] for k in same}
    assert "s3://fleet-bucket/logs/garbage.jsonl\t" in store.cat_file("fleet-bucket/audit/skipped").decode()
    code, _, err = audit(capsys, "s3://fleet-bucket/logs", "--out", "s3://fleet-bucket/audit", *flags)
    assert code == 0 and "; 3 result(s) reused from an earlier run, 0 read anew" in err  # the store's ETag stands for the content


MAROT = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.mark.skipif(not MAROT.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_session_in_a_store_comes_with_its_sub_agents_and_gives_the_local_rows(tmp_path, capsys, s3_server):
    import s3fs

    options = {"endpoint_url": s3_server, "key": "testing", "secret": "testing"}
    store = s3fs.S3FileSystem(skip_instance_cache=True, **options)
    store.mkdir("agents-bucket")
    store.put_file(str(MAROT), f"agents-bucket/p/{MAROT.name}")
    for transcript in (MAROT.with_suffix("") / "subagents").iterdir():
        store.put_file(str(transcript), f"agents-bucket/p/{MAROT.stem}/subagents/{transcript.name}")
    flags = [f"--storage-option={key}={value}" for key, value in options.items()]
    assert audit(capsys, "s3://agents-bucket/p", "--out", tmp_path / "remote", *flags)[0] == 0
    local = tmp_path / "local-copy"
    local.mkdir()
    shutil.copy(MAROT, local / MAROT.name)
    shutil.copytree(MAROT.with_suffix("") / "subagents", local / MAROT.stem / "subagents")
    assert audit(capsys, local, "--out", tmp_path / "local")[0] == 0
    # The compaction sub-agent's logged call prices the compaction, from the store as from the disk.
    costs = ("summarization_tokens", "cost_usd", "cost_estimated", "payback_turns")
    remote, here = (read_parquet(tmp_path / out / "compactions.parquet") for out in ("remote", "local"))
    assert [{k: row[k] for k in costs} for row in remote] == [{k: row[k] for k in costs} for row in here]
    assert [row["cost_estimated"] for row in here] == [False]


COMPACTION_AGENT = "agent-acompact-fffbd0.jsonl"


def _while_and_after_the_summary_was_written(transcript):
    """The compaction sub-agent's transcript as a run saw it while Claude Code was still writing it (its prompts,
    not yet the summarizing call's reply), then whole."""
    whole = transcript.read_bytes()
    return whole[: whole.rstrip(b"\n").rfind(b"\n") + 1], whole


@pytest.mark.skipif(not MAROT.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
@pytest.mark.parametrize("given", ["prefix", "object"])
def test_a_session_in_a_store_is_read_again_when_only_a_sub_agent_changed(tmp_path, capsys, s3_server, given):
    import s3fs

    options = {"endpoint_url": s3_server, "key": "testing", "secret": "testing"}
    store = s3fs.S3FileSystem(skip_instance_cache=True, **options)
    bucket = f"changed-agents-{given}"  # (moto's server keeps the buckets of the tests before)
    store.mkdir(bucket)
    store.put_file(str(MAROT), f"{bucket}/p/{MAROT.name}")
    subagents = MAROT.with_suffix("") / "subagents"
    store.put_file(str(subagents / "agent-a881341.jsonl"), f"{bucket}/p/{MAROT.stem}/subagents/agent-a881341.jsonl")
    partial, whole = _while_and_after_the_summary_was_written(subagents / COMPACTION_AGENT)
    summary_key = f"{bucket}/p/{MAROT.stem}/subagents/{COMPACTION_AGENT}"
    store.pipe_file(summary_key, partial)
    url = f"s3://{bucket}/p" if given == "prefix" else f"s3://{bucket}/p/{MAROT.name}"
    flags = [f"--storage-option={key}={value}" for key, value in options.items()]
    code, _, err = audit(capsys, url, "--out", tmp_path / "first", *flags)
    assert code == 0 and "0 result(s) reused from an earlier run, 1 read anew" in err
    [first] = read_parquet(tmp_path / "first" / "compactions.parquet")
    assert first["cost_estimated"]  # no summarizing call logged yet: estimated
    store.pipe_file(summary_key, whole)  # the session's own object stays as it was
    code, _, err = audit(capsys, url, "--out", tmp_path / "second", *flags)
    assert code == 0 and "0 result(s) reused from an earlier run, 1 read anew" in err
    [second] = read_parquet(tmp_path / "second" / "compactions.parquet")
    assert not second["cost_estimated"] and second["summarization_tokens"] != first["summarization_tokens"]
    [row] = read_parquet(tmp_path / "second" / "sessions.parquet")
    code, _, err = audit(capsys, url, "--out", tmp_path / "third", *flags)
    assert code == 0 and "1 result(s) reused from an earlier run, 0 read anew" in err  # nothing changed since
    assert read_parquet(tmp_path / "third" / "sessions.parquet") == [row]
    store.rm(summary_key)  # a sub-agent gone is a change too
    code, _, err = audit(capsys, url, "--out", tmp_path / "fourth", *flags)
    assert code == 0 and "0 result(s) reused from an earlier run, 1 read anew" in err
    assert read_parquet(tmp_path / "fourth" / "compactions.parquet")[0]["cost_estimated"]


def _marot_in_a_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder holding a copy of the real session with its sub-agents: the folder, and its subagents/."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(MAROT, folder / MAROT.name)
    subagents = folder / MAROT.stem / "subagents"
    shutil.copytree(MAROT.with_suffix("") / "subagents", subagents)
    return folder, subagents


@pytest.mark.skipif(not MAROT.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_session_on_disk_is_read_again_when_only_a_sub_agent_changed(tmp_path, capsys):
    folder, subagents = _marot_in_a_project(tmp_path)
    partial, whole = _while_and_after_the_summary_was_written(subagents / COMPACTION_AGENT)
    (subagents / COMPACTION_AGENT).write_bytes(partial)
    code, _, err = audit(capsys, folder, "--out", tmp_path / "first")
    assert code == 0 and "0 result(s) reused from an earlier run, 1 read anew" in err
    [first] = read_parquet(tmp_path / "first" / "compactions.parquet")
    assert first["cost_estimated"]
    (subagents / COMPACTION_AGENT).write_bytes(whole)  # Claude Code finishes the summary; the session's file is as it was
    code, _, err = audit(capsys, folder, "--out", tmp_path / "second", "--jobs", "2")
    assert code == 0 and "0 result(s) reused from an earlier run, 1 read anew" in err
    [second] = read_parquet(tmp_path / "second" / "compactions.parquet")
    assert not second["cost_estimated"] and second["summarization_tokens"] != first["summarization_tokens"]
    code, _, err = audit(capsys, folder, "--out", tmp_path / "third")
    assert code == 0 and "1 result(s) reused from an earlier run, 0 read anew" in err
    assert read_parquet(tmp_path / "third" / "compactions.parquet") == [second]


AGTRACE = SHARED_FIXTURES / "claude-code" / "agtrace_claude_session.jsonl"


@pytest.mark.skipif(not AGTRACE.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_content_digest_takes_in_the_sub_agents_beside_a_session_that_are_its_own(tmp_path):
    from ctxtop.context.fleet.reuse import content_digest

    log = tmp_path / AGTRACE.name
    shutil.copy(AGTRACE, log)
    alone = content_digest(log)
    # Claude Code 2.0: a sub-agent's transcript lies beside the session, its records carrying the session's id.
    sidechain = AGTRACE.with_name("agtrace_claude_agent_sidechain.jsonl").read_bytes()
    own = tmp_path / "agent-0c4c3cf8.jsonl"
    own.write_bytes(sidechain)
    with_own = content_digest(log)
    assert with_own != alone
    with open(own, "ab") as transcript:  # the sub-agent goes on
        transcript.write(sidechain.splitlines(keepends=True)[-1])
    assert content_digest(log) not in (alone, with_own)
    own.unlink()
    assert content_digest(log) == alone
    # Another session's sub-agent beside it is none of this session's audit: it keeps its result.
    (tmp_path / "agent-other.jsonl").write_bytes(sidechain.replace(b"7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9", b"another-session"))
    assert content_digest(log) == alone


@pytest.mark.skipif(not MAROT.is_file() or not Path("/proc/self/mem").exists(), reason="needs the shared fixtures and /proc")
def test_a_sub_agent_transcript_that_cannot_be_read_does_not_skip_its_session(tmp_path, capsys):
    folder, subagents = _marot_in_a_project(tmp_path)
    # A regular file whose every read fails, for root too (whom chmod 000 does not stop): the audit goes on without it.
    (subagents / "agent-unreadable.jsonl").symlink_to("/proc/self/mem")
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out")
    assert code == 0 and "1 session(s) audited, 0 skipped" in err


@pytest.mark.skipif(not AGTRACE.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
@pytest.mark.parametrize("first", [
    b'{"sessionId": "decoy", "note": "a record without a type: the parser takes no id from it"}\n',
    b'{"type": "summary", "summary": "\\ud83d", "sessionId": "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"}\n'
    b'{"type": "summary", "summary": "resumed", "sessionId": "decoy"}\n',  # (a lone surrogate, which orjson refuses)
], ids=["no type", "a lone surrogate"])
def test_the_content_digest_takes_the_session_id_the_audit_takes(tmp_path, first):
    from ctxtop.context.fleet.reuse import content_digest
    from ctxtop.context.window.session import Session

    log = tmp_path / AGTRACE.name
    log.write_bytes(first + AGTRACE.read_bytes())
    own = tmp_path / "agent-0c4c3cf8.jsonl"
    own.write_bytes(AGTRACE.with_name("agtrace_claude_agent_sidechain.jsonl").read_bytes())
    assert [agent.path.name for agent in Session.open(log).subagents.agents] == [own.name]  # what the audit reads
    before = content_digest(log)
    with open(own, "ab") as transcript:  # the sub-agent goes on: the result kept for the session is stale
        transcript.write(own.read_bytes().splitlines(keepends=True)[-1])
    assert content_digest(log) != before


def test_a_listing_of_many_sessions_is_fingerprinted_in_time_that_grows_with_it(monkeypatch):
    from ctxtop.tui.commands.fleet import inputs

    sessions = 10_000
    found = {}
    for n in range(sessions):
        found[f"logs/s{n:05}.jsonl"] = {"ETag": f'"{n}"', "size": 100, "type": "file"}
        for agent in range(2):
            found[f"logs/s{n:05}/subagents/agent-{agent}.jsonl"] = {"ETag": '"a"', "size": 10, "type": "file"}

    class Store:  # what s3fs answers for a prefix of 30,000 objects
        def isdir(self, path):
            return True

        def find(self, path, detail=False):
            return dict(found)

    monkeypatch.setattr(inputs, "filesystem", lambda url, options: (Store(), "logs"))
    started = time.monotonic()
    listed = list(inputs.find_sessions(["s3://logs"], {}))
    # (each session went through the whole listing for its sub-agents: 10,000 sessions took a minute)
    assert time.monotonic() - started < 5
    assert len(listed) == sessions and all(item.problem is None and "+" in (item.fingerprint or "") for item in listed)


@pytest.mark.skipif(not AGTRACE.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_run_lists_a_folder_of_2_0_sub_agents_once_not_once_per_session(tmp_path, capsys, monkeypatch):
    session, sidechain = AGTRACE.read_bytes(), AGTRACE.with_name("agtrace_claude_agent_sidechain.jsonl").read_bytes()
    own_id = b"7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    folder = tmp_path / "project"
    folder.mkdir()
    for n in range(12):
        other_id = f"00000000-0000-0000-0000-{n:012}".encode()
        (folder / f"s{n}.jsonl").write_bytes(session.replace(own_id, other_id))
        for agent in range(3):
            (folder / f"agent-{n}x{agent}.jsonl").write_bytes(sidechain.replace(own_id, other_id))
    code, _, err = audit(capsys, folder, "--out", tmp_path / "first")
    assert code == 0 and "12 session(s) audited" in err
    listings = []
    glob = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: listings.append(pattern) or glob(self, pattern))
    code, _, err = audit(capsys, folder, "--out", tmp_path / "second")
    assert code == 0 and "12 result(s) reused from an earlier run, 0 read anew" in err
    # (each session's digest listed the folder and looked at every transcript in it: 5,000 of them beside 100
    # sessions took 7 s, and a project folder of 1,000 sessions minutes)
    assert listings.count("agent-*.jsonl") == 1


def test_an_object_the_store_did_not_give_is_fetched_again_by_the_next_run(tmp_path, capsys, monkeypatch):
    from ctxtop.tui.commands.fleet import storage

    fsspec = pytest.importorskip("fsspec")
    store = fsspec.filesystem("memory")  # (a store in this process: the run's one worker is this process)
    store.pipe("/h7-bucket/session.jsonl", demo_path().read_bytes())
    fetch = storage.fetch

    def throttled(*args, **kwargs):
        raise ConnectionError("503 Slow Down")

    monkeypatch.setattr(storage, "fetch", throttled)
    code, _, err = audit(capsys, "memory://h7-bucket", "--out", tmp_path / "first")
    assert code == 0 and "0 session(s) audited, 1 skipped" in err
    assert "cannot fetch it: ConnectionError: 503 Slow Down" in (tmp_path / "first" / "skipped").read_text()
    monkeypatch.setattr(storage, "fetch", fetch)
    code, _, err = audit(capsys, "memory://h7-bucket", "--out", tmp_path / "second")  # (it was skipped again, for good)
    store.rm("/h7-bucket", recursive=True)
    assert code == 0 and "1 session(s) audited, 0 skipped; 0 result(s) reused from an earlier run, 1 read anew" in err


def test_a_store_s_error_cut_to_a_reason_leaves_no_part_of_an_address_unmasked(tmp_path, capsys, monkeypatch):
    """A store's refusal (a listing, a fetch) is cut to 300 characters for `skipped`; cut by slicing, with no "…" where,
    an address across the cut reached the outputs as "jane.doe@exa", which --redact could not tell from a word."""
    from ctxtop.tui.commands.fleet import inputs, storage

    fsspec = pytest.importorskip("fsspec")
    fsspec.filesystem("memory").pipe("/h48-bucket/session.jsonl", demo_path().read_bytes())
    refusal = "Access Denied: " + "x" * 250 + " jane.doe@example.com owns it"

    def refused(*args, **kwargs):
        raise PermissionError(refusal)

    monkeypatch.setattr(storage, "fetch", refused)
    code, _, err = audit(capsys, "memory://h48-bucket", "--out", tmp_path / "fetched", "--redact")
    fsspec.filesystem("memory").rm("/h48-bucket", recursive=True)
    assert code == 0 and "1 skipped" in err, err

    class Store:  # a listing refused
        def isdir(self, path):
            raise PermissionError(refusal)

    monkeypatch.setattr(inputs, "filesystem", lambda url, options: (Store(), "h48-bucket"))
    code, _, err = audit(capsys, "s3://h48-bucket", "--out", tmp_path / "listed", "--redact")
    assert code == 2
    for out, text in (("fetched", ""), ("listed", err)):
        skipped = (tmp_path / out / "skipped").read_text()
        assert "jane" not in skipped + text and skipped.endswith("…\n"), skipped  # (cut before the address)


def test_the_fleet_extra_is_imported_only_when_an_audit_needs_it():
    import subprocess

    code = ("import sys, ctxtop.tui.cli, ctxtop.context.fleet.report, ctxtop.context.fleet.reuse; "
            "print(','.join(m for m in ('duckdb', 'dask', 'distributed', 'fsspec', 's3fs', 'ctxtop.tui.commands.fleet.engines') "
            "if m in sys.modules))")  # (nor the engines: every other command starts without them)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_every_kind_of_bad_file_is_skipped_with_its_reason_and_damaged_logs_are_audited(tmp_path, capsys):
    from ..tui.test_bad_input import BAD_FILES, DAMAGED

    folder = tmp_path / "bad"
    folder.mkdir()
    for name, data in {**BAD_FILES, **DAMAGED}.items():
        (folder / f"{name}.jsonl").write_bytes(data)
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out")
    assert code == 0 and "Traceback" not in err
    assert sorted(rows_by_name(tmp_path / "out")) == sorted(f"{name}.jsonl" for name in DAMAGED)
    skipped = dict(line.split("\t") for line in (tmp_path / "out" / "skipped").read_text().splitlines())
    assert sorted(skipped) == sorted(str(folder / f"{name}.jsonl") for name in BAD_FILES)
    assert all(reason and "internal error" not in reason for reason in skipped.values()), skipped


def test_a_path_given_that_does_not_exist_fails_the_run_after_the_others_are_audited(tmp_path, capsys):
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    code, _, err = audit(capsys, tmp_path / "missing", folder, "--out", tmp_path / "out")
    assert code == 2 and f"ctxtop: error: {tmp_path / 'missing'}: no such file or folder" in err.splitlines()
    assert sorted(rows_by_name(tmp_path / "out")) == [CODEX_KEEPS]  # the others are audited all the same
    code, _, err = audit(capsys, tmp_path / "missing", "--out", tmp_path / "out2")
    assert code == 2 and "0 session(s) audited, 1 skipped" in err
    # A URL that names no object is the same mistake (a typo in a CI job's key): it passed as a skipped row, exit 0.
    code, _, err = audit(capsys, "memory://ctxtop-test/missing.jsonl", folder, "--out", tmp_path / "out3")
    assert code == 2 and "ctxtop: error: memory:///ctxtop-test/missing.jsonl: no such object" in err, err
    assert sorted(rows_by_name(tmp_path / "out3")) == [CODEX_KEEPS]


def test_a_linked_folder_is_searched_once_and_a_link_back_up_is_no_loop(tmp_path, capsys):
    """A project folder linked into the folder searched was passed over without a word (a linked log was audited), so a
    team's collection of links to each machine's sessions audited none of them."""
    elsewhere = tmp_path / "elsewhere" / "project"
    elsewhere.mkdir(parents=True)
    shutil.copy(DATA / CODEX_KEEPS, elsewhere / CODEX_KEEPS)
    shutil.copytree(DATA / "cline_task", elsewhere / "cline_task")
    searched = tmp_path / "searched"
    searched.mkdir()
    shutil.copy(demo_path(), searched / "demo_session.jsonl")
    (searched / "project").symlink_to(elsewhere, target_is_directory=True)
    (searched / "again").symlink_to(elsewhere, target_is_directory=True)  # the same folder twice: its sessions once
    (elsewhere / "up").symlink_to(tmp_path, target_is_directory=True)  # a loop: the walk still ends
    code, _, err = audit(capsys, searched, "--out", tmp_path / "out")
    assert code == 0, err
    rows = read_parquet(tmp_path / "out" / "sessions.parquet")
    assert sorted(Path(row["path"]).name for row in rows) == sorted([CODEX_KEEPS, "cline_task", "demo_session.jsonl"])


def test_a_link_to_no_log_in_a_folder_is_skipped_with_its_reason(tmp_path, capsys):
    """A log name linked to a file gone (a disk no longer mounted) or linked back to itself was left out without a word:
    the totals were short by sessions that neither `skipped` nor the report named."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    (folder / "gone.jsonl").symlink_to(tmp_path / "unmounted" / "gone.jsonl")
    (folder / "loop-a.jsonl").symlink_to(folder / "loop-b.jsonl")
    (folder / "loop-b.jsonl").symlink_to(folder / "loop-a.jsonl")
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out")
    assert code == 0 and "1 session(s) audited, 3 skipped" in err, err
    skipped = dict(line.split("\t") for line in (tmp_path / "out" / "skipped").read_text().splitlines())
    assert sorted(Path(name).name for name in skipped) == ["gone.jsonl", "loop-a.jsonl", "loop-b.jsonl"]
    assert set(skipped.values()) == {"a link to no file (its target is gone, or links back to it)"}


def test_redact_leaves_the_content_digest_whole(tmp_path, capsys, monkeypatch):
    """--redact masked every string of the tables, ctxtop's own digests too: one in 700 local sessions (one in 60 from a
    store with sub-agents: "…:401870+0021530…") had a run of digits read as a phone number, "[REDACTED:phone]" in its
    content_digest, which then matched no other run's."""
    from ctxtop.context.fleet import reuse

    digest = "8aaf5b82c7ca7158b44cb22651b1cb67:401870+002153054d861d1fc3c9eb6c46ebb8c8"  # (as a store's fingerprint is)
    monkeypatch.setattr(reuse, "content_digest", lambda *args: digest)  # (the run imports it from there as it starts)
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out", "--redact", "--no-reuse")
    assert code == 0, err
    [row] = read_parquet(tmp_path / "out" / "sessions.parquet")
    assert row["content_digest"] == digest


def test_redact_masks_the_paths_the_run_names_on_stderr(tmp_path, capsys):
    """With --redact, `skipped` masked the address in a PATH that does not exist, and stderr named it whole (a CI log
    is shared as the tables are)."""
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    missing, out = tmp_path / "jane.doe@example.com", tmp_path / "out-for-bob@example.org"
    code, _, err = audit(capsys, missing, folder, "--out", out, "--redact")
    assert code == 2 and "jane.doe" not in err and "bob@" not in err, err
    assert f"ctxtop: error: {tmp_path}/[REDACTED:email]: no such file or folder" in err.splitlines(), err
    assert (out / "skipped").read_text() == f"{tmp_path}/[REDACTED:email]\tno such file or folder\n"


def test_pins_are_tracked_in_every_session_and_a_changed_pins_file_audits_again(tmp_path, capsys):
    folder = tmp_path / "two"
    folder.mkdir()
    shutil.copy(demo_path(), folder / "demo_session.jsonl")
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "no-force-push"\ntext = "Never force-push a shared branch."\n', encoding="utf-8")
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out", "--pins", pins)
    assert code == 0, err
    rows = rows_by_name(tmp_path / "out")
    # The pin joins the detected rules; no session states it, so none keeps it.
    assert (rows["demo_session.jsonl"]["rules"], rows["demo_session.jsonl"]["rules_kept_at_end"]) == (4, 0)
    assert (rows[CODEX_KEEPS]["rules"], rows[CODEX_KEEPS]["rules_kept_at_end"], rows[CODEX_KEEPS]["retention"]) == (3, 2, round(2 / 3, 6))
    assert audit(capsys, folder, "--out", tmp_path / "out", "--pins", pins)[2].count("2 result(s) reused") == 1
    pins.write_text('[[pin]]\ntext = "Error codes must keep the ERR_ prefix."\n', encoding="utf-8")  # stated in the Codex session
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out", "--pins", pins)
    assert code == 0 and "0 result(s) reused from an earlier run, 2 read anew" in err
    assert rows_by_name(tmp_path / "out")[CODEX_KEEPS]["retention"] == 1.0
    pins.write_text("[[pin]\n", encoding="utf-8")
    code, _, err = audit(capsys, folder, "--out", tmp_path / "out2", "--pins", pins)
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "out2").exists()


def test_the_content_digest_follows_the_bytes_and_the_file_names(tmp_path):
    from ctxtop.context.fleet.reuse import content_digest

    log = DATA / CODEX_KEEPS
    copy = tmp_path / "copy.jsonl"
    shutil.copy(log, copy)
    assert content_digest(copy) == content_digest(log)  # the bytes, not the name or place of a single log
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 1
    copy.write_bytes(bytes(data))
    assert content_digest(copy) != content_digest(log)
    assert len(content_digest(log)) == 32  # 128 bits (XXH3-128), as the README says of the column

    folder = tmp_path / "task"
    shutil.copytree(DATA / "cline_task", folder)
    before = content_digest(folder)
    first = sorted(p for p in folder.rglob("*") if p.is_file())[0]
    first.rename(first.with_name(first.name + ".moved"))
    assert content_digest(folder) != before  # a folder's files are digested with their names


@pytest.mark.parametrize("out", ["", "  "])
def test_an_empty_out_is_one_line_not_the_current_folder(tmp_path, capsys, monkeypatch, out):
    # An empty --out (a script's unset variable) was the current folder: the five outputs landed wherever the run
    # happened to be, the sessions' own folder included.
    monkeypatch.chdir(tmp_path)
    code, stdout, err = audit(capsys, DATA / CODEX_KEEPS, "--out", out)
    assert code == 2 and stdout == "" and err == "ctxtop: error: --out needs a folder (or a URL) for the outputs\n"
    assert list(tmp_path.iterdir()) == []


def test_an_out_that_is_a_file_is_refused_in_one_line_that_says_so(tmp_path, capsys):
    # `--out` naming a file (the log itself, a report of last week) audited every session first, then said
    # "cannot write …: File exists", as if the folder were there.
    log = tmp_path / "s.jsonl"
    log.write_bytes((DATA / CODEX_KEEPS).read_bytes())
    code, stdout, err = audit(capsys, log, "--out", str(log))
    assert code == 2 and stdout == "" and err == f"ctxtop: error: --out {log}: not a folder\n"
    assert log.read_bytes() == (DATA / CODEX_KEEPS).read_bytes()


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_scheduler_address_is_one_line_not_a_local_cluster(tmp_path, capsys, monkeypatch, address):
    distributed = pytest.importorskip("distributed")

    def no_local_cluster(*args, **kwargs):
        raise AssertionError("a local cluster was started for an empty --scheduler")

    monkeypatch.setattr(distributed, "LocalCluster", no_local_cluster)
    code, out, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out", "--engine", "dask", "--scheduler", address,
                           "--no-reuse")
    assert code == 2 and out == "" and err == "ctxtop: error: --scheduler needs an address (tcp://host:8786)\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not AGTRACE.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
@pytest.mark.parametrize("owner", [b'{"a": 1}', b"[1]", b"5", b"null"])
def test_a_transcript_beside_a_session_whose_first_record_names_no_string_id_belongs_to_none(tmp_path, capsys, owner):
    from ctxtop.context.fleet.reuse import content_digest

    log = tmp_path / AGTRACE.name
    shutil.copy(AGTRACE, log)
    alone = content_digest(log)
    # (an id that is an object was a dict key: the digest of every session of the folder failed, the run an internal error)
    (tmp_path / "agent-odd.jsonl").write_bytes(b'{"type": "user", "sessionId": ' + owner + b"}\n")
    assert content_digest(log) == alone
    code, _, err = audit(capsys, log, "--out", tmp_path / "out")
    assert code == 0 and "1 session(s) audited, 0 skipped" in err


def test_a_session_whose_audit_calls_sys_exit_is_skipped_and_the_others_complete_on_dask(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")

    class ExitOnTheDemo(distributed.WorkerPlugin):  # (local: pickled by value; set up again in a worker restarted)
        def setup(self, worker) -> None:
            from ctxtop.context.fleet import session

            working = session._audit

            def exiting(path, *args):
                if path.endswith("demo_session.jsonl"):
                    sys.exit(3)  # a library that exits instead of raising
                return working(path, *args)

            session._audit = exiting

    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(demo_path(), folder / "demo_session.jsonl")
    shutil.copy(DATA / CODEX_KEEPS, folder / CODEX_KEEPS)
    shutil.copy(DATA / "claude_compact.jsonl", folder / "claude_compact.jsonl")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            client.register_plugin(ExitOnTheDemo())
            code, _, err = audit(capsys, folder, "--out", tmp_path / "out", "--engine", "dask", "--scheduler",
                                 cluster.scheduler_address, "--no-reuse")
    assert code == 0 and "2 session(s) audited, 1 skipped" in err, err
    skipped = (tmp_path / "out" / "skipped").read_text()
    assert "demo_session.jsonl\tinternal error: SystemExit" in skipped and "Killed" not in skipped, skipped


def test_a_session_whose_audit_calls_sys_exit_is_skipped_in_this_process(tmp_path, capsys, monkeypatch):
    from ctxtop.context.fleet import session

    def exiting(*_args):
        sys.exit()

    monkeypatch.setattr(session, "_audit", exiting)
    assert audit_session(str(DATA / CODEX_KEEPS)).skipped == "internal error: SystemExit: it asked to exit (None)"
    code, _, err = audit(capsys, DATA / CODEX_KEEPS, "--out", tmp_path / "out")
    assert code == 0 and "0 session(s) audited, 1 skipped" in err


def test_redact_masks_the_lost_facts_and_every_log_text_the_audit_writes(tmp_path, capsys):
    """`audit` wrote the facts a compaction lost as the log has them ("negative_rules: Never push to main without
    paging jöhn.ops@…"), and took no --redact: the tables a team shares held the addresses, phones and keys."""
    address, phone, key = "jöhn.ops@münchen.de", "+1 415 555 2671", "ghp_R7kLm2Qx9Vb4Nz8Wc1Yt6Hs3Jd5Pf0Ag7Eu"
    anthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"  # (its body was a lost identifier of its own)
    folder = tmp_path / "sessions"
    folder.mkdir()
    said = f"Never push to main without paging {address} on {phone} and rotating {key} and {anthropic} first."
    (folder / "claude_compact.jsonl").write_text((DATA / "claude_compact.jsonl").read_text().replace("Never push to main.", said))
    (folder / f"handover-{address}.jsonl").write_bytes(b"not a log\n")  # skipped: its name is in `skipped` and the reports
    secrets = (address, "jöhn", "ops@", phone, "415 555", key[:8], "AbCdEfGh")
    shown = {}
    for run, flags in (("plain", []), ("redacted", ["--redact"])):
        code, _, err = audit(capsys, folder, "--out", tmp_path / run, *flags)
        assert code == 0, err
        [compaction] = read_parquet(tmp_path / run / "compactions.parquet")
        shown[run] = [" ".join(compaction["lost_facts"]), str(read_parquet(tmp_path / run / "sessions.parquet"))]
        shown[run] += [(tmp_path / run / name).read_text(encoding="utf-8") for name in ("skipped", "report.md", "report.html")]
    assert address in shown["plain"][0] and phone in shown["plain"][0]  # the log's words, without --redact
    for text in shown["redacted"]:
        assert not any(secret in text for secret in secrets), text
    assert "[REDACTED:email]" in shown["redacted"][0] and "[REDACTED:phone]" in shown["redacted"][0]
    assert "REDACTED:email" in shown["redacted"][2]  # the skipped file's name


def test_a_model_name_or_a_time_of_a_hundred_kilobytes_is_not_given_whole(tmp_path, capsys):
    # The log names its model and times its lines: hostile ones filled the fleet's tables and the snapshot with 100 KB.
    hostile = tmp_path / "long_model.jsonl"
    text = (DATA / CODEX_KEEPS).read_text().replace("gpt-5.1-codex-max", "gpt-" + "x" * 100_000)
    hostile.write_text(re.sub(r'"timestamp": *"[^"]*"', '"timestamp": "2025-' + "1" * 100_000 + '"', text))
    row = audit_session(str(hostile)).row
    assert row is not None and row["model"].startswith("gpt-xxx") and len(row["model"]) <= 120
    assert row["started"] is None
    assert main(["export", str(hostile)]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["source"]["model"].startswith("gpt-xxx") and len(snapshot["source"]["model"]) <= 120
    assert snapshot["at"]["timestamp"] is None


@pytest.mark.parametrize(("written", "started"), [
    ("2025-05-12T20:27:37.000000-04:00", "2025-05-13T00:27:37.000Z"),  # (Inspect: the local time and its offset)
    ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z"),
    ("2026-01-01T00:00:00.123+00:00", "2026-01-01T00:00:00.123Z"),
    ("2026-01-01T09:00:00", "2026-01-01T09:00:00"),  # no offset: its zone is unknown, kept as written
    ("yesterday", "yesterday"),
])
def test_started_is_given_in_utc_whatever_offset_the_log_wrote(tmp_path, written, started):
    # One table sorts sessions by when they started: a local time with its offset sorted among UTC ones by its digits.
    log = tmp_path / "session.jsonl"
    log.write_text((DATA / "claude_compact.jsonl").read_text().replace("2026-01-01T00:00:00Z", written, 1))
    row = audit_session(str(log)).row
    assert row is not None and row["started"] == started
