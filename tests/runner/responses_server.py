"""A loopback server of OpenAI's Responses API (``POST /v1/responses``) that plays a store
agent with native function calls and server-side compaction.

It reads the task from the first user message (or from the compaction item it wrote) and
the facts from the ``function_call_output`` items: a price task calls ``get_price``; an
aisle task calls ``find_item``, then ``get_price`` of the item found; once the fact is
known it answers in an ``output_text`` message, after a ``reasoning`` item. A request
without tools (a single-request trial) is answered with the opening words of its context.
Tokens are the input's characters over 3 (instructions included; a compaction item counts its own
characters over 3), the instructions' share reported as cached; output 9 tokens, 2 of
them reasoning.

With ``context_management`` and an input past its ``compact_threshold``, the output opens
with a ``compaction`` item whose ``encrypted_content`` is the task and facts so far,
encoded; input items before the latest compaction item are ignored, as the API's stateless
chaining allows. A ``function_call_output`` whose call is not in the input is a 400, as
OpenAI answers it. ``faults`` maps a word of a task to what its requests get instead:
``incomplete`` (status ``incomplete``, reason ``max_output_tokens``) or ``malformed`` (a
``function_call`` item without ``call_id``). Every body received and every reply sent is
kept (``bodies``, ``replies``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

from .json_loopback import JsonLoopback


def _text(item: dict[str, Any]) -> str:
    if item.get("type") == "function_call":
        return f"{item.get('name')} {item.get('arguments')}"
    if item.get("type") == "function_call_output":
        return str(item.get("output"))
    if item.get("type") == "compaction":
        return str(item.get("encrypted_content"))
    return str(item.get("content"))


def encode_state(state: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(state, sort_keys=True).encode()).decode()


def decode_state(content: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(base64.b64decode(content))
    return value


class ResponsesServer(JsonLoopback):
    def __init__(self, faults: Mapping[str, str] | None = None, *,
                 request_ids: bool = True) -> None:
        super().__init__()
        self.replies: list[dict[str, Any]] = []
        self.faults = dict(faults or {})
        self.request_ids = request_ids

    def respond(self, path: str, body: dict[str, Any],
                number: int) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, reply = (404, {"error": {"message": "not found"}}) \
            if path != "/v1/responses" else self.answer(body, number)
        with self.lock:
            self.replies.append(reply)
        return status, reply, {"x-request-id": f"req-{number}"} if self.request_ids else {}

    def _check(self, body: dict[str, Any]) -> None:
        if body.get("store") is not False:
            self.problems.append("store is not false")
        if "messages" in body or "seed" in body or "stop" in body:
            self.problems.append("a Chat Completions field was sent")
        for tool in body.get("tools", []):
            if tool.get("type") != "function" or "function" in tool or "name" not in tool:
                self.problems.append(f"a tool is not flat: {tool}")
        if "context_management" in body and body.get("truncation") != "auto":
            self.problems.append("compaction without truncation auto")

    def answer(self, body: dict[str, Any], number: int) -> tuple[int, dict[str, Any]]:
        self._check(body)
        items: list[dict[str, Any]] = body["input"]
        last = max((n for n, i in enumerate(items) if i.get("type") == "compaction"),
                   default=None)
        state: dict[str, Any] = {"task": "", "facts": []}
        if last is not None:
            state = decode_state(items[last]["encrypted_content"])
        view = items if last is None else items[last:]
        calls = {i["call_id"] for i in view if i.get("type") == "function_call"}
        for i in view:
            if i.get("type") == "function_call_output" and i.get("call_id") not in calls:
                return 400, {"error": {"message": "No tool call found for function call "
                                                  f"output with call_id {i.get('call_id')}.",
                                       "type": "invalid_request_error"}}
        task: str = state["task"] or next(str(i["content"]) for i in view
                                          if i.get("role") == "user")
        facts = list(state["facts"]) + [
            line for i in view if i.get("type") == "function_call_output"
            for line in str(i["output"]).split("\n") if line.startswith("The ")]
        instructions = len(str(body.get("instructions", ""))) // 3
        tokens = instructions + sum(len(_text(i)) // 3 for i in view)
        usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": instructions},
                 "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 2},
                 "total_tokens": tokens + 9}
        output: list[dict[str, Any]] = []
        for entry in body.get("context_management", []):
            if entry.get("type") == "compaction" and tokens > entry["compact_threshold"]:
                output.append({"type": "compaction", "id": f"cmp_{number}",
                               "encrypted_content": encode_state({"task": task,
                                                                  "facts": facts})})
        output.append({"type": "reasoning", "id": f"rs_{number}", "summary": []})
        fault = next((f for word, f in self.faults.items() if word in task), None)
        reply = {"id": f"resp_{number}", "object": "response", "status": "completed",
                 "model": body["model"], "output": output, "usage": usage,
                 "incomplete_details": None, "error": None}
        if fault == "incomplete":
            output.append({"type": "message", "id": f"msg_{number}", "role": "assistant",
                           "content": [{"type": "output_text", "text": "The pri"}]})
            reply.update(status="incomplete",
                         incomplete_details={"reason": "max_output_tokens"})
            return 200, reply
        if not body.get("tools"):  # a single request: the context's opening words
            words = task.partition("Context:")[2].split()[:12]
            output.append({"type": "message", "id": f"msg_{number}", "role": "assistant",
                           "content": [{"type": "output_text", "text": " ".join(words)}]})
            return 200, reply
        output.append(self._move(task, facts, number, malformed=fault == "malformed"))
        return 200, reply

    def _move(self, task: str, facts: list[str], number: int, *,
              malformed: bool) -> dict[str, Any]:
        """The next function call of the task, or the answer once its fact is known."""
        item = re.search(r"'([^']+)'", task)
        aisle = re.search(r"aisle (\d+)", task)
        name, arguments = "", dict[str, Any]()
        if aisle and item is None:
            found = next((re.search(r"is the (.+)\.$", f) for f in facts
                          if f.startswith(f"The item in aisle {aisle.group(1)} ")), None)
            if found is None:
                name, arguments = "find_item", {"aisle": int(aisle.group(1))}
            wanted = found.group(1) if found else ""
        else:
            wanted = item.group(1) if item else ""
        price = next((f for f in facts if f.startswith(f"The price of the {wanted} ")), None)
        if not name and price is None:
            name, arguments = "get_price", {"item": wanted}
        if not name:
            return {"type": "message", "id": f"msg_{number}", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": str(price),
                                 "annotations": []}]}
        call = {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                "name": name, "arguments": json.dumps(arguments), "status": "completed"}
        if malformed:
            del call["call_id"]
        return call
