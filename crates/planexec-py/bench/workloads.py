"""The benchmark's workloads: the four plan shapes of
``examples/bench/workloads.jsonl`` (a chain of 8, a diamond, a fan-out of 8,
32 independent steps), every step a call of one Python tool that waits
(``TOOL_SECONDS``, as I/O would) and names its inputs, so every framework runs
the same calls in the order its scheduler allows and the scripted model's
answers are the same for all."""

from __future__ import annotations

import time
from typing import Dict, List

TOOL_SECONDS = 0.05
# Steps at a time, for planexec and the LLMCompiler-style peer alike.
PARALLELISM = 8


def task_of(name: str) -> str:
    return f"Run workload {name}: every step of it, each after the steps it needs."


def work(name: str, inputs: List[str]) -> str:
    """Do one step's work from its inputs' results."""
    time.sleep(TOOL_SECONDS)
    return f"{name}({', '.join(inputs)})"


def shapes() -> Dict[str, Dict[str, List[str]]]:
    """Each workload as step id -> the ids it depends on (in a valid order)."""
    chain = {f"s{i}": ([f"s{i - 1}"] if i > 1 else []) for i in range(1, 9)}
    diamond = {"s1": [], "s2": ["s1"], "s3": ["s1"], "s4": ["s2", "s3"], "s5": ["s4"]}

    def fan(n: int) -> Dict[str, List[str]]:
        steps = {f"s{i}": [] for i in range(1, n + 1)}
        steps[f"s{n + 1}"] = [f"s{i}" for i in range(1, n + 1)]
        steps[f"s{n + 2}"] = [f"s{n + 1}"]
        return steps

    return {"chain8": chain, "diamond": diamond, "fanout8": fan(8), "wide32": fan(32)}


def critical_path(shape: Dict[str, List[str]]) -> int:
    depth: Dict[str, int] = {}
    for step, deps in shape.items():
        depth[step] = 1 + max((depth[d] for d in deps), default=0)
    return max(depth.values())


def planexec_plan(name: str, shape: Dict[str, List[str]]) -> dict:
    """The plan a good planner writes: one ``work`` call per step, inputs as references."""
    return {
        "goal": name,
        "steps": [
            {
                "id": step,
                "description": f"work on {step}",
                "tool": "work",
                "args": {"name": step, "inputs": [f"{{{{{d}}}}}" for d in deps]},
                "depends_on": deps,
            }
            for step, deps in shape.items()
        ],
    }
