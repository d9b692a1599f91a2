"""A scripted OpenAI-compatible Chat Completions server on loopback, for the
Python tests and the side-by-side benchmark: real HTTP, as the Rust tests'
``planexec-testkit`` server, so the provider code under test is the code users
run. Replies are scripted per role (the ``x-planexec-role`` header planexec
sends) and optionally by a substring of the request body; every request is
recorded. Requests from other programs (LangGraph) carry no role and match
rules scripted for any role.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, List, Optional, Union

# A message, or a function of the request body and its role header that gives one.
ReplyBody = Union[dict, Callable[[dict, Optional[str]], dict]]


def content(text: str) -> dict:
    """A completion whose message is ``text``."""
    return {"role": "assistant", "content": text}


def json_content(value: Any) -> dict:
    """A completion whose message is ``value`` as JSON (a plan, a structured answer)."""
    return content(json.dumps(value))


def tool_calls(*calls: tuple) -> dict:
    """A completion that calls tools: ``(name, arguments)`` pairs."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{i}_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)
        ],
    }


class Rule:
    def __init__(self, role: Optional[str], containing: Optional[str], replies: List[ReplyBody], always: bool):
        self.role = role
        self.containing = containing
        self.replies = list(replies)
        self.always = always

    def matches(self, role: Optional[str], body: str) -> bool:
        return (self.role is None or self.role == role) and (self.containing is None or self.containing in body)


class ScriptedServer:
    """Start with ``ScriptedServer()``; ``base_url`` is what planexec is given."""

    def __init__(self, delay: float = 0.0) -> None:
        self.rules: List[Rule] = []
        self.requests: List[dict] = []
        self.delay = delay
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length).decode()
                status, reply = server._answer(self.headers.get("x-planexec-role"), raw)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def on(self, role: Optional[str], *replies: ReplyBody, containing: Optional[str] = None) -> None:
        """Answer matching requests with these replies in order, each once."""
        with self._lock:
            self.rules.append(Rule(role, containing, list(replies), False))

    def always(self, role: Optional[str], reply: ReplyBody, containing: Optional[str] = None) -> None:
        """Answer every matching request with ``reply`` (a message, or a function of the request)."""
        with self._lock:
            self.rules.append(Rule(role, containing, [reply], True))

    def roles(self) -> List[Optional[str]]:
        with self._lock:
            return [r["role"] for r in self.requests]

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _answer(self, role: Optional[str], raw: str) -> tuple:
        request = json.loads(raw) if raw else {}
        with self._lock:
            self.requests.append({"role": role, "body": request, "at": time.time()})
            rule = next((r for r in self.rules if r.matches(role, raw) and r.replies), None)
            if rule is None:
                return 500, {"error": {"message": f"nothing scripted for role {role!r}", "type": "server_error"}}
            reply = rule.replies[0] if rule.always else rule.replies.pop(0)
        if self.delay:
            time.sleep(self.delay)
        message = reply(request, role) if callable(reply) else reply
        prompt = sum(len(json.dumps(m)) for m in request.get("messages", [])) // 4
        completion = len(json.dumps(message)) // 4
        return 200, {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }
