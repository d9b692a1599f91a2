"""``@planexec.tool``: schemas from type hints and docstrings, arguments that
arrive as the declared types, results and exceptions across the boundary."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Dict, List, Literal, Optional

import pydantic
import pytest

import planexec
from conftest import plan_of
from scripted_server import content, json_content


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Box:
    width: int
    label: str = "box"


class Order(pydantic.BaseModel):
    item: str
    quantity: int = 1


seen: dict = {}


@planexec.tool(effect="read_only")
def every_type(
    text: str,
    count: int,
    ratio: float,
    flag: bool,
    numbers: List[int],
    mapping: Dict[str, float],
    colour: Colour,
    mode: Literal["fast", "slow"],
    box: Box,
    order: Order,
    note: Optional[str] = None,
    limit: int = 10,
) -> dict:
    """Take one argument of every kind.

    Args:
        text: Some words.
        count: How many.
    """
    seen.update(locals())
    return {"ok": True, "total": count + sum(numbers)}


def test_the_schema_comes_from_the_type_hints_and_the_docstring():
    schema = every_type.parameters
    props = schema["properties"]
    assert every_type.description == "Take one argument of every kind."
    assert props["text"] == {"type": "string", "description": "Some words."}
    assert props["count"] == {"type": "integer", "description": "How many."}
    assert props["ratio"] == {"type": "number"}
    assert props["flag"] == {"type": "boolean"}
    assert props["numbers"] == {"type": "array", "items": {"type": "integer"}}
    assert props["mapping"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["colour"] == {"enum": ["red", "blue"]}
    assert props["mode"] == {"enum": ["fast", "slow"]}
    assert props["box"]["properties"]["width"] == {"type": "integer"}
    assert props["box"]["required"] == ["width"]
    assert props["order"]["properties"]["item"]["type"] == "string"
    assert props["note"] == {"type": "string", "default": None}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert schema["required"] == ["text", "count", "ratio", "flag", "numbers", "mapping", "colour", "mode", "box", "order"]


def test_arguments_arrive_as_the_declared_types(server, make_agent):
    args = {
        "text": "hi",
        "count": 2,
        "ratio": 1,
        "flag": True,
        "numbers": [1, 2],
        "mapping": {"a": 0.5},
        "colour": "blue",
        "mode": "slow",
        "box": {"width": 3},
        "order": {"item": "pen", "quantity": 4},
    }
    server.on("planner", json_content(plan_of(("s1", "every_type", args, ()))))
    server.always("synthesizer", content("done"))
    result = make_agent([every_type]).run("call it")
    assert result.status == "succeeded", result.report
    assert seen["colour"] is Colour.BLUE
    assert seen["box"] == Box(width=3)
    assert isinstance(seen["order"], Order) and seen["order"].quantity == 4
    assert isinstance(seen["ratio"], float)
    assert seen["note"] is None and seen["limit"] == 10
    assert result.steps[0]["output"] == {"ok": True, "total": 5}


def test_a_tool_works_bare_and_with_arguments_and_stays_callable():
    @planexec.tool
    def shout(words: str) -> str:
        return words.upper()

    @planexec.tool(name="whisper", description="Say it softly.", effect="read_only")
    def quiet(words: str) -> str:
        return words.lower()

    assert shout("a") == "A" and shout.effect == "external" and shout.name == "shout"
    assert quiet.name == "whisper" and quiet.description == "Say it softly." and quiet("B") == "b"
    with pytest.raises(ValueError, match="effect class"):
        planexec.tool(effect="sometimes")(lambda: None)


def test_an_exception_in_a_tool_is_the_steps_error_with_its_message(server, make_agent):
    @planexec.tool(effect="read_only")
    def fragile(key: str) -> str:
        raise RuntimeError(f"the catalogue has no {key}")

    server.on("planner", json_content(plan_of(("s1", "fragile", {"key": "k9"}, ()))))
    server.always("synthesizer", content("could not"))
    result = make_agent([fragile], recover="replan", max_replans=0).run("look up k9")
    assert result.status == "failed", result.report
    step = result.steps[0]
    assert step["status"] == "failed"
    assert "RuntimeError: the catalogue has no k9" in json.dumps(step), step


def test_a_tool_whose_name_is_taken_is_refused_with_what_to_do(make_agent):
    @planexec.tool
    def read_file(path: str) -> str:
        return ""

    with pytest.raises(planexec.ConfigError, match="another name"):
        make_agent([read_file])


def test_the_package_brings_the_planexec_command(workspace):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    command = shutil.which("planexec", path=str(Path(sys.executable).parent))
    assert command, "pip installed no planexec command next to the interpreter"
    listed = subprocess.run([command, "tools", "list", "--workspace", str(workspace)], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert "read_file" in listed.stdout and "write_file" in listed.stdout, listed.stdout
    bad = subprocess.run([command, "run", "x", "--strategy", "magic", "--yes"], cwd=workspace, capture_output=True, text=True)
    assert bad.returncode == 2 and "magic" in bad.stderr, bad.stderr
