"""``planexec.Agent``: plan, review, execute, from Python.

Settings come from the same places as the CLI's (``planexec.toml`` in the
workspace, the user's config, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``PLANEXEC_*``), with the keyword arguments on top.
Every call releases the GIL while planexec works; Ctrl-C cancels a run and
still records how it ended.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from . import _native
from ._tools import Tool, _CallersLoop, settle
from ._types import Event, Plan, Result, Step

ApproveCallback = Callable[[Plan], Union[bool, Plan, str, None]]
ConfirmCallback = Callable[[Step, Dict[str, Any], str], bool]
EventCallback = Callable[[Event], None]


class Agent:
    """A planner, an executor, a replanner and a synthesizer over your tools.

    ``model`` is a model reference as the CLI takes it: ``openai/gpt-4o-mini``,
    ``anthropic/claude-sonnet-4-5``, ``openai-compatible/NAME`` (with
    ``base_url``), ``local/default`` or ``local/small`` (the embedded model,
    fetched with ``planexec.pull_model()``), or a bare name on the configured
    provider. ``tools`` are ``@planexec.tool`` functions (plain functions are
    wrapped, as ``external``); the built-in file tools on ``workspace`` come
    too unless ``builtin_tools=False``. ``store`` (a SQLite file or a
    ``postgres://`` URL) records every run, so it can be resumed and decided
    on from another process. ``agents`` maps a profile name to its tools, for
    agent steps. Any other keyword is a planexec option: ``strategy``,
    ``max_steps``, ``max_replans``, ``parallelism``, ``timeout``,
    ``max_tokens``, ``max_cost``, ``max_time``, ``fallback``, ``mend``,
    ``verify``, ``approval`` (``"later"``: pause in the store for a decision),
    ``planner_model`` and the other roles' models, ``prices``.
    """

    def __init__(
        self,
        model: Optional[str] = None,
        tools: Sequence[Union[Tool, Callable[..., Any]]] = (),
        *,
        workspace: str = ".",
        mode: Optional[str] = None,
        store: Optional[str] = None,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        agents: Optional[Mapping[str, Iterable[str]]] = None,
        builtin_tools: bool = True,
        mcp: Sequence[str] = (),
        prices: Optional[Mapping[str, tuple]] = None,
        **options: Any,
    ) -> None:
        self.tools: List[Tool] = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        self.store = store
        settings: Dict[str, Any] = {
            "workspace": str(workspace),
            "store": store,
            "builtin_tools": builtin_tools,
            "mcp": list(mcp),
            "model": model,
            "base_url": base_url,
            "api_key": api_key,
            "mode": mode,
            "agents": [f"{name}={','.join(names)}" for name, names in (agents or {}).items()],
            "prices": [f"{m}={p[0]},{p[1]}" for m, p in (prices or {}).items()],
        }
        for key, value in options.items():
            settings[key] = _option(key, value)
        settings = {k: v for k, v in settings.items() if v is not None}
        self._native = _native.NativeAgent(json.dumps(settings), self.tools)

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def model(self) -> str:
        """The provider and model the agent calls."""
        return self._native.model()

    def tool_list(self) -> List[Dict[str, Any]]:
        """Every tool the planner may use: name, description, effect, parameters."""
        return json.loads(self._native.tools())

    def plan(self, task: str) -> Plan:
        """The planner's plan for ``task``, checked; nothing runs. Raises ``PlanError``."""
        return Plan.from_json(self._native.plan(task), task)

    def check(self, plan: Plan) -> None:
        """Raise ``PlanError`` with every problem if ``plan`` is not valid for this agent."""
        problems = self._native.check_plan(plan.to_json())
        if problems:
            raise _native.PlanError(problems)

    def execute(
        self,
        plan: Plan,
        *,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
        on_event: Optional[EventCallback] = None,
    ) -> Result:
        """Run ``plan`` (as reviewed or edited) without asking the planner."""
        self.check(plan)
        return self._run(plan.task or plan.goal, plan.to_json(), approve, confirm, on_event)

    def run(
        self,
        task: str,
        *,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
        on_event: Optional[EventCallback] = None,
    ) -> Result:
        """Plan, review (``approve(plan)`` returns True, False, an edited Plan, or
        feedback text to replan with), execute and answer; blocks until done."""
        return self._run(task, None, approve, confirm, on_event)

    async def arun(
        self,
        task: str,
        *,
        plan: Optional[Plan] = None,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
        on_event: Optional[EventCallback] = None,
    ) -> Result:
        """``run`` for asyncio: the event loop goes on, and ``async def`` tools run on it."""
        loop = asyncio.get_running_loop()
        if plan is not None:
            self.check(plan)
        given = plan.to_json() if plan is not None else None
        cancel = _native.Cancel()
        with _CallersLoop(loop):
            running = loop.run_in_executor(None, lambda: self._run(task, given, approve, confirm, on_event, cancel))
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                # The task was cancelled: stop the run, and let it record how it ended.
                cancel.cancel()
                await asyncio.wait([running])
                raise

    def stream(
        self,
        task: str,
        *,
        plan: Optional[Plan] = None,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
    ) -> "RunStream":
        """Iterate over the run's events as they happen; ``.result`` once it ends."""
        given = plan.to_json() if plan is not None else None
        return RunStream(lambda on_event: self._run(task, given, approve, confirm, on_event))

    def astream(
        self,
        task: str,
        *,
        plan: Optional[Plan] = None,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
    ) -> "AsyncRunStream":
        """``stream`` for asyncio: ``async for event in agent.astream(task)``;
        ``.result`` once it ends. Leaving the loop early cancels the run."""
        return AsyncRunStream(lambda on_event: self.arun(task, plan=plan, approve=approve, confirm=confirm, on_event=on_event))

    def resume(
        self,
        run_id: str,
        *,
        approve: Optional[ApproveCallback] = None,
        confirm: Optional[ConfirmCallback] = None,
        on_event: Optional[EventCallback] = None,
        rerun_inflight: bool = False,
    ) -> Result:
        """Continue a run recorded in ``store`` (after a crash, a pause for approval,
        a budget): finished steps are not run again."""
        text = self._native.resume(run_id, _callbacks(approve, confirm), _events(on_event), rerun_inflight)
        return Result.from_json(text)

    def approve(self, run_id: str, *, step: Optional[str] = None, by: str = "python") -> str:
        """Approve what a run in this agent's store waits for; then ``resume`` it."""
        return approve(run_id, store=self._store(), step=step, by=by)

    def reject(self, run_id: str, reason: str, *, by: str = "python") -> None:
        reject(run_id, reason, store=self._store(), by=by)

    def close(self) -> None:
        """Stop the MCP servers the agent started."""
        self._native.close()

    def _store(self) -> str:
        if not self.store:
            raise _native.ConfigError("this agent has no store: create it with store='runs.db' (or a postgres:// URL)")
        return self.store

    def _run(self, task, plan_json, approve, confirm, on_event, cancel=None) -> Result:
        text = self._native.run(task, plan_json, _callbacks(approve, confirm), _events(on_event), cancel)
        return Result.from_json(text)


class RunStream:
    """The events of one run, as they happen. After the loop, ``result`` holds
    how it ended. Breaking out of the loop does not stop the run."""

    _END = object()

    def __init__(self, start: Callable[[Callable[[Event], None]], Result]) -> None:
        self.result: Optional[Result] = None
        self._events: "queue.Queue[Any]" = queue.Queue()
        self._error: Optional[BaseException] = None

        def work() -> None:
            try:
                self.result = start(self._events.put)
            except BaseException as error:  # noqa: BLE001 - raised in the iterating thread
                self._error = error
            finally:
                self._events.put(self._END)

        self._thread = threading.Thread(target=work, name="planexec-run", daemon=True)
        self._thread.start()

    def __iter__(self) -> Iterator[Event]:
        while True:
            item = self._events.get()
            if item is self._END:
                break
            yield item
        self._thread.join()
        if self._error is not None:
            raise self._error


class AsyncRunStream:
    """The events of one run as an async iterator, on the caller's event loop.
    After the loop, ``result`` holds how it ended; leaving the loop early
    cancels the run (it ends ``interrupted``)."""

    def __init__(self, start: Callable[[Callable[[Event], None]], Any]) -> None:
        self.result: Optional[Result] = None
        self._start = start

    async def __aiter__(self):  # type: ignore[override]
        loop = asyncio.get_running_loop()
        events: "asyncio.Queue[Any]" = asyncio.Queue()
        end = object()
        running = asyncio.ensure_future(self._start(lambda event: loop.call_soon_threadsafe(events.put_nowait, event)))
        running.add_done_callback(lambda _: events.put_nowait(end))
        try:
            while True:
                item = await events.get()
                if item is end:
                    break
                yield item
            self.result = await running
        finally:
            if not running.done():
                running.cancel()
                await asyncio.wait([running])


class _Callbacks:
    """The approval callbacks as the native half calls them (JSON in, verdicts out)."""

    def __init__(self, approve: Optional[ApproveCallback], confirm: Optional[ConfirmCallback]) -> None:
        self.approve = approve
        self.confirm = confirm

    def _review(self, plan_json: str) -> tuple:
        if self.approve is None:
            return ("approve", "")
        verdict = settle(self.approve(Plan.from_json(plan_json)))
        if verdict is True:
            return ("approve", "")
        if isinstance(verdict, Plan):
            return ("edit", verdict.to_json())
        if isinstance(verdict, str) and verdict.strip():
            return ("feedback", verdict)
        return ("reject", "")

    def _confirm(self, step_json: str, args_json: str, effect: str) -> bool:
        if self.confirm is None:
            return True
        return bool(settle(self.confirm(Step.from_dict(json.loads(step_json)), json.loads(args_json), effect)))


def _callbacks(approve: Optional[ApproveCallback], confirm: Optional[ConfirmCallback]) -> Optional[_Callbacks]:
    return _Callbacks(approve, confirm) if approve is not None or confirm is not None else None


def _events(on_event: Optional[Callable[..., None]]) -> Optional[Callable[[str], None]]:
    if on_event is None:
        return None
    return lambda text: on_event(Event.from_json(text))


def _option(key: str, value: Any) -> Any:
    """A keyword option as the configuration spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if key in ("max_steps", "max_replans", "parallelism", "max_tokens") and not isinstance(value, int):
        raise _native.ConfigError(f"{key}={value!r}: give a whole number")
    return value


# -- decisions on recorded runs, from any process --------------------------------


def approve(run_id: str, *, store: str, step: Optional[str] = None, by: str = "python") -> str:
    """Approve the plan (or with ``step``, that step's call) run ``run_id`` waits
    for in ``store``. The run goes on when it is resumed (``Agent.resume``)."""
    return _native.approve(store, run_id, step, by)


def reject(run_id: str, reason: str, *, store: str, by: str = "python") -> None:
    """Reject the plan run ``run_id`` waits on: it ends ``rejected``."""
    _native.reject(store, run_id, reason, by)


def answer(run_id: str, value: Any, *, store: str, by: str = "python") -> str:
    """Answer the question (an MCP server's) run ``run_id`` waits for."""
    return _native.answer(store, run_id, json.dumps(value), by)


def steer(run_id: str, message: str, *, store: str, by: str = "python") -> int:
    """Tell a running run something: its replanner takes it into account."""
    return _native.steer(store, run_id, message, by)


def report(run_id: str, *, store: str) -> Optional[Result]:
    """A recorded run's report, or None when ``store`` has no such run."""
    text = _native.report(store, run_id)
    return Result.from_json(text) if text is not None else None


def pull_model(name: str = "default", *, quiet: bool = True) -> None:
    """Fetch the embedded model (``default``: 1.5B, ``small``: 0.5B) for ``model="local/…"``."""
    _native.pull_model(name, quiet)
