"""Python functions as planexec tools: ``@planexec.tool``.

A tool's JSON Schema comes from its type hints and docstring (and from a
pydantic model or a dataclass when a parameter is one, without importing
pydantic); its description from the docstring's first paragraph. The native
half calls ``_invoke`` (plain functions, on its thread pool) and
``_invoke_async`` (coroutine functions, on an event loop) with the arguments
as JSON, and gets ``(ok, text, kind)`` back: the result as JSON, or the
exception's message and the kind of failure, which decides whether a model
may fix the call (``invalid_args``, ``not_found``) or it is retried
(``retryable``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import json
import re
import threading
import typing
from typing import Any, Callable, Optional

EFFECTS = ("read_only", "network", "writes_workspace", "external", "irreversible")


class Tool:
    """A function the planner may call in a plan step."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        effect: str = "external",
    ) -> None:
        if effect not in EFFECTS:
            raise ValueError(f"effect={effect!r} is not an effect class: use one of {', '.join(EFFECTS)}")
        self.func = func
        self.name = name or func.__name__
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", self.name):
            raise ValueError(f"tool name {self.name!r}: use letters, digits and _ (give name=...)")
        summary, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
        self.description = description or summary or self.name.replace("_", " ")
        self.effect = effect
        self.is_async = inspect.iscoroutinefunction(func)
        self._signature = inspect.signature(func)
        self._hints = _type_hints(func)
        self.parameters = _schema_of(self._signature, self._hints, arg_docs)
        self.parameters_json = json.dumps(self.parameters)
        self.__doc__ = func.__doc__
        self.__name__ = self.name
        self.__wrapped__ = func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<planexec.Tool {self.name} ({self.effect})>"

    # -- called by the native half -------------------------------------------

    def _invoke(self, args_json: str) -> tuple:
        try:
            kwargs = self._arguments(args_json)
            return (True, _encode(settle(self.func(**kwargs))), "")
        except BaseException as error:  # noqa: BLE001 - every failure becomes the step's error
            return _failure(error)

    def _invoke_async(self, args_json: str, done: Callable[[bool, str, str], None]) -> Any:
        """Schedule the call; its future (cancelled when the step is dropped), or None."""
        try:
            kwargs = self._arguments(args_json)
        except BaseException as error:  # noqa: BLE001
            done(*_failure(error))
            return None
        future = asyncio.run_coroutine_threadsafe(self.func(**kwargs), _event_loop())

        def finished(f: Any) -> None:
            try:
                done(True, _encode(f.result()), "")
            except BaseException as error:  # noqa: BLE001
                done(*_failure(error))

        future.add_done_callback(finished)
        return future

    def _arguments(self, args_json: str) -> dict:
        given = json.loads(args_json) if args_json else {}
        kwargs = {}
        for key, value in given.items():
            hint = self._hints.get(key)
            kwargs[key] = _decode(value, hint) if hint is not None else value
        return kwargs


def tool(
    func: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    effect: str = "external",
) -> Any:
    """Make a function a tool: ``@planexec.tool`` or ``@planexec.tool(effect="read_only")``.

    ``effect`` says what a call does to the world (``read_only``, ``network``,
    ``writes_workspace``, ``external``, ``irreversible``); it decides which
    calls need confirmation in ``mode="ask"`` and whether a resumed run may
    repeat a call. Functions with side effects should say so; the default,
    ``external``, assumes they have some.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, description=description, effect=effect)

    return wrap(func) if func is not None else wrap


# -- event loops for coroutine tools -------------------------------------------

_loops: list = []
_loops_lock = threading.Lock()
_background: Optional[asyncio.AbstractEventLoop] = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The loop of the ``arun`` that is running (the latest, when several are),
    else a loop of planexec's own on a background thread."""
    global _background
    with _loops_lock:
        for loop in reversed(_loops):
            if loop.is_running():
                return loop
        if _background is None or _background.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="planexec-tools", daemon=True).start()
            _background = loop
        return _background


def settle(value: Any) -> Any:
    """``value``, or what it gives when awaited (a coroutine from a callable
    that is not a coroutine function, an ``async`` callback), awaited on the
    event loop coroutine tools use. Called on planexec's threads, never on a loop's."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    return asyncio.run_coroutine_threadsafe(wait(), _event_loop()).result()


class _CallersLoop:
    """While an ``arun`` awaits, coroutine tools run on its event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __enter__(self) -> None:
        with _loops_lock:
            _loops.append(self.loop)

    def __exit__(self, *exc: Any) -> None:
        with _loops_lock:
            _loops.remove(self.loop)


# -- results and failures --------------------------------------------------------


