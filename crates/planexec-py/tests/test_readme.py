"""The README's Python example runs as written (against the scripted server,
which stands in for OpenAI through ``OPENAI_BASE_URL``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from scripted_server import content, json_content

README = os.path.join(os.path.dirname(__file__), "..", "..", "..", "README.md")


def readme_example() -> str:
    text = open(README, encoding="utf-8").read()
    found = re.search(r"<!-- python-example -->\n```python\n(.*?)```", text, re.S)
    assert found, "README.md has no ```python block after <!-- python-example -->"
    return found.group(1)


def test_the_readmes_python_example_runs_as_written(server, workspace):
    plan = {
        "goal": "compare k1 and k2",
        "steps": [
            {"id": "s1", "description": "look up k1", "tool": "lookup", "args": {"key": "k1"}, "depends_on": []},
            {"id": "s2", "description": "look up k2", "tool": "lookup", "args": {"key": "k2"}, "depends_on": []},
        ],
    }
    server.always("planner", json_content(plan))
    server.always("synthesizer", content("k1 is red and lighter than k2, which is blue."))
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, "-c", readme_example()], cwd=workspace, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "succeeded k1 is red and lighter than k2, which is blue.", done.stdout
    assert "step_finished s1" in lines and "step_finished s2" in lines, done.stdout
    assert (workspace / "runs.db").exists()
