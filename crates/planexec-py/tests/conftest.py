"""Fixtures of the Python suite: a scripted OpenAI-compatible server on
loopback (real HTTP), a workspace folder, and an environment with no user
configuration and no keys, so a test sees only what it sets."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from scripted_server import ScriptedServer  # noqa: E402

import planexec  # noqa: E402


@pytest.fixture(autouse=True)
def clean_environment(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    for name in list(os.environ):
        if name.startswith(("PLANEXEC_", "OPENAI_", "ANTHROPIC_")) and not name.startswith(("PLANEXEC_TEST_", "PLANEXEC_REQUIRE_")):
            monkeypatch.delenv(name)


@pytest.fixture
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def make_agent(server, workspace):
    """An agent on the scripted server; keywords go to ``planexec.Agent``."""
    made = []

    def make(tools=(), **settings):
        settings.setdefault("verify", False)
        agent = planexec.Agent(
            model="openai-compatible/scripted",
            base_url=server.base_url,
            api_key="sk-test",
            tools=tools,
            workspace=str(workspace),
            **settings,
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def plan_of(*steps, goal="the task"):
    """A plan as the planner writes it: ``(id, tool, args, depends_on)`` tuples."""
    return {
        "goal": goal,
        "steps": [
            {"id": i, "description": f"step {i}", "tool": tool, "args": args, "depends_on": list(deps)}
            for i, tool, args, deps in steps
        ],
    }
