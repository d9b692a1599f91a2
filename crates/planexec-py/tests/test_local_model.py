"""One run on the real embedded model (the pulled ``small`` one, or the file
``PLANEXEC_TEST_MODEL`` names): no server, no key, from Python."""

from __future__ import annotations

import os

import planexec


def test_a_task_runs_on_the_embedded_model_with_no_server(workspace, monkeypatch):
    (workspace / "a.txt").write_text("17\n")
    (workspace / "b.txt").write_text("25\n")
    given = os.environ.get("PLANEXEC_TEST_MODEL")
    settings = {"model_path": given} if given else {"model": "local/small"}
    # Keys for hosted APIs pointing nowhere: the embedded model must be the one used.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-decoy")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with planexec.Agent(workspace=str(workspace), **settings) as agent:
        assert "local" in agent.model, agent.model
        events = []
        result = agent.run(
            "Read a.txt and b.txt, add the two numbers, and write the sum to sum.txt.",
            on_event=events.append,
        )
    assert result.status == "succeeded", result.report
    assert (workspace / "sum.txt").read_text().strip().removesuffix(".0") == "42"
    assert result.report["usage"]["planner"]["calls"] >= 1
    assert any(e.kind == "step_finished" for e in events)
