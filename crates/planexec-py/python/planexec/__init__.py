"""planexec: an agent that plans before it acts.

>>> import planexec
>>> @planexec.tool(effect="read_only")
... def lookup(key: str, limit: int = 10) -> str:
...     '''Look up a key in the catalogue.'''
...     return key
>>> lookup.parameters["properties"]["limit"]
{'type': 'integer', 'default': 10}
"""

from ._native import (
    BudgetExceeded,
    ConfigError,
    DecisionError,
    PlanError,
    PlanexecError,
    Rejected,
    RunFailed,
    __version__,
)
from ._agent import Agent, AsyncRunStream, RunStream, answer, approve, pull_model, reject, report, steer
from ._tools import Tool, tool
from ._types import Event, Plan, Result, Step

__all__ = [
    "Agent",
    "AsyncRunStream",
    "BudgetExceeded",
    "ConfigError",
    "DecisionError",
    "Event",
    "Plan",
    "PlanError",
    "PlanexecError",
    "Rejected",
    "Result",
    "RunFailed",
    "RunStream",
    "Step",
    "Tool",
    "__version__",
    "answer",
    "approve",
    "pull_model",
    "reject",
    "report",
    "steer",
    "tool",
]
