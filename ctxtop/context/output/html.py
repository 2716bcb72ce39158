"""A shareable HTML report: one self-contained page (inline CSS, inline SVG, no script, no network).

It holds the breakdown at the chosen message, the timeline as a chart, every
rule's fate at every compaction, each compaction's view and the alerts. Every
text from the log is escaped (and cleaned of control characters); a Content
Security Policy forbids the page to load anything at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ctxtop.context.audit.lost import MAX_LOST_ITEMS
from ctxtop.context.output.compaction import FATES, drift_text
from ctxtop.context.output.forensics_text import forensics_headline
from ctxtop.context.output.markdown import cost_line
from ctxtop.context.output.marks import limit_mark, more_facts, use_mark
from ctxtop.context.output.palette import CATEGORY_COLORS, COMPACTION_COLOR
from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.context.window.timeline import ROWS, TimelinePoint
from ctxtop.version import version

HTML_FACTS = 20  # facts lost shown per kind in a compaction's section of the report

CHART_WIDTH, CHART_HEIGHT = 960, 240
CHART_COLUMNS = 600  # a long session is drawn as this many columns at most
STATUS_CLASSES = {"kept": "kept", "paraphrased": "weak", "unverifiable": "weak", "lost": "lost"}
CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.kept { color: #0a7a2f; } .weak { color: #a86b00; } .lost { color: #c0152f; font-weight: bold; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.4em; vertical-align: -0.1em; }
.muted { color: #777; } .summary { white-space: pre-wrap; background: #f6f6f6; padding: 0.6em; border-left: 3px solid #ffaf00; }
.broken { color: #c0152f; } svg text { font: 11px system-ui, sans-serif; fill: #555; }
"""


def _e(value: Any) -> str:
    return escape(clean_text(str(value)), quote=True)


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


def _status(status: str) -> str:
    return f'<span class="{STATUS_CLASSES.get(status, "")}">{_e(status)}</span>'


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A table of cells that are already HTML (escaped log text, markup of ours); a cell that is a whole
    ``<td …>`` is used as it is (escaped text never starts with ``<``)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def chart_columns(points: Sequence[TimelinePoint], most: int = CHART_COLUMNS) -> list[tuple[int, tuple[int, ...], bool]]:
    """At most ``most`` columns of the timeline: in each run of messages, the fullest window, marked
    when a compaction falls in the run."""
    size = max(1, -(-len(points) // most))
    columns = []
    for start in range(0, len(points), size):
        run = [points[i] for i in range(start, min(start + size, len(points)))]
        fullest = max(run, key=lambda point: point.total)
        columns.append((fullest.message, fullest.tokens, any(point.compaction for point in run)))
    return columns


def timeline_chart(columns: list[tuple[int, tuple[int, ...], bool]], limit: int) -> str:
    """Tokens in the window per message, stacked by category, as inline SVG: ``columns`` are
    (message, tokens per row in the timeline's ROWS order, compaction here)."""
    if not columns:
        return '<p class="muted">No message yet.</p>'
    top = max(limit, max(sum(tokens) for _, tokens, _ in columns)) or 1
    left, bottom = 60, CHART_HEIGHT - 20
    step = (CHART_WIDTH - left) / max(1, len(columns) - 1)

    def x(i: int) -> float:
        return left + i * step

    def y(tokens: int) -> float:
        return bottom - (bottom - 10) * tokens / top

    shapes = []
    below = [0] * len(columns)
    for index, name in enumerate(ROWS):
        above = [b + tokens[index] for b, (_, tokens, _) in zip(below, columns)]
        if above != below:
            upper = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(above))
            lower = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(below))))
            shapes.append(f'<polygon points="{upper} {lower}" fill="{CATEGORY_COLORS.get(name, "#999")}"><title>{_e(name)}</title></polygon>')
        below = above
    marks = [f'<line x1="{x(i):.1f}" y1="10" x2="{x(i):.1f}" y2="{bottom}" stroke="{COMPACTION_COLOR}" stroke-dasharray="3,2">'
             f"<title>compaction at message {m}</title></line>" for i, (m, _, compacted) in enumerate(columns) if compacted]
    axis = [f'<line x1="{left}" y1="{bottom}" x2="{CHART_WIDTH}" y2="{bottom}" stroke="#999"/>',
            f'<line x1="{left}" y1="{y(limit):.1f}" x2="{CHART_WIDTH}" y2="{y(limit):.1f}" stroke="#c0152f" stroke-dasharray="6,3"/>',
            f'<text x="4" y="{y(limit) + 4:.1f}">limit {limit:,}</text>', f'<text x="4" y="{bottom}">0</text>',
            f'<text x="{left}" y="{CHART_HEIGHT - 4}">message {columns[0][0]}</text>',
            f'<text x="{CHART_WIDTH - 90}" y="{CHART_HEIGHT - 4}">message {columns[-1][0]}</text>']
    return (f'<svg viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" width="100%" role="img" aria-label="tokens in the window per message">'
            + "".join(shapes + marks + axis) + "</svg>")


def _breakdown(snapshot: dict[str, Any]) -> str:
    window = snapshot["window"]
    limit = window["limit"] or 1
    # ≈: an estimate (the inferred system + tools, the unattributed rest), not a count of logged text.
    rows = [[f'<span class="swatch" style="background:{CATEGORY_COLORS.get(name, "#999")}"></span>{_e(t.get("label", name))}',
             f'<td class="n">{"≈ " if t.get("estimated") else ""}{_n(t["tokens"])}</td>',
             f'<td class="n">{100 * t["tokens"] / limit:.1f}%</td>', f'<td class="n">{t["blocks"]}</td>']
            for name, t in window["categories"].items() if t["tokens"] or t["blocks"]]
    return _table(["category", "tokens", "% of window", "blocks"], rows)


