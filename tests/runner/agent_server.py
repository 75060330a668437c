"""A loopback OpenAI-compatible server that plays an agent with native tool calls.

The first request of a conversation gets a ``tool_calls`` answer (``get_price`` of the
item quoted in the task); once a ``tool`` message is present it answers in plain text
with the result's fact (its last line opening with "The "). It checks that the history
came back natively (an assistant message with ``tool_calls`` and a ``tool`` message with
its ``tool_call_id``) and keeps every body it received.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .json_loopback import JsonLoopback


class AgentServer(JsonLoopback):
    def respond(self, path: str, body: dict[str, Any],
                number: int) -> tuple[int, dict[str, Any], dict[str, str]]:
        return 200, self.answer(body), {"x-request-id": f"req-{number}"}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        words = sum(len(str(m.get("content") or "").split()) for m in messages)
        usage = {"prompt_tokens": words, "completion_tokens": 7, "total_tokens": words + 7}
        tools = [m for m in messages if m["role"] == "tool"]
        if not tools:
            task = next(m["content"] for m in messages if m["role"] == "user")
            item = re.search(r"'([^']+)'", task)
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "srv-1", "type": "function", "function": {
                    "name": "get_price",
                    "arguments": json.dumps({"item": item.group(1) if item else ""})}}]}
        else:
            calls = [m for m in messages if m.get("tool_calls")]
            if not calls or tools[-1].get("tool_call_id") != calls[-1]["tool_calls"][0]["id"]:
                self.problems.append("the tool result does not answer the call natively")
            fact = [line for line in str(tools[-1]["content"]).split("\n")
                    if line.startswith("The ")]
            message = {"role": "assistant", "content": fact[-1] if fact else ""}
        return {"id": "cmpl", "choices": [{"index": 0, "message": message,
                                           "finish_reason": "stop"}], "usage": usage}
