"""The Markdown form of a snapshot, for pasting into an issue or a PR."""

from __future__ import annotations

from typing import Any

from ctxtop.context.output.marks import limit_mark, lost_count, use_mark
from ctxtop.context.sanitize import cut
from ctxtop.context.sanitize import markdown_cell as cell
from ctxtop.context.strategies.report import STRATEGY_TABLE_HEADER, strategy_rows


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


def _inferred_note(categories: dict[str, Any]) -> str:
    inferred = next((c for c in categories.values() if c.get("inferred_from")), None)
    if inferred is None:
        return "No system prompt or tools were inferred: all of it is unattributed."
    source = inferred["inferred_from"]
    # The row holds no more than this window leaves unexplained: it can be less than the figure inferred.
    capped = f"; here {num(inferred['tokens'])}, all the reported size leaves" if inferred["tokens"] < source["tokens"] else ""
    what = ("The conversation this call summarized, the system prompt and tools (sent with the call, not in this log)"
            if inferred.get("summarized_conversation") else "The system prompt and tools the log does not show")
    return (f"{what} are inferred from the model call at message "
            f"{source['message']} ({num(source['tokens'])} tokens, {cell(source['reason'])}{capped}); the rest is unattributed.")


def _tool_tables(usage: dict[str, Any], message: int, history_estimated: bool = False) -> list[str]:
    """Per-tool (and per-MCP-server) calls and tokens: in the window, then over the session."""
    lines: list[str] = []
    session = f"over the session up to message {message}, compacted away or not" + (", ≈ estimated" if history_estimated else "")
    scopes = (("window", "in the window"), ("session", session))
    for scope, where in scopes:
        rows = usage.get(scope)
        if not rows or not rows["tools"]:
            continue
        lines += ["", f"### Tools ({where})", ""]
        lines += table(["tool", "calls", "call tokens", "results", "result tokens", "tokens"],
                        [[r["tool"], r["calls"], num(r["call_tokens"]), r["results"], num(r["result_tokens"]), num(r["tokens"])]
                         for r in rows["tools"]])
        if rows["mcp_servers"]:
            lines += ["", f"MCP servers ({where}):", ""]
            lines += table(["server", "tools", "calls", "call tokens", "results", "result tokens", "tokens"],
                            [[r["server"], r["tools"], r["calls"], num(r["call_tokens"]), r["results"], num(r["result_tokens"]),
                              num(r["tokens"])] for r in rows["mcp_servers"]])
    return lines


def _agent_window(window: dict[str, Any]) -> str:
    """Its last call's prompt; ≈ our count of its text when it reports none."""
    if window["reported_tokens"] is not None:
        return num(window["reported_tokens"])
    return "≈ " + num(window["estimated_tokens"])


def render_markdown(snapshot: dict[str, Any]) -> str:
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    limit = window["limit"]
    used = window["used_tokens"]
    lines = [
        f"## ctxtop snapshot — {cell(source['path'] or 'session')}",
        "",
        f"- **Format:** {cell(source['format'])} · **Model:** {cell(source['model'] or 'unknown')}"
        f" · **Session:** {cell(source['session_id'] or '—')}",
        f"- **At message:** {at['message']} / {at['messages']}" + (f" ({cell(at['timestamp'])})" if at["timestamp"] else ""),
        f"- **Window:** {use_mark(window)}{num(used)} / {limit_mark(window)}{num(limit)} tokens ({100 * used / limit:.1f}%) — "
        f"reported {num(window['reported_tokens'])}, estimated {num(window['estimated_tokens'])} ({cell(window['encoding'])})",
        "",
        "### Breakdown",
        "",
    ]
    rows = []
    for name, total in window["categories"].items():
        share = 100 * total["tokens"] / limit if limit else 0
        estimate = "≈ " if total.get("estimated") else ""
        rows.append([total.get("label", name), estimate + num(total["tokens"]), f"{share:.1f}%", total["blocks"]])
    lines += table(["category", "tokens", "% of window", "blocks"], rows)
    lines += ["", "_≈ estimated: what the log reports beyond the counted text. "
              + _inferred_note(window["categories"]) + "_"]
    lines += _tool_tables(snapshot.get("tool_usage") or {}, at["message"], bool(snapshot.get("history_estimated")))
    agents = (snapshot.get("subagents") or {}).get("agents") or []
    if agents:
        lines += ["", "### Sub-agents", ""]
        lines += table(
            ["agent", "type", "messages", "window", "% of limit", "task"],
            [[a["id"], a["kind"], a["messages"], _agent_window(a["window"]),
              f"{a['window']['percent']:.1f}%" if a["window"]["percent"] is not None else "—", a["description"] or "—"]
             for a in agents],
        )
    if snapshot["constraints"]:
        lines += ["", "### Constraints", ""]
        lines += table(
            ["id", "text", "status", "missing facts", "first stated", "found in", "why taken"],
            [
                [c["id"], c["text"], c["status"], ", ".join(c["missing_facts"]) or "—", c["first_stated"] or "—",
                 ", ".join(map(str, c["found_in"])) or "—",
                 " · ".join(p for p in (f"cue: {c['cue']}" if c.get("cue") else "", c.get("origin") or "") if p) or c["source"]]
                for c in snapshot["constraints"]
            ],
        )
    if snapshot["compactions"]:
        lines += ["", "### Compactions", ""]
        lines += table(
            ["message", "kind", "trigger", "before", "after", "constraints before → after", "facts lost"],
            [
                [c["message"], c["kind"], c["trigger"] or "—", num(c["pre_tokens"]), num(c["post_tokens"]),
                 "; ".join(f"{cid}: {v['before']} → {v['after']}" for cid, v in c["constraints"].items()) or "—",
                 lost_count(c["lost_items"])]
                for c in snapshot["compactions"]
            ],
        )
    forensics = [c for c in snapshot["compactions"] if c.get("forensics")]
    if forensics:
        lines += ["", "### Compaction forensics", ""]
        for compaction in forensics:
            lines += forensics_lines(compaction["message"], compaction["forensics"])
    if snapshot.get("strategies"):
        lines += ["", f"### Strategy previews (budget {num(snapshot['budget'])} tokens)", ""]
        lines += table(STRATEGY_TABLE_HEADER, strategy_rows(snapshot["strategies"]))
    if snapshot["alerts"]:
        lines += ["", "### Alerts", ""]
        lines += table(
            ["message", "kind", "constraint", "detail"],
            [[a["message"], a["kind"], _rule_with_text(a["constraint"], snapshot["constraints"]), a["detail"]]
             for a in snapshot["alerts"]],
        )
    diagnostics = source["diagnostics"]
    invalid_numbers = diagnostics.get("invalid_numbers", 0)
    if diagnostics["malformed_lines"] or diagnostics["unknown_records"] or invalid_numbers:
        lines += [
            "",
            f"_Diagnostics: {diagnostics['malformed_lines']} malformed lines, {diagnostics['unknown_records']} unknown records"
            + (f", {invalid_numbers} invalid numbers (ignored)" if invalid_numbers else "") + "._",
        ]
        kinds = diagnostics.get("unknown_kinds") or {}
        if kinds:
            lines += ["", "_Unknown kinds: " + ", ".join(f"{name} ×{count}" for name, count in sorted(kinds.items())) + "._"]
    return "\n".join(lines) + "\n"