def _encode(value: Any) -> str:
    return json.dumps(value, default=_plain, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


_KINDS = (
    ((TypeError, ValueError), "invalid_args"),
    ((LookupError, FileNotFoundError), "not_found"),
    ((PermissionError,), "denied"),
    ((TimeoutError, ConnectionError), "retryable"),
)


def _failure(error: BaseException) -> tuple:
    kind = next((k for types, k in _KINDS if isinstance(error, types)), "failed")
    message = str(error) or type(error).__name__
    return (False, f"{type(error).__name__}: {message}", kind)


# -- schemas from signatures ---------------------------------------------------


def _type_hints(func: Callable[..., Any]) -> dict:
    try:
        return typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - unresolvable forward references: no hints
        return {}


def _schema_of(signature: inspect.Signature, hints: dict, docs: dict) -> dict:
    properties: dict = {}
    required = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(param.name, Any)
        schema, optional = _schema_of_type(hint)
        if param.name in docs:
            schema = {**schema, "description": docs[param.name]}
        if param.default is not inspect.Parameter.empty:
            default = param.default
            if isinstance(default, enum.Enum):
                default = default.value
            if _is_json(default):
                schema = {**schema, "default": default}
        elif not optional or param.name not in hints:
            # No default: required, whatever its type says (an unannotated one too).
            required.append(param.name)
        properties[param.name] = schema
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _is_json(value: Any) -> bool:
    """Whether ``value`` can be a schema's default: plain, finite JSON."""
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _is_union(origin: Any) -> bool:
    """``Union[...]``/``Optional[...]``, and ``X | Y`` (``types.UnionType``, Python 3.10+)."""
    return origin is typing.Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType")


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema_of_type(hint: Any) -> tuple:
    """The JSON Schema of a type hint, and whether it admits None."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(origin):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        if len(rest) == 1:
            return _schema_of_type(rest[0])[0], optional
        return {"anyOf": [_schema_of_type(a)[0] for a in rest]}, optional
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}, False
    if origin is typing.Literal:
        return {"enum": list(args)}, False
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set):
        item = _schema_of_type(args[0])[0] if args else {}
        return ({"type": "array", "items": item} if item else {"type": "array"}), False
    if origin is dict or hint is dict:
        value = _schema_of_type(args[1])[0] if len(args) == 2 else {}
        return ({"type": "object", "additionalProperties": value} if value else {"type": "object"}), False
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [m.value for m in hint]}, False
    if hasattr(hint, "model_json_schema"):
        return hint.model_json_schema(), False
    if dataclasses.is_dataclass(hint):
        fields = {f.name: f for f in dataclasses.fields(hint)}
        signature = inspect.Signature(
            [
                inspect.Parameter(
                    n,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=f.default if f.default is not dataclasses.MISSING else inspect.Parameter.empty,
                )
                for n, f in fields.items()
            ]
        )
        schema = _schema_of(signature, _type_hints(hint), {})
        return schema, False
    return {}, hint is Any


def _decode(value: Any, hint: Any) -> Any:
    """A JSON value as the type the function declared (models, dataclasses, enums)."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if _is_union(origin):
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        return _decode(value, rest[0]) if len(rest) == 1 else value
    if hasattr(hint, "model_validate"):
        return hint.model_validate(value)
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return hint(**value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if hint is float and isinstance(value, int):
        return float(value)
    if origin in (tuple, set, frozenset) and isinstance(value, list):
        return origin(value)
    return value


def _parse_docstring(doc: str) -> tuple:
    """The first paragraph, and each argument's description from a Google
    (``Args:``), NumPy (``Parameters``) or Sphinx (``:param x:``) section."""
    paragraphs = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)
    summary = " ".join(paragraphs[0].split()) if paragraphs and paragraphs[0] else ""
    if re.match(r"(Args|Arguments|Parameters|Returns|:param)", summary):
        summary = ""
    docs: dict = {}
    for name, text in re.findall(r":param\s+(?:\w+\s+)?(\w+):\s*(.+)", doc):
        docs[name] = text.strip()
    section = re.search(r"(?:Args|Arguments):\s*\n(.*?)(?:\n\s*\n|\Z)", doc, re.S)
    if section:
        for name, text in re.findall(r"^\s*(\w+)(?:\s*\([^)]*\))?:\s*(.+)$", section.group(1), re.M):
            docs.setdefault(name, text.strip())
    numpy = re.search(r"Parameters\s*\n\s*-+\s*\n(.*?)(?:\n\s*\n|\Z)", doc, re.S)
    if numpy:
        for name, text in re.findall(r"^(\w+)\s*:.*\n\s+(.+)$", numpy.group(1), re.M):
            docs.setdefault(name, text.strip())
    return summary, docs
