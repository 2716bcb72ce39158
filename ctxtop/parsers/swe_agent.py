"""SWE-agent trajectories (`*.traj`): the `history` of chat messages, with SWE-agent's own fields.

History messages are OpenAI-style (`role`, `content`, `tool_calls`), plus
`message_type` (`system_prompt`, `demonstration`, `observation`, `action`,
`thought`) and `tool_call_ids` on observations. The log has no per-call prompt
size: `info.model_stats` totals the whole run, so it is kept as metadata and
the window is estimated from the text. (mini-swe-agent's `.traj.json` is a
plain message dump, read by the openai-messages parser.)
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.messages import OpenAIMessagesParser
from ctxtop.parsers.model import INJECTED, TOOL_RESULT, Block


def looks_like(document: Any) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("history"), list)
            and all(isinstance(m, dict) and "role" in m for m in document["history"][:5])
            and ("trajectory" in document or any("message_type" in m for m in document["history"][:5] if isinstance(m, dict))))


class SweAgentParser(OpenAIMessagesParser):
    name = "swe-agent"
    description = "SWE-agent trajectory (.traj: history of messages, trajectory, info)"
    locations = ("trajectories/<user>/<run>/<instance>/<instance>.traj",)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not looks_like(document):
            self.malformed(1, "not a SWE-agent trajectory (no history of messages)")
            return
        for position, message in enumerate(document["history"]):
            role = message.get("role") if isinstance(message, dict) else None
            if not isinstance(role, str):
                self.malformed(0, f"history item {position + 1} has no role")
                continue
            blocks = self._blocks(role, message)
            if message.get("message_type") == "demonstration":
                # Worked examples the harness pastes in: instructions, not the user's words.
                blocks = [Block(INJECTED, b.text) if b.category != TOOL_RESULT else b for b in blocks]
            ids = message.get("tool_call_ids")
            if role == "tool" and isinstance(ids, list) and ids and blocks:
                blocks[0].tool_id = blocks[0].tool_id or str(ids[0])
            if blocks:
                self.add_entry(role, blocks, 0, 0)
        config = document.get("replay_config")
        model = _dig(config, "agent", "model", "name")
        if isinstance(model, str):
            self.meta.model = model


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