def _rules_at_compactions(snapshot: dict[str, Any]) -> str:
    rules, compactions = snapshot["constraints"], snapshot["compactions"]
    if not rules:
        return '<p class="muted">No rule was in force (pin one with --pin, or none was found in the session).</p>'
    header = ["rule", "text", "now", *(f"compaction at {c['message']}" for c in compactions)]
    rows = []
    for rule in rules:
        fates = []
        for compaction in compactions:
            status = compaction["constraints"].get(rule["id"])
            fates.append(f"{_status(status['before'])} → {_status(status['after'])}" if status else '<span class="muted">not yet stated</span>')
        rows.append([f"<b>{_e(rule['id'])}</b>", _e(rule["text"]), _status(rule["status"]), *fates])
    return _table(header, rows)


def _compaction(view: dict[str, Any]) -> str:
    reported = view["reported"]
    parts = [f"<h3>Compaction {view['number']} at message {view['message']} ({_e(view['kind'])}"
             + (f", {_e(view['trigger'])}" if view["trigger"] else "") + ")</h3>",
             f"<p>Reported <b>{_n(reported['before'])} → {_n(reported['after'])}</b> tokens; "
             f"after: the window sent with the model's first call after it, up to message {view['after_message']}.</p>"]
    if view["rules"]:
        parts.append(_table(["rule", "before", "after", "missing facts"],
                            [[f"<b>{_e(r['id'])}</b>", _status(r["before"]), _status(r["after"]), _e(", ".join(r["missing_facts"])) or "—"]
                             for r in view["rules"]]))
    for violation in view["later_violations"]:
        parts.append(f'<p class="broken">{_e(violation["became"])} at {violation["lost_at"]} → broken at {violation["broken_at"]}: '
                     f'<b>{_e(violation["rule"])}</b> {_e(violation["detail"])}</p>')
    parts.append(_table(["category", *FATES], [[_e(name), *(f'<td class="n">{_n(t[f])}</td>' for f in FATES)]
                                               for name, t in view["categories"].items()]))
    lost = {kind: items for kind, items in view["facts_lost"].items() if items}
    if lost:
        # The first HTML_FACTS of each kind, and how many more (the JSON and Markdown list them all).
        parts.append("<p>Facts lost: " + "; ".join(
            f"<i>{_e(kind.replace('_', ' '))}</i>: " + _e(", ".join(one_line(i, 60) for i in items[:HTML_FACTS]))
            + more_facts(items, HTML_FACTS)
            for kind, items in lost.items()) + "</p>")
        if any(len(items) >= MAX_LOST_ITEMS for items in lost.values()):
            parts.append(f'<p class="muted">A sample: the audit lists at most {MAX_LOST_ITEMS} lost facts of each kind.</p>')
    parts += _drift_and_forensics(view)
    if view["opaque"]:
        parts.append('<p class="muted">The summary is encrypted: ctxtop cannot read it.</p>')
    elif view["summary"]:
        parts.append(f'<details><summary>Summary</summary><div class="summary">{_e(view["summary"])}</div></details>')
    return "\n".join(parts)


def _drift_and_forensics(view: dict[str, Any]) -> list[str]:
    """What followed the compaction, in the words of the TUI's compaction view (``export --compaction K`` has the
    forensics' evidence and claims in full)."""
    parts = [f"<p>Drift after it: {_e(drift_text(view['drift']))}</p>"] if view["drift"] else []
    forensics = view.get("forensics")
    if forensics:
        parts.append(f"<p>Forensics: {_e(forensics_headline(forensics))}<br>"
                     f'<span class="muted">Cost: {_e(cost_line(forensics["cost"]))}</span></p>')
    return parts


def _history_note(snapshot: dict[str, Any]) -> str:
    if not snapshot.get("history_estimated"):
        return ""
    return ('<p class="muted">≈ Estimated: the history\'s counts go by characters per token, calibrated on the texts of this '
            "session counted exactly; the breakdown above is exact.</p>")


def render_html(snapshot: dict[str, Any], columns: list[tuple[int, tuple[int, ...], bool]], compactions: list[dict[str, Any]]) -> str:
    """The report page for ``snapshot``, the timeline ``columns`` and each compaction's view."""
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    used = window["used_tokens"]
    limit = window["limit"] or 1
    alerts = snapshot["alerts"]
    body = [
        f"<h1>ctxtop report — {_e(source['path'] or 'session')}</h1>",
        f'<p class="muted">{_e(source["format"])} · {_e(source["model"] or "model unknown")} · {source["messages"]:,} messages · '
        f"ctxtop {_e(version())}</p>",
        f"<p>At message {at['message']} / {at['messages']}: <b>{use_mark(window)}{_n(used)} / {limit_mark(window)}{_n(window['limit'])} tokens "
        f"({100 * used / limit:.1f}%)</b>"
        f" — reported {_n(window['reported_tokens'])}, estimated {_n(window['estimated_tokens'])}.</p>",
        "<h2>Breakdown</h2>", _breakdown(snapshot),
        "<h2>Timeline</h2>", _history_note(snapshot), timeline_chart(columns, window["limit"] or 0),
        "<h2>Rules at every compaction</h2>", _rules_at_compactions(snapshot),
        "<h2>Compactions</h2>", "\n".join(_compaction(view) for view in compactions) or '<p class="muted">No compaction.</p>',
        "<h2>Alerts</h2>",
        _table(["message", "kind", "rule", "detail"], [[str(a["message"]), _e(a["kind"]), _e(a["constraint"] or "—"), _e(a["detail"])] for a in alerts])
        if alerts else '<p class="muted">No alert.</p>',
    ]
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>ctxtop report — {_e(one_line(source['path'] or 'session', 80))}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
