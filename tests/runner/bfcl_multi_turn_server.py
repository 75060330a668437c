"""A loopback OpenAI-compatible server that plays BFCL multi-turn ground truths natively.

Each request's turn is the number of user messages in it, less one; the first reply of a
turn (no assistant message since the last user message) makes the turn's ground-truth
calls as native ``tool_calls``, the next answers in plain text. It checks that every
``tool`` message answers a call of the assistant message before it (by id), and keeps
every body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .json_loopback import JsonLoopback


class MultiTurnServer(JsonLoopback):
    def __init__(self, truths: Mapping[str, Sequence[Sequence[tuple[str, dict[str, Any]]]]],
                 first_messages: Mapping[str, str]) -> None:
        self.truths = truths
        self.first = {text: task_id for task_id, text in first_messages.items()}
        super().__init__()

    def respond(self, path: str, body: dict[str, Any],
                number: int) -> tuple[int, dict[str, Any], dict[str, str]]:
        return 200, self.answer(body), {"x-request-id": f"req-{number}"}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [n for n, m in enumerate(messages) if m["role"] == "user"]
        task_id = self.first.get(messages[users[0]]["content"], "")
        for n, m in enumerate(messages):
            if m["role"] == "tool":
                calls = next((p.get("tool_calls") or [] for p in reversed(messages[:n])
                              if p["role"] == "assistant"), [])
                if m.get("tool_call_id") not in {c["id"] for c in calls}:
                    self.problems.append(f"tool message {n} answers no native call")
        done = any(m["role"] == "assistant" for m in messages[users[-1]:])
        calls = self.truths[task_id][len(users) - 1] if task_id in self.truths else []
        words = sum(len(str(m.get("content") or "").split()) for m in messages)
        if done or not calls:
            message: dict[str, Any] = {"role": "assistant", "content": "Done."}
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"srv-{len(self.bodies)}-{k}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for k, (name, arguments) in enumerate(calls)]}
        return {"id": "cmpl", "choices": [{"index": 0, "message": message,
                                           "finish_reason": "stop"}],
                "usage": {"prompt_tokens": words, "completion_tokens": 9,
                          "total_tokens": words + 9}}
