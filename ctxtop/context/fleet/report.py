"""The fleet audit's report for people: report.md and report.html, from the tables' rows.

Totals, the failure-mode shares as seed 001's study reports them, retention and recovery by
agent and model, the worst sessions (with the command that opens each where it went wrong),
the skipped files, and charts (text bars in Markdown, CSS bars in HTML: the page
loads nothing). Every text from a log is cleaned, and escaped for the format it goes into.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from html import escape
from typing import Any

from ctxtop.context.fleet.columns import FAILURE_MODES
from ctxtop.context.output.html import CSS
from ctxtop.context.sanitize import clean_text, markdown_cell, one_line, shell_word
from ctxtop.version import version

WORST = 10  # sessions listed as the worst
SKIPPED_LISTED = 100  # skipped files named in the report (all of them are in DIR/skipped)
BAR = 30  # characters of a full text bar
MODE_LABELS = {"constraint_evaporation": "constraint evaporation", "coordinate_loss": "coordinate loss",
               "decision_backtracking": "decision backtracking", "tool_chain_break": "tool-chain break"}

Row = dict[str, Any]


def summarize(sessions: Sequence[Row], compactions: Sequence[Row], skipped: Sequence[tuple[str, str]], reused: int = 0) -> dict[str, Any]:
    """The report's numbers, from the rows of both tables (the same numbers the README's queries give)."""
    rules = sum(r["rules"] for r in sessions)
    kept = sum(r["rules_kept_at_end"] for r in sessions)
    mode_counts = {mode: sum(r[mode] for r in sessions) for mode in FAILURE_MODES}
    found = sum(mode_counts.values())
    total_compactions = len(compactions)
    usd = [r["cache_rewrite_usd"] for r in sessions if r["cache_rewrite_usd"] is not None]
    return {
        "sessions": len(sessions),
        "skipped": len(skipped),
        "reused": reused,
        "messages": sum(r["messages"] for r in sessions),
        "compactions": total_compactions,
        "sessions_with_compactions": sum(1 for r in sessions if r["compactions"]),
        "rules": rules,
        "rules_kept_at_end": kept,
        "retention": kept / rules if rules else None,
        "violations": sum(r["violations"] for r in sessions),
        "tool_calls": sum(r["tool_calls"] for r in sessions),
        "tool_errors": sum(r["tool_errors"] for r in sessions),
        "unsupported_claims": sum(r["unsupported_claims"] for r in sessions),
        "cache_rewrite_tokens": sum(r["cache_rewrite_tokens"] for r in sessions),
        "cache_rewrite_usd": sum(usd) if usd else None,
        "priced_compactions": sum(1 for c in compactions if c["cost_usd"] is not None),
        "modes": [{"mode": mode, "compactions": count, "share": count / found if found else None,
                   "of_compactions": count / total_compactions if total_compactions else None} for mode, count in mode_counts.items()],
        "groups": _groups(sessions),
        "worst": _worst(sessions),
        "skipped_files": list(skipped),
    }


def _groups(sessions: Sequence[Row]) -> list[dict[str, Any]]:
    """Retention (rules kept at the end ÷ rules stated, pooled) and recovery (of the compactions) by agent and model."""
    by: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in sessions:
        by[(row["agent"] or "unknown", row["model"] or "unknown")].append(row)
    groups = []
    for (agent, model), rows in sorted(by.items()):
        rules, kept = sum(r["rules"] for r in rows), sum(r["rules_kept_at_end"] for r in rows)
        compactions = sum(r["compactions"] for r in rows)
        verified, none = sum(r["recovery_verified"] for r in rows), sum(r["recovery_none"] for r in rows)
        groups.append({"agent": agent, "model": model, "sessions": len(rows), "compactions": compactions, "rules": rules,
                       "retention": kept / rules if rules else None,
                       "recovery_verified": verified / compactions if compactions else None,
                       "recovery_none": none / compactions if compactions else None})
    return groups


def badness(row: Row) -> int:
    """How bad a session went: rules not kept to the end, rules broken, failure modes found."""
    return (row["rules"] - row["rules_kept_at_end"]) + row["violations"] + sum(row[mode] for mode in FAILURE_MODES)


def _worst(sessions: Sequence[Row]) -> list[dict[str, Any]]:
    ranked = sorted((r for r in sessions if badness(r)), key=lambda r: (-badness(r), r["path"]))[:WORST]
    return [{"path": r["path"], "badness": badness(r), "rules": r["rules"], "kept": r["rules_kept_at_end"],
             "violations": r["violations"], "modes": sum(r[mode] for mode in FAILURE_MODES),
             "command": open_command(r)} for r in ranked]


def open_command(row: Row) -> str:
    """The command that opens the session where it first went wrong (else at its end)."""
    at = f" --at {row['first_finding_at']}" if row["first_finding_at"] else ""
    path = row["path"]
    if "://" in path:  # ctxtop opens local files: the object, once copied here
        return f"ctxtop {shell_word(path.rsplit('/', 1)[-1])}{at} (once {path} is copied here)"
    return f"ctxtop {shell_word(path)}{at}"


def _pct(value: float | None) -> str:
    return f"{100 * value:.1f}%" if value is not None else "—"


def _n(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:,.4f}" if isinstance(value, float) else f"{value:,}"


def _bar(value: float | None) -> str:
    return "█" * round(BAR * value) if value else ""


# --- Markdown ---------------------------------------------------------------------------------
def render_markdown(summary: dict[str, Any]) -> str:
    s = summary
    lines = [f"# ctxtop fleet audit — {s['sessions']:,} session(s)", "",
             f"ctxtop {markdown_cell(version())} · {s['skipped']:,} file(s) skipped · {s['reused']:,} result(s) reused from an earlier run", "",
             "## Totals", "", "| | |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in _totals(s)]
    lines += ["", "## Failure modes", "", "Share of the failure modes found at compactions (as seed 001's study reports them), "
              "and how many compactions show each.", "", "| failure mode | compactions | share | of all compactions | |", "|---|---|---|---|---|"]
    lines += [f"| {MODE_LABELS[m['mode']]} | {m['compactions']:,} | {_pct(m['share'])} | {_pct(m['of_compactions'])} | {_bar(m['share'])} |"
              for m in s["modes"]]
    lines += ["", "## Retention and recovery by agent and model", "",
              "Retention: rules kept at the end ÷ rules stated. Recovery: of the compactions, the agent re-read its state and "
              "checked before changing anything (verified), or did neither (none).", "",
              "| agent | model | sessions | compactions | rules | retention | | recovery verified | recovery none |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {markdown_cell(g['agent'])} | {markdown_cell(g['model'])} | {g['sessions']:,} | {g['compactions']:,} | {g['rules']:,} | "
              f"{_pct(g['retention'])} | {_bar(g['retention'])} | {_pct(g['recovery_verified'])} | {_pct(g['recovery_none'])} |" for g in s["groups"]]
    lines += ["", "## Worst sessions", ""]
    if s["worst"]:
        lines += ["Rules not kept to the end + rules broken + failure modes; the command opens each where it first went wrong.", "",
                  "| session | rules kept | broken | failure modes | open it |", "|---|---|---|---|---|"]
        lines += [f"| {markdown_cell(w['path'])} | {w['kept']} / {w['rules']} | {w['violations']} | {w['modes']} | {_code(w['command'])} |"
                  for w in s["worst"]]
    else:
        lines.append("No session lost a rule, broke one or showed a failure mode.")
    lines += ["", "## Skipped", ""]
    if s["skipped_files"]:
        lines += ["| file | reason |", "|---|---|"]
        lines += [f"| {markdown_cell(path)} | {markdown_cell(reason)} |" for path, reason in s["skipped_files"][:SKIPPED_LISTED]]
        if len(s["skipped_files"]) > SKIPPED_LISTED:
            lines += ["", f"… and {len(s['skipped_files']) - SKIPPED_LISTED:,} more (all in `skipped`)."]
    else:
        lines.append("None: every file was audited.")
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    line = one_line(text)
    return f"`{line}`" if "`" not in line and "|" not in line else markdown_cell(line)


def _totals(s: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        ("sessions audited", _n(s["sessions"])),
        ("messages", _n(s["messages"])),
        ("compactions", f"{s['compactions']:,} (in {s['sessions_with_compactions']:,} session(s))"),
        ("rules stated", _n(s["rules"])),
        ("rules kept at the end", f"{s['rules_kept_at_end']:,} (retention {_pct(s['retention'])})"),
        ("rules broken (violations)", _n(s["violations"])),
        ("tool calls", f"{s['tool_calls']:,} ({s['tool_errors']:,} failed)"),
        ("unsupported claims in summaries", _n(s["unsupported_claims"])),
        ("cache re-write tokens after compactions", _n(s["cache_rewrite_tokens"])),
        ("compaction cost (USD, the summarizing calls as logged or estimated)", _cost(s)),
    ]


def _cost(s: dict[str, Any]) -> str:
    if s["cache_rewrite_usd"] is None:
        return "— (no compaction could be priced)"
    return (f"{s['cache_rewrite_usd']:,.2f} ({s['priced_compactions']:,} of {s['compactions']:,} compactions priced; "
            "the others: a model without a price, or no cache writes in the log)")


# --- HTML ---------------------------------------------------------------------------------------
REPORT_CSS = CSS + ".bar { display: inline-block; height: 0.8em; background: #c0152f; } .bar.ok { background: #0a7a2f; }\n"


def _e(value: Any) -> str:
    return escape(clean_text(str(value)), quote=True)


def _html_bar(value: float | None, good: bool = False) -> str:
    width = round(200 * value) if value else 0
    return f'<span class="bar{" ok" if good else ""}" style="width:{width}px"></span>'


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Cells are HTML already (escaped text or markup of ours)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(summary: dict[str, Any]) -> str:
    s = summary
    body = [f"<h1>ctxtop fleet audit — {s['sessions']:,} session(s)</h1>",
            f'<p class="muted">ctxtop {_e(version())} · {s["skipped"]:,} file(s) skipped · {s["reused"]:,} result(s) reused from an earlier run</p>',
            "<h2>Totals</h2>", _table(["", ""], [[_e(label), _e(value)] for label, value in _totals(s)]),
            "<h2>Failure modes</h2>",
            _table(["failure mode", "compactions", "share", "of all compactions", ""],
                   [[_e(MODE_LABELS[m["mode"]]), _e(f"{m['compactions']:,}"), _e(_pct(m["share"])), _e(_pct(m["of_compactions"])),
                     _html_bar(m["share"])] for m in s["modes"]]),
            "<h2>Retention and recovery by agent and model</h2>",
            _table(["agent", "model", "sessions", "compactions", "rules", "retention", "", "recovery verified", "recovery none"],
                   [[_e(g["agent"]), _e(g["model"]), _e(f"{g['sessions']:,}"), _e(f"{g['compactions']:,}"), _e(f"{g['rules']:,}"),
                     _e(_pct(g["retention"])), _html_bar(g["retention"], good=True), _e(_pct(g["recovery_verified"])),
                     _e(_pct(g["recovery_none"]))] for g in s["groups"]]),
            "<h2>Worst sessions</h2>"]
    if s["worst"]:
        body.append(_table(["session", "rules kept", "broken", "failure modes", "open it"],
                           [[_e(w["path"]), _e(f"{w['kept']} / {w['rules']}"), _e(w["violations"]), _e(w["modes"]),
                             f"<code>{_e(w['command'])}</code>"] for w in s["worst"]]))
    else:
        body.append('<p class="muted">No session lost a rule, broke one or showed a failure mode.</p>')
    body.append("<h2>Skipped</h2>")
    if s["skipped_files"]:
        body.append(_table(["file", "reason"], [[_e(path), _e(reason)] for path, reason in s["skipped_files"][:SKIPPED_LISTED]]))
        if len(s["skipped_files"]) > SKIPPED_LISTED:
            body.append(f'<p class="muted">… and {len(s["skipped_files"]) - SKIPPED_LISTED:,} more (all in <code>skipped</code>).</p>')
    else:
        body.append('<p class="muted">None: every file was audited.</p>')
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>ctxtop fleet audit</title><style>{REPORT_CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
