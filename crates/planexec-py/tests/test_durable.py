"""Runs recorded in a store outlive the Python process: a plan approved later
from another process, and a run resumed after its process was killed, with
no finished step run again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import planexec
from conftest import plan_of
from scripted_server import content, json_content

HERE = os.path.dirname(os.path.abspath(__file__))


def python(code: str, **env: str) -> subprocess.Popen:
    """Another Python process running ``code`` (with this suite's helpers importable)."""
    full_env = {**os.environ, "PYTHONPATH": HERE, **env}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_plan_approved_later_from_another_process_runs_on_resume(server, make_agent, tmp_path):
    written = []

    @planexec.tool(effect="writes_workspace")
    def publish(text: str) -> str:
        written.append(text)
        return "published"

    store = str(tmp_path / "runs.db")
    server.on("planner", json_content(plan_of(("s1", "publish", {"text": "news"}, ()))))
    server.always("synthesizer", content("published the news"))
    agent = make_agent([publish], store=store, approval="later")
    waiting = agent.run("publish the news")
    assert waiting.status == "awaiting_approval", waiting.report
    assert written == []

    other = python(
        f"""
        import planexec
        print(planexec.approve({waiting.run_id!r}, store={store!r}, by="reviewer"))
        """
    )
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0, err
    assert "plan" in out

    # In mode "ask" (the default), the call with side effects waits for its own decision.
    paused = agent.resume(waiting.run_id)
    assert paused.status == "awaiting_approval", paused.report
    assert paused.report["waiting"]["step_id"] == "s1", paused.report["waiting"]
    assert written == []
    agent.approve(waiting.run_id, step="s1")
    finished = agent.resume(waiting.run_id)
    assert finished.status == "succeeded", finished.report
    assert written == ["news"]
    assert server.roles().count("planner") == 1
    assert planexec.report(waiting.run_id, store=store).status == "succeeded"


CHILD = """
    import json, os, time, planexec

    log = os.environ["CALLS_LOG"]

    @planexec.tool(effect="read_only")
    def fetch(key: str) -> str:
        with open(log, "a") as f:
            f.write(key + "\\n")
        if key == "slow" and os.environ.get("HANG") == "1":
            time.sleep(600)
        return "got " + key

    agent = planexec.Agent(
        model="openai-compatible/scripted", base_url=os.environ["BASE_URL"], api_key="sk-test",
        tools=[fetch], workspace=os.environ["WS"], store=os.environ["STORE"], verify=False,
    )

    def on_event(event):
        if event.kind == "run_started":
            print(json.dumps({"run_id": event.data["run_id"]}), flush=True)

    if os.environ.get("RESUME"):
        result = agent.resume(os.environ["RESUME"])
    else:
        result = agent.run("fetch both", on_event=on_event)
    print(json.dumps({"status": result.status, "answer": result.answer}), flush=True)
"""


def test_a_run_killed_with_its_process_resumes_without_repeating_finished_steps(server, workspace, tmp_path):
    calls_log = tmp_path / "calls.log"
    env = {
        "CALLS_LOG": str(calls_log),
        "BASE_URL": server.base_url,
        "WS": str(workspace),
        "STORE": str(tmp_path / "runs.db"),
    }
    plan = plan_of(("s1", "fetch", {"key": "fast"}, ()), ("s2", "fetch", {"key": "slow"}, ("s1",)))
    server.on("planner", json_content(plan))
    server.always("synthesizer", content("both fetched"))

    child = python(CHILD, HANG="1", **env)
    run_id = json.loads(child.stdout.readline())["run_id"]
    deadline = time.monotonic() + 60
    while "slow" not in (calls_log.read_text() if calls_log.exists() else ""):
        assert time.monotonic() < deadline and child.poll() is None, child.stderr.read()
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)

    again = python(CHILD, RESUME=run_id, **env)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome == {"status": "succeeded", "answer": "both fetched"}, (out, err)
    # s1 finished before the kill and is not run again; s2 was in flight and is.
    assert calls_log.read_text().split() == ["fast", "slow", "slow"]
    assert server.roles().count("planner") == 1


CTRL_C_CHILD = """
    import asyncio, json, os, planexec

    @planexec.tool(effect="read_only")
    async def wait_long(name: str) -> str:
        open(os.environ["STARTED"], "w").close()
        await asyncio.sleep(60)
        return name

    agent = planexec.Agent(
        model="openai-compatible/scripted", base_url=os.environ["BASE_URL"], api_key="sk-test",
        tools=[wait_long], workspace=os.environ["WS"], store=os.environ["STORE"], verify=False,
    )

    def on_event(event):
        if event.kind == "run_started":
            print(json.dumps({"run_id": event.data["run_id"]}), flush=True)

    agent.run("wait", on_event=on_event)
"""


def test_ctrl_c_cancels_a_blocking_run_and_the_ledger_says_interrupted(server, workspace, tmp_path):
    started = tmp_path / "started"
    store = str(tmp_path / "runs.db")
    server.on("planner", json_content(plan_of(("s1", "wait_long", {"name": "x"}, ()))))
    server.always("synthesizer", content("unused"))
    child = python(CTRL_C_CHILD, STARTED=str(started), BASE_URL=server.base_url, WS=str(workspace), STORE=store)
    run_id = json.loads(child.stdout.readline())["run_id"]
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline and child.poll() is None, child.stderr.read()
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0 and "KeyboardInterrupt" in err, err
    assert planexec.report(run_id, store=store).status == "interrupted"
