"""What a run hands back to Python: plans, events and results, as plain
dataclasses built from planexec's JSON (the JSON itself stays reachable)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _native


@dataclass
class Step:
    """One step of a plan: a tool call (``tool``), a reasoning step (neither
    ``tool`` nor ``agent``) or an agent step (``agent``: a profile's small
    tool-using loop). ``args`` may hold ``{{sN}}`` references to earlier results."""

    id: str
    description: str
    tool: Optional[str] = None
    args: Dict[str, Any] = field(default_factory=dict)
    depends_on: List[str] = field(default_factory=list)
    agent: Optional[str] = None
    expected: Optional[str] = None

    @classmethod
    def from_dict(cls, data: dict) -> "Step":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        return {k: v for k, v in data.items() if v is not None}


@dataclass
class Plan:
    """A plan: steps in a DAG toward ``goal``. Edit it, then ``Agent.execute`` it."""

    goal: str
    steps: List[Step] = field(default_factory=list)
    task: str = ""
    assumptions: List[str] = field(default_factory=list)
    questions: List[str] = field(default_factory=list)
    infeasible: Optional[str] = None

    @classmethod
    def from_json(cls, text: str, task: str = "") -> "Plan":
        data = json.loads(text)
        return cls(
            goal=data.get("goal", ""),
            steps=[Step.from_dict(s) for s in data.get("steps", [])],
            task=task,
            assumptions=data.get("assumptions", []),
            questions=data.get("questions", []),
            infeasible=data.get("infeasible"),
        )

    def to_json(self) -> str:
        data: Dict[str, Any] = {"goal": self.goal, "steps": [s.to_dict() for s in self.steps]}
        if self.assumptions:
            data["assumptions"] = self.assumptions
        if self.questions:
            data["questions"] = self.questions
        if self.infeasible:
            data["infeasible"] = self.infeasible
        return json.dumps(data)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(f"the plan has no step {step_id!r} (steps: {', '.join(s.id for s in self.steps)})")


@dataclass
class Event:
    """Something that happened in a run: ``kind`` (``run_started``,
    ``step_started``, ``step_finished``, ``plan_ready``, …), the step it is
    about, if any, and every field planexec sent."""

    kind: str
    step: Optional[str]
    data: Dict[str, Any]

    @classmethod
    def from_json(cls, text: str) -> "Event":
        data = json.loads(text)
        step = data.get("step_id", data.get("step"))
        return cls(kind=data.get("event", ""), step=step if isinstance(step, str) else None, data=data)


@dataclass
class Result:
    """How a run ended. ``status`` is ``succeeded`` only when the work the task
    named was done; ``report`` is the full JSON report (steps, plans, usage
    per role, …), as ``planexec run --json`` prints it."""

    status: str
    answer: Optional[str]
    run_id: str
    error: Optional[str]
    report: Dict[str, Any]

    @classmethod
    def from_json(cls, text: str) -> "Result":
        report = json.loads(text)
        return cls(
            status=report.get("status", ""),
            answer=report.get("answer"),
            run_id=report.get("run_id", ""),
            error=report.get("error"),
            report=report,
        )

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    @property
    def steps(self) -> List[Dict[str, Any]]:
        return self.report.get("steps", [])

    @property
    def plan(self) -> Optional[Plan]:
        plan = self.report.get("plan")
        return Plan.from_json(json.dumps(plan), self.report.get("task", "")) if plan else None

    @property
    def usage(self) -> Dict[str, Any]:
        return self.report.get("usage", {})

    def json(self) -> str:
        return json.dumps(self.report)

    def raise_for_status(self) -> "Result":
        """Raise ``Rejected``, ``BudgetExceeded`` or ``RunFailed`` unless the run
        succeeded (or waits for a decision); return the result otherwise."""
        if self.status in ("succeeded", "awaiting_approval"):
            return self
        message = f"run {self.run_id} {self.status}" + (f": {self.error}" if self.error else "")
        if self.status == "rejected":
            raise _native.Rejected(message)
        if self.status == "budget_exhausted":
            raise _native.BudgetExceeded(message)
        raise _native.RunFailed(message)
