"""What the library does beyond one plain run, reached from Python: an agent
step carried out by a profile's tool loop, a PostgreSQL ledger, and the
embedded model's weights."""

from __future__ import annotations

import os

import pytest

import planexec
from scripted_server import content, json_content, tool_calls

looked_up: list = []


@planexec.tool(effect="read_only")
def lookup(key: str) -> str:
    """Look up a key in the catalogue."""
    looked_up.append(key)
    return {"k1": "red", "k2": "blue"}.get(key, "unknown")


def test_an_agent_step_uses_its_profiles_python_tools(server, make_agent):
    looked_up.clear()
    plan = {"goal": "g", "steps": [{"id": "s1", "description": "find the colour of k2", "agent": "reader", "depends_on": []}]}
    server.on("planner", json_content(plan))
    server.on("agent", tool_calls(("lookup", {"key": "k2"})), content("k2 is blue"))
    server.always("synthesizer", content("k2 is blue [s1]"))
    result = make_agent([lookup], agents={"reader": ["lookup"]}).run("What colour is k2?")
    assert result.status == "succeeded", result.report
    assert looked_up == ["k2"]
    assert result.steps[0]["output"] == "k2 is blue", result.steps[0]
    assert result.usage["agent"]["calls"] == 2, result.usage


def test_an_agent_profile_naming_an_unknown_tool_is_a_config_error(make_agent):
    with pytest.raises(planexec.ConfigError, match="nope"):
        make_agent([lookup], agents={"reader": ["nope"]})


def test_a_postgresql_ledger_keeps_a_run_for_another_process_to_decide(server, make_agent):
    store = os.environ.get("PLANEXEC_TEST_POSTGRES_URL")
    if not store:
        # CI sets PLANEXEC_REQUIRE_POSTGRES: there, a missing server is a failure.
        assert not os.environ.get("PLANEXEC_REQUIRE_POSTGRES"), "PLANEXEC_TEST_POSTGRES_URL is not set"
        pytest.skip("set PLANEXEC_TEST_POSTGRES_URL (scripts/postgres.sh prints one)")
    plan = {"goal": "g", "steps": [{"id": "s1", "description": "look up", "tool": "lookup", "args": {"key": "k1"}, "depends_on": []}]}
    server.on("planner", json_content(plan))
    server.always("synthesizer", content("k1 is red"))
    agent = make_agent([lookup], store=store, approval="later")
    waiting = agent.run("What colour is k1?")
    assert waiting.status == "awaiting_approval", waiting.report
    assert planexec.report(waiting.run_id, store=store).status == "awaiting_approval"
    with pytest.raises(planexec.DecisionError):
        planexec.approve(waiting.run_id, store=store, step="s9")
    planexec.approve(waiting.run_id, store=store)
    finished = agent.resume(waiting.run_id)
    assert finished.status == "succeeded", finished.report
    assert finished.answer == "k1 is red"


def test_pulling_an_unknown_model_says_which_there_are():
    with pytest.raises(planexec.ConfigError, match="choose default or small"):
        planexec.pull_model("huge")
