"""The peers planexec is compared with, from Python: LangGraph's
plan-and-execute, as its tutorial builds it, and an LLMCompiler-style peer
in plain Python. (No ``from __future__ import annotations`` here: LangGraph
reads the state's type hints at run time.)"""

import json
import operator
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Annotated, List, Tuple, TypedDict, Union

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool as lc_tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import create_react_agent
from pydantic import BaseModel, Field

from workloads import PARALLELISM, task_of, work


class PlanExecute(TypedDict):
    input: str
    plan: List[str]
    past_steps: Annotated[List[Tuple], operator.add]
    response: str


class Plan(BaseModel):
    steps: List[str] = Field(description="different steps to follow, in order")


class Response(BaseModel):
    response: str


class Act(BaseModel):
    action: Union[Response, Plan]


def run_langgraph(base_url: str, name: str, repeats: int) -> list:
    """LangGraph's plan-and-execute, as its tutorial builds it: a planner, a
    ReAct agent per step, a replanner after each step."""
    llm = ChatOpenAI(model="bench", base_url=base_url, api_key="sk-bench")
    agent_executor = create_react_agent(llm, [lc_tool(work)], prompt="You are a helpful assistant.")

    planner = ChatPromptTemplate.from_messages(
        [("system", "LG-PLANNER For the given objective, come up with a simple step by step plan."), ("placeholder", "{messages}")]
    ) | llm.with_structured_output(Plan)
    replanner = ChatPromptTemplate.from_template(
        "LG-REPLANNER Your objective was this:\n{input}\n\nYour original plan was this:\n{plan}\n\n"
        "You have currently done the follow steps:\n{past_steps}\n\nUpdate your plan accordingly."
    ) | llm.with_structured_output(Act)

    def execute_step(state: PlanExecute):
        plan_str = "\n".join(f"{i + 1}. {step}" for i, step in enumerate(state["plan"]))
        task = state["plan"][0]
        formatted = f"For the following plan:\n{plan_str}\n\nYou are tasked with executing step 1, {task}."
        response = agent_executor.invoke({"messages": [("user", formatted)]})
        return {"past_steps": [(task, response["messages"][-1].content)]}

    def plan_step(state: PlanExecute):
        return {"plan": planner.invoke({"messages": [("user", state["input"])]}).steps}

    def replan_step(state: PlanExecute):
        output = replanner.invoke(state)
        if isinstance(output.action, Response):
            return {"response": output.action.response}
        return {"plan": output.action.steps}

    graph = StateGraph(PlanExecute)
    graph.add_node("planner", plan_step)
    graph.add_node("agent", execute_step)
    graph.add_node("replan", replan_step)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "agent")
    graph.add_edge("agent", "replan")
    graph.add_conditional_edges("replan", lambda s: END if s.get("response") else "agent", ["agent", END])
    app = graph.compile()
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        final = app.invoke({"input": task_of(name)}, {"recursion_limit": 200})
        walls.append(time.perf_counter() - started)
        assert final.get("response"), final
    return walls


def run_peer(base_url: str, name: str, repeats: int) -> list:
    """An LLMCompiler-style peer in plain Python: one planner call for a task
    DAG, the tasks on a thread pool as soon as their inputs are ready, one
    joiner call."""
    llm = ChatOpenAI(model="bench", base_url=base_url, api_key="sk-bench")

    def once() -> str:
        tasks = json.loads(llm.invoke([("system", "PEER-PLANNER Plan the tasks."), ("user", task_of(name))]).content)["tasks"]
        results: dict = {}
        pending = {t["id"]: t for t in tasks}
        running: dict = {}
        with ThreadPoolExecutor(PARALLELISM) as pool:
            while pending or running:
                for tid, t in list(pending.items()):
                    if all(d in results for d in t["deps"]):
                        inputs = [results[a[1:]] if a.startswith("$") else a for a in t["args"]["inputs"]]
                        running[pool.submit(work, t["args"]["name"], inputs)] = tid
                        del pending[tid]
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    results[running.pop(future)] = future.result()
        joined = llm.invoke([("system", "PEER-JOINER Answer from the results."), ("user", json.dumps(results))])
        return joined.content

    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        once()
        walls.append(time.perf_counter() - started)
    return walls