def _rule_with_text(rule_id: str | None, constraints: list[dict[str, Any]], width: int = 60) -> str:
    """An alert's rule as its id followed by the start of its text, so the table reads without a lookup."""
    if not rule_id:
        return "—"
    text = next((c["text"] for c in constraints if c["id"] == rule_id), "")
    short = cut(text, width)
    return f"{rule_id}: {short}" if short else rule_id


def cost_line(cost: dict[str, Any]) -> str:
    """The prompt-cache cost of a compaction in one line (the snapshot's ``forensics.cost``)."""
    split = ""
    if cost["cache_write_5m_tokens"] is not None or cost["cache_write_1h_tokens"] is not None:
        split = f" (5m {num(cost['cache_write_5m_tokens'])}, 1h {num(cost['cache_write_1h_tokens'])})"
    payback = f", pays back in {cost['payback_turns']:g} turns" if cost["payback_turns"] is not None else ""
    summarizing = _summarization_tokens(cost)
    # The price table names its source; what keeps a compaction unpriced is said: no cache writes in the log after
    # it (the re-write is then unknown, whatever the model; Codex reports only what it read), or a model the table
    # does not hold.
    usd = (f"${cost['usd']:.4f}{payback} ({cost['price_table']})" if cost["usd"] is not None
           else f"not priced: {_missing_cache_figures(cost)} after it" if cost["cache_write_tokens"] is None
           else f"not priced: {cost['price_table']} has no price for this model")
    return (f"cache write {num(cost['cache_write_tokens'])}{split}, read {num(cost['cache_read_tokens'])}, "
            f"summarization {summarizing} tokens — {usd}")


def _summarization_tokens(cost: dict[str, Any]) -> str:
    """The summarizing call's tokens, saying which are logged: a logged call's prompt is, the summary it wrote is
    ctxtop's count of its text (the log's ``output_tokens`` is a count taken mid-stream)."""
    call = cost.get("summarization_call")
    if call is not None and cost["summarization_tokens"] is not None:
        output = cost["summarization_tokens"] - call["prompt_tokens"]
        return f"{num(call['prompt_tokens'])} logged" + (f" + {num(output)} estimated" if output else "")
    return num(cost["summarization_tokens"]) + (" estimated" if cost["estimated"] else "")


def _missing_cache_figures(cost: dict[str, Any]) -> str:
    if cost["cache_read_tokens"] is None:
        return "the log gives no cache figures"
    return "the log gives cache reads but no cache writes"


def forensics_lines(message: int, forensics: dict[str, Any]) -> list[str]:
    modes = ", ".join(m["mode"] for m in forensics["failure_modes"]) or "none found"
    lines = [
        f"**Compaction at message {message}** — generation {forensics['generation']}; failure modes: {cell(modes)}; "
        f"recovery: **{forensics['recovery']['verdict']}**",
        "",
        f"- Cost: {cell(cost_line(forensics['cost']))}",
    ]
    lines += [f"- Recovery, message {a['message']}: {cell(a['action'])}" for a in forensics["recovery"]["actions"]]
    rows = [[m["mode"], e["message"], e["text"]] for m in forensics["failure_modes"] for e in m["evidence"]]
    if rows:
        lines += ["", *table(["failure mode", "message", "evidence"], rows)]
    if forensics["unsupported_claims"]:
        lines += ["", *table(["unsupported claim in the summary", "why"],
                              [[c["text"], c["why"]] for c in forensics["unsupported_claims"]])]
    return [*lines, ""]
