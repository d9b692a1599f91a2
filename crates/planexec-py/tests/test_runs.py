"""Runs from Python: blocking, asyncio and streamed; plans reviewed, edited
and executed; approval callbacks; errors as exceptions."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import planexec
from conftest import plan_of
from scripted_server import content, json_content

intervals: dict = {}
loops_seen: dict = {}


def record(name: str, started: float) -> str:
    intervals[name] = (started, time.monotonic())
    return name


@planexec.tool(effect="read_only")
def slow_sync(name: str) -> str:
    """Wait a while (in a plain function)."""
    started = time.monotonic()
    time.sleep(0.6)
    return record(name, started)


@planexec.tool(effect="read_only")
async def slow_async(name: str) -> str:
    """Wait a while (in a coroutine)."""
    started = time.monotonic()
    loops_seen[name] = asyncio.get_running_loop()
    await asyncio.sleep(0.6)
    return record(name, started)


FOUR_IN_PARALLEL = plan_of(
    ("s1", "slow_sync", {"name": "a"}, ()),
    ("s2", "slow_sync", {"name": "b"}, ()),
    ("s3", "slow_async", {"name": "c"}, ()),
    ("s4", "slow_async", {"name": "d"}, ()),
)


def overlapping(names) -> bool:
    """Whether every pair of these calls ran at the same time for a while."""
    spans = [intervals[n] for n in names]
    latest_start = max(s for s, _ in spans)
    earliest_end = min(e for _, e in spans)
    return latest_start < earliest_end


def test_sync_and_async_tools_of_one_wave_run_at_the_same_time(server, make_agent):
    intervals.clear()
    server.on("planner", json_content(FOUR_IN_PARALLEL))
    server.always("synthesizer", content("all four"))
    result = make_agent([slow_sync, slow_async]).run("run all four")
    assert result.status == "succeeded", result.report
    assert result.answer == "all four"
    # Each call started before any other ended: they overlapped, none waited for another.
    assert overlapping("abcd"), intervals
    assert server.roles() == ["planner", "synthesizer"]


def test_arun_keeps_the_event_loop_going_and_runs_async_tools_on_it(server, make_agent):
    intervals.clear()
    loops_seen.clear()
    server.on("planner", json_content(FOUR_IN_PARALLEL))
    server.always("synthesizer", content("done"))
    agent = make_agent([slow_sync, slow_async])
    ticks = []

    async def main():
        async def ticker():
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.05)

        beat = asyncio.create_task(ticker())
        result = await agent.arun("run all four")
        beat.cancel()
        return result, asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert result.status == "succeeded", result.report
    assert loops_seen["c"] is loop and loops_seen["d"] is loop
    assert len(ticks) >= 5, "the event loop was blocked while the run went on"
    assert overlapping("abcd"), intervals


def test_stream_yields_the_runs_events_as_they_happen(server, make_agent):
    server.on("planner", json_content(plan_of(("s1", "slow_sync", {"name": "e"}, ()))))
    server.always("synthesizer", content("streamed"))
    stream = make_agent([slow_sync]).stream("one step")
    events = list(stream)
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started", kinds
    assert "step_started" in kinds and "step_finished" in kinds, kinds
    assert kinds.index("step_started") < kinds.index("step_finished")
    assert any(e.step == "s1" for e in events if e.kind == "step_finished")
    assert stream.result is not None and stream.result.answer == "streamed"


def test_a_plan_is_reviewed_edited_and_executed_without_a_second_planner_call(server, make_agent):
    calls = []

    @planexec.tool(effect="read_only")
    def lookup(key: str, limit: int = 10) -> str:
        """Look up a key in the catalogue."""
        calls.append((key, limit))
        return f"value of {key}"

    server.on("planner", json_content(plan_of(("s1", "lookup", {"key": "k1"}, ()))))
    server.always("synthesizer", content("compared"))
    agent = make_agent([lookup])
    plan = agent.plan("Look up k1")
    assert [s.tool for s in plan.steps] == ["lookup"] and plan.steps[0].args == {"key": "k1"}
    plan.steps[0].args["limit"] = 3
    plan.steps.append(planexec.Step(id="s2", description="and k2", tool="lookup", args={"key": "k2"}))
    result = agent.execute(plan)
    assert result.status == "succeeded", result.report
    assert sorted(calls) == [("k1", 3), ("k2", 10)]
    assert server.roles().count("planner") == 1


def test_an_invalid_plan_is_refused_before_anything_runs(make_agent):
    agent = make_agent()
    bad = planexec.Plan(goal="g", task="t", steps=[planexec.Step(id="s1", description="x", tool="no_such_tool")])
    with pytest.raises(planexec.PlanError, match="no_such_tool"):
        agent.execute(bad)


def test_an_approval_callback_that_refuses_runs_no_tool(server, make_agent):
    ran = []

    @planexec.tool(effect="writes_workspace")
    def send(text: str) -> str:
        ran.append(text)
        return "sent"

    server.on("planner", json_content(plan_of(("s1", "send", {"text": "hello"}, ()))))
    server.always("synthesizer", content("unused"))
    shown = []
    result = make_agent([send]).run("send hello", approve=lambda plan: shown.append(plan) or False)
    assert result.status == "rejected", result.report
    assert ran == []
    assert shown and shown[0].steps[0].tool == "send"
    with pytest.raises(planexec.Rejected):
        result.raise_for_status()


def test_a_confirmation_callback_decides_each_call_with_side_effects(server, make_agent):
    ran = []

    @planexec.tool(effect="writes_workspace")
    def send(text: str) -> str:
        ran.append(text)
        return "sent"

    plan = plan_of(("s1", "send", {"text": "yes"}, ()), ("s2", "send", {"text": "no"}, ()))
    server.on("planner", json_content(plan))
    server.always("synthesizer", content("one sent"))
    asked = []

    def confirm(step, args, effect):
        asked.append((step.id, args["text"], effect))
        return args["text"] == "yes"

    make_agent([send], mode="ask").run("send both", approve=lambda plan: True, confirm=confirm)
    assert ran == ["yes"]
    assert sorted(asked) == [("s1", "yes", "writes_workspace"), ("s2", "no", "writes_workspace")]


def test_bad_settings_raise_config_error_with_what_to_do(server, workspace):
    with pytest.raises(planexec.ConfigError, match="strategy"):
        planexec.Agent(model="openai-compatible/x", base_url=server.base_url, workspace=str(workspace), strategy="guess")
    with pytest.raises(planexec.ConfigError, match="not a folder"):
        planexec.Agent(model="openai-compatible/x", base_url=server.base_url, workspace=str(workspace / "missing"))
    with pytest.raises(planexec.ConfigError, match="store"):
        planexec.Agent(model="openai-compatible/x", base_url=server.base_url, workspace=str(workspace), approval="later")


def test_a_budget_stops_the_run_and_says_so(server, make_agent):
    server.on("planner", json_content(plan_of(("s1", "slow_sync", {"name": "f"}, ()))))
    server.always("synthesizer", content("unused"))
    result = make_agent([slow_sync], max_tokens=1).run("a task")
    assert result.status == "budget_exhausted", result.report
    with pytest.raises(planexec.BudgetExceeded):
        result.raise_for_status()


def test_the_gil_is_released_while_a_run_waits(server, make_agent):
    server.on("planner", json_content(plan_of(("s1", "slow_sync", {"name": "g"}, ()))))
    server.always("synthesizer", content("done"))
    agent = make_agent([slow_sync])
    counted = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counted.append(1)
            time.sleep(0.01)

    counter = threading.Thread(target=count)
    counter.start()
    agent.run("wait")
    stop.set()
    counter.join()
    assert len(counted) >= 10, "another Python thread could not run during the run"


def test_cancelling_an_arun_stops_the_run_and_records_it(server, make_agent, tmp_path):
    started = threading.Event()

    @planexec.tool(effect="read_only")
    async def wait_long(name: str) -> str:
        """Wait for a long time."""
        started.set()
        await asyncio.sleep(30)
        return name

    plan = plan_of(("s1", "wait_long", {"name": "x"}, ()), ("s2", "wait_long", {"name": "y"}, ("s1",)))
    server.on("planner", json_content(plan))
    server.always("synthesizer", content("unused"))
    store = str(tmp_path / "runs.db")
    agent = make_agent([wait_long], store=store)
    run_ids = []

    async def main():
        task = asyncio.ensure_future(
            agent.arun("wait", on_event=lambda e: run_ids.append(e.data["run_id"]) if e.kind == "run_started" else None)
        )
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # Stopped, not waited out: the run ended interrupted, its second step never ran.
    recorded = planexec.report(run_ids[0], store=store)
    assert recorded.status == "interrupted", recorded.report
    assert not any(s["id"] == "s2" and s["status"] == "succeeded" for s in recorded.steps)


def test_async_callbacks_and_awaitable_results_are_awaited(server, make_agent):
    sent = []

    class Sender:
        """A callable object whose call is a coroutine (not a coroutine function)."""

        __name__ = "send"

        async def __call__(self, text: str) -> str:
            await asyncio.sleep(0)
            sent.append(text)
            return f"sent {text}"

    send = planexec.tool(Sender(), name="send", effect="writes_workspace")
    plan = plan_of(("s1", "send", {"text": "yes"}, ()), ("s2", "send", {"text": "no"}, ()))
    server.on("planner", json_content(plan))
    server.always("synthesizer", content("one sent"))

    async def approve(plan):
        await asyncio.sleep(0)
        return True

    async def confirm(step, args, effect):
        await asyncio.sleep(0)
        return args["text"] == "yes"

    result = make_agent([send], mode="ask").run("send both", approve=approve, confirm=confirm)
    # An async confirm that says no is a no (a coroutine is not a yes), and the
    # call's coroutine ran: its result is the step's output, not a coroutine's repr.
    assert sent == ["yes"], result.report
    s1 = next(s for s in result.steps if s["id"] == "s1")
    assert s1["output"] == "sent yes", s1


def test_astream_yields_events_on_the_callers_loop(server, make_agent):
    server.on("planner", json_content(plan_of(("s1", "slow_async", {"name": "h"}, ()))))
    server.always("synthesizer", content("streamed async"))
    agent = make_agent([slow_async])

    async def main():
        stream = agent.astream("one async step")
        kinds = [event.kind async for event in stream]
        return kinds, stream.result

    kinds, result = asyncio.run(main())
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished", kinds
    assert "step_finished" in kinds, kinds
    assert result is not None and result.answer == "streamed async", result


def test_a_step_that_times_out_cancels_its_coroutine(server, make_agent):
    cancelled = threading.Event()

    @planexec.tool(effect="read_only")
    async def sleepy(name: str) -> str:
        """Sleep for a long time."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return name

    server.on("planner", json_content(plan_of(("s1", "sleepy", {"name": "z"}, ()))))
    server.always("synthesizer", content("unused"))
    result = make_agent([sleepy], timeout=1, recover="replan", max_replans=0).run("sleep")
    assert result.status == "failed", result.report
    # The step is over, so is its coroutine (on planexec's own loop: nothing else would stop it).
    assert cancelled.wait(10), "the coroutine of a step that timed out went on running"
