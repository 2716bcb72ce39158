"""Cline and Roo Code task folders: `api_conversation_history.json` and `ui_messages.json`.

The API history is Anthropic messages (plus `ts`). What the model is sent is
less than the file: Cline keeps a `conversationHistoryDeletedRange` (on
`ui_messages.json` rows, with the API-history index it applied at), and Roo
Code marks condensed messages with `condenseParent` once a summary
(`isSummary`) replaces them. Each becomes a compaction. Per-request token
usage comes from the `api_req_started` rows (tokensIn + cacheReads + cacheWrites).
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.content import blocks_from_anthropic, listed
from ctxtop.parsers.jsonl import loads
from ctxtop.parsers.model import SUMMARY, Block, Compaction, Usage
from ctxtop.parsers.numbers import number, summed
from ctxtop.parsers.tree import Tree, TreeParser

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"


def looks_like(files: Tree) -> bool:
    return HISTORY in files


class ClineTaskParser(TreeParser):
    name = "cline"
    description = "Cline / Roo Code task folder (api_conversation_history.json, ui_messages.json)"
    locations = (
        "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/<task-id>/",
        "~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<task-id>/",
    )

    def parse_tree(self, files: Tree) -> None:
        history = self.load(files, HISTORY)
        if not isinstance(history, list):
            self.malformed(0, f"{HISTORY} is not a JSON array")
            return
        ui = listed(self.load(files, UI))
        truncations = _truncations(ui)
        usages = _request_usages(ui)
        condensed: dict[str, list[str]] = {}  # condenseId -> uids it replaced
        condense_reports = _condense_reports(ui)
        summaries = 0
        assistant_turns = 0
        for index, message in enumerate(history):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                self.malformed(0, f"{HISTORY}: message {index + 1} has no role")
                continue
            uid = str(index)
            blocks, unknown = blocks_from_anthropic(message.get("content"), message["role"])
            if unknown:
                self.unknown(0, f"content block type ({unknown}) in message {index + 1}")
            parent = message.get("condenseParent")
            if isinstance(parent, str):
                condensed.setdefault(parent, []).append(uid)
            compaction = None
            if message.get("isSummary") and isinstance(message.get("condenseId"), str):
                gone = set(condensed.get(message["condenseId"], [])) | set(_replaced_later(history, message["condenseId"]))
                kept = tuple(e.uid for e in self.entries if e.uid and e.uid not in gone and e.compaction is None)
                report = _condense_report(condense_reports, message["condenseId"], summaries)
                summaries += 1
                compaction = Compaction("roo_condense", pre_tokens=number(report.get("prevContextTokens")),
                                        post_tokens=number(report.get("newContextTokens")), preserved_ids=kept)
                blocks = [Block(SUMMARY, b.text) for b in blocks]
            usage = None
            if message["role"] == "assistant":
                usage = _metrics_usage(message) or (usages[assistant_turns] if assistant_turns < len(usages) else None)
                assistant_turns += 1
            timestamp = _iso(message.get("ts"))
            self.add_entry(message["role"], blocks, 0, 0, timestamp=timestamp, uid=uid, usage=usage, compaction=compaction)
            model = (message.get("modelInfo") or {}).get("modelId") if isinstance(message.get("modelInfo"), dict) else None
            if isinstance(model, str):
                self.meta.model = model
            for start, end in truncations.get(index, []):
                kept = tuple(e.uid for e in self.entries if e.uid and e.compaction is None and not (start <= int(e.uid) <= end))
                self.add_entry("system", [], 0, 0, uid=f"truncation-{index}-{start}-{end}",
                               compaction=Compaction("cline_truncation", trigger="auto", preserved_ids=kept))


def _truncations(ui: list) -> dict[int, list[tuple[int, int]]]:
    """Deleted ranges as they changed, keyed by the API-history index after which each applied."""
    found: dict[int, list[tuple[int, int]]] = {}
    last: tuple[int, int] | None = None
    for row in ui:
        if not isinstance(row, dict):
            continue
        deleted, at = row.get("conversationHistoryDeletedRange"), row.get("conversationHistoryIndex")
        if isinstance(deleted, list) and len(deleted) == 2 and all(isinstance(v, int) for v in deleted) and isinstance(at, int):
            current = (deleted[0], deleted[1])
            if current != last:
                found.setdefault(at, []).append(current)
                last = current
    return found


def _request_usages(ui: list) -> list[Usage]:
    usages = []
    for row in ui:
        if isinstance(row, dict) and row.get("say") == "api_req_started" and isinstance(row.get("text"), str):
            try:
                info = loads(row["text"])
            except ValueError:
                continue
            # Numbers are handed on as read (Parser.checked_usage keeps the counts and counts the rest).
            if isinstance(info, dict) and number(info.get("tokensIn")) is not None:
                prompt = summed(info["tokensIn"], info.get("cacheReads"), info.get("cacheWrites"))
                usages.append(Usage(prompt, number(info.get("tokensOut")) or 0))
    return usages


def _condense_reports(ui: list) -> list[dict]:
    """Roo Code's ``condense_context`` rows' ``contextCondense`` (the window's tokens before and after), in order."""
    rows = (row for row in ui if isinstance(row, dict) and row.get("say") == "condense_context")
    return [row["contextCondense"] for row in rows if isinstance(row.get("contextCondense"), dict)]


def _condense_report(reports: list[dict], condense_id: str, ordinal: int) -> dict:
    """The report of the condense that wrote summary ``condense_id``, the ``ordinal``-th (0-based): by its id, or
    (older Roo Code, whose reports name none) by their order."""
    named = next((report for report in reports if report.get("condenseId") == condense_id), None)
    if named is not None:
        return named
    if ordinal < len(reports) and "condenseId" not in reports[ordinal]:
        return reports[ordinal]
    return {}


def _metrics_usage(message: dict) -> Usage | None:
    tokens = (message.get("metrics") or {}).get("tokens") if isinstance(message.get("metrics"), dict) else None
    if isinstance(tokens, dict) and number(tokens.get("prompt")) is not None:
        return Usage(summed(tokens["prompt"], tokens.get("cached")), number(tokens.get("completion")) or 0)
    return None


def _replaced_later(history: list, condense_id: str) -> list[str]:
    return [str(i) for i, m in enumerate(history) if isinstance(m, dict) and m.get("condenseParent") == condense_id]


def _iso(ts: Any) -> str | None:
    if isinstance(ts, (int, float)):
        from datetime import datetime, timezone

        return datetime.fromtimestamp(ts / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None
