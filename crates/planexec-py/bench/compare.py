"""planexec from Python, side by side with LangGraph's plan-and-execute and an
LLMCompiler-style peer, on the same scripted OpenAI-compatible server.

    pip install -r crates/planexec-py/bench/requirements.txt   # the peers
    python crates/planexec-py/bench/compare.py [--repeats 3] [--json]

Each (framework, workload) runs in a process of its own, so its peak RSS is
its own; the scripted server runs in this process and waits ``MODEL_SECONDS``
before every answer, as a hosted model would. Every step is the same Python
tool, waiting ``TOOL_SECONDS`` (``workloads.py``). planexec runs plan-execute
with ``verify=False`` (as ``planexec bench`` does) and, like the peer, at most
8 steps at a time. Wall time is the median of the repeats, from the task to
the answer (building the agent or graph is not counted). Then the cost of a
Python tool call across the boundary: a plan of N independent calls of a
Python no-op against the same plan of a built-in tool, one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from workloads import PARALLELISM, TOOL_SECONDS, critical_path, planexec_plan, shapes, task_of, work  # noqa: E402

MODEL_SECONDS = 0.05
FRAMEWORKS = ("planexec", "langgraph", "peer")


# -- the scripted model, answering all three frameworks ---------------------------


def steps_text(name: str) -> list:
    return [f"{name}/{step}: work on {step} with the results of {', '.join(deps) or 'nothing'}" for step, deps in shapes()[name].items()]


def answer(request: dict, role) -> dict:
    """The scripted model: a plan, a tool call or an answer, from the request."""
    messages = request.get("messages", [])
    text = json.dumps(messages)
    name = next((n for n in shapes() if f"workload {n}" in text or f"{n}/s" in text), "chain8")
    shape = shapes()[name]
    if role == "planner":
        return {"role": "assistant", "content": json.dumps(planexec_plan(name, shape))}
    if role is not None:
        return {"role": "assistant", "content": f"Workload {name} is done."}
    if "LG-PLANNER" in text:
        return {"role": "assistant", "content": json.dumps({"steps": steps_text(name)})}
    if "LG-REPLANNER" in text:
        done = len(set(re.findall(r"completed (s\d+)", text)))
        if done >= len(shape):
            return {"role": "assistant", "content": json.dumps({"action": {"response": f"Workload {name} is done."}})}
        return {"role": "assistant", "content": json.dumps({"action": {"steps": steps_text(name)[done:]}})}
    if "PEER-PLANNER" in text:
        tasks = [{"id": s, "tool": "work", "args": {"name": s, "inputs": [f"${d}" for d in deps]}, "deps": deps} for s, deps in shape.items()]
        return {"role": "assistant", "content": json.dumps({"tasks": tasks})}
    if "PEER-JOINER" in text:
        return {"role": "assistant", "content": f"Workload {name} is done."}
    # LangGraph's executor agent: call the tool for its step, then say it is done.
    step = re.findall(r"executing step 1, \w+/(s\d+)", text)[-1]
    if messages and messages[-1].get("role") == "tool":
        return {"role": "assistant", "content": f"completed {step}"}
    args = {"name": step, "inputs": shape[step]}
    call = {"id": f"call_{step}", "type": "function", "function": {"name": "work", "arguments": json.dumps(args)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# -- the three frameworks (each run in a child process) ------------------------------


def run_planexec(base_url: str, name: str, repeats: int) -> list:
    import planexec

    workspace = tempfile.mkdtemp()
    agent = planexec.Agent(
        model="openai-compatible/bench", base_url=base_url, api_key="sk-bench", workspace=workspace,
        tools=[planexec.tool(work, effect="read_only")], builtin_tools=False, verify=False,
        max_steps=40, parallelism=PARALLELISM,
    )
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = agent.run(task_of(name))
        walls.append(time.perf_counter() - started)
        assert result.status == "succeeded", result.report
    return walls




def child(framework: str, base_url: str, name: str, repeats: int) -> None:
    if framework == "planexec":
        walls = run_planexec(base_url, name, repeats)
    else:
        # Imported only here, so planexec's process does not load LangChain.
        import peers

        walls = {"langgraph": peers.run_langgraph, "peer": peers.run_peer}[framework](base_url, name, repeats)
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"walls": walls, "rss_mb": rss_kb / 1024}))


# -- the cost of a Python tool call ------------------------------------------------


def tool_overhead(calls: int) -> dict:
    """What a Python tool call costs, two ways. In a run: plans of ``calls``
    independent calls run one at a time, a Python no-op against the built-in
    ``reverse_text`` (which does no I/O), alternated six times, the median
    difference per step. Bare: the no-op called through the tool port from
    Rust (no run), against calling the function in Python; and the Python
    side of a call alone (arguments from JSON, the call, the result to JSON)."""
    import planexec
    from scripted_server import ScriptedServer

    @planexec.tool(effect="read_only")
    def noop(text: str, reverse: str) -> str:
        """Give the text back."""
        return text

    args = {"text": "ab", "reverse": "letters"}
    steps = [{"id": f"s{i}", "description": "call", "args": args, "depends_on": []} for i in range(1, calls + 1)]
    server = ScriptedServer()
    server.always("synthesizer", {"role": "assistant", "content": "done"})
    agent = planexec.Agent(
        model="openai-compatible/bench", base_url=server.base_url, api_key="sk-bench", workspace=tempfile.mkdtemp(),
        tools=[noop], verify=False, max_steps=calls + 1, parallelism=1,
    )

    def per_step(tool: str) -> float:
        plan = {"goal": "calls", "steps": [{**step, "tool": tool} for step in steps]}
        started = time.perf_counter()
        result = agent.execute(planexec.Plan.from_json(json.dumps(plan), "calls"))
        assert result.status == "succeeded", result.error
        return (time.perf_counter() - started) / calls * 1e6

    builtin, python = [], []
    for _ in range(6):
        builtin.append(per_step("reverse_text"))
        python.append(per_step("noop"))
    n = 10000
    port = statistics.median(agent._native.time_tool_calls("noop", json.dumps(args), n) / n * 1e6 for _ in range(5))
    started = time.perf_counter()
    for _ in range(n):
        noop("ab", "letters")
    direct = (time.perf_counter() - started) / n * 1e6
    started = time.perf_counter()
    for _ in range(n):
        noop._invoke(json.dumps(args))
    adapter = (time.perf_counter() - started) / n * 1e6
    server.close()
    agent.close()
    return {
        "calls": calls,
        "run_builtin_us": statistics.median(builtin),
        "run_python_us": statistics.median(python),
        "run_overhead_us": statistics.median(p - b for p, b in zip(python, builtin)),
        "bare_us": port,
        "direct_us": direct,
        "bare_overhead_us": port - direct,
        "adapter_us": adapter,
    }


# -- the parent: the server, the children, the table ------------------------------


def measure(repeats: int) -> dict:
    from scripted_server import ScriptedServer

    server = ScriptedServer(delay=MODEL_SECONDS)
    server.always(None, answer)
    rows = []
    for name, shape in shapes().items():
        for framework in FRAMEWORKS:
            before = len(server.requests)
            out = subprocess.run(
                [sys.executable, __file__, "--child", framework, server.base_url, name, str(repeats)],
                capture_output=True, text=True, check=False,
            )
            if out.returncode != 0:
                raise SystemExit(f"{framework} on {name} failed:\n{out.stderr[-4000:]}")
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append({
                "workload": name, "steps": len(shape), "critical_path": critical_path(shape), "framework": framework,
                "wall_s": statistics.median(figures["walls"]), "model_calls": (len(server.requests) - before) / repeats,
                "rss_mb": figures["rss_mb"],
            })
    server.close()
    return {"model_seconds": MODEL_SECONDS, "tool_seconds": TOOL_SECONDS, "rows": rows, "tool_call": tool_overhead(300)}


def table(figures: dict) -> str:
    lines = ["| workload | framework | wall (s) | / LangGraph | model calls | peak RSS (MB) |", "|---|---|---|---|---|---|"]
    rows = figures["rows"]
    for row in rows:
        lg = next(r for r in rows if r["workload"] == row["workload"] and r["framework"] == "langgraph")
        lines.append(
            f"| {row['workload']} ({row['steps']} steps, path {row['critical_path']}) | {row['framework']} | {row['wall_s']:.3f} | "
            f"{row['wall_s'] / lg['wall_s']:.2f}x | {row['model_calls']:g} | {row['rss_mb']:.0f} |"
        )
    t = figures["tool_call"]
    lines.append("")
    lines.append(
        f"A Python tool call. In a run ({t['calls']} calls one at a time): {t['run_python_us']:.0f} µs a step against "
        f"{t['run_builtin_us']:.0f} µs for a built-in tool, a median difference of {t['run_overhead_us']:.0f} µs. "
        f"Bare, through the tool port with no run: {t['bare_us']:.0f} µs against {t['direct_us']:.2f} µs for calling "
        f"the function in Python ({t['bare_overhead_us']:.0f} µs across the boundary, {t['adapter_us']:.1f} µs of it "
        f"the Python side: JSON in, the call, JSON out)."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=4, metavar=("FRAMEWORK", "BASE_URL", "WORKLOAD", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        framework, base_url, name, repeats = args.child
        child(framework, base_url, name, int(repeats))
        return
    figures = measure(args.repeats)
    print(json.dumps(figures, indent=2) if args.json else table(figures))


if __name__ == "__main__":
    main()
