"""Where rules can come from in a session, and the text each source wrote.

Rules are what people write: the user's messages, the instruction files they
keep (CLAUDE.md, AGENTS.md, GEMINI.md, rules files — also when the harness
injects them into the conversation), and a system prompt the user supplied
(an API request dump). Text the harness writes is not a source, even when it
is full of "must" and "never": Claude Code's system reminders, skill / agent /
tool listings, command caveats, hook output and task notifications; Codex's
built-in base instructions and its environment / approval / permission tags;
every tool's output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ctxtop.context.rules.patterns import compiled_on_use
from ctxtop.parsers.model import INJECTED, SYSTEM, USER, Entry

USER_ORIGIN, SYSTEM_PROMPT_ORIGIN, INSTRUCTIONS_ORIGIN = "user message", "system prompt", "instructions"

# Formats whose system prompt is written by the person running the model, not by a harness.
USER_SYSTEM_PROMPT_FORMATS = frozenset({"anthropic-request", "openai-messages", "inspect-ai", "adk"})
# Formats whose "user" turns are the harness's templates and observations (SWE-agent's instance template).
HARNESS_USER_FORMATS = frozenset({"swe-agent"})
# Built-in system prompts recognised by how they start, whatever the format (a proxy saves them in requests too).
_HARNESS_SYSTEM_PROMPT = compiled_on_use(
    r"^\s*(?:You are Codex|You are a coding agent running in the Codex CLI|You are Claude Code|You are an interactive CLI tool|"
    r"You are OpenHands agent|You are Gemini CLI|You are opencode|You are Cline)", re.IGNORECASE)

# Harness-written sections inside a user turn, dropped with their content.
_HARNESS_SECTION = compiled_on_use(
    r"<(system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|"
    r"task-notification|user-prompt-submit-hook|bash-input|bash-stdout|bash-stderr|environment_context|approval_policy|"
    r"sandbox_mode|network_access|permissions instructions|available_skills|available-deferred-tools|tool_use_error|"
    r"session_context|ide_selection|ide_opened_file)\b[^>]*>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_HARNESS_LINE = compiled_on_use(
    r"^(?:Caveat: The messages below were generated.*|\[Request interrupted by user.*\]|\w+ hook (?:success|error|blocking error).*|"
    r"This session is being continued from a previous conversation.*)$", re.MULTILINE)

# User turns the harness writes whole: Claude Code's request to summarize the conversation (the prompt of a
# compaction sub-agent, agent-acompact-*.jsonl), whose instructions are to the summarizer, not the user's rules.
_HARNESS_TURN = compiled_on_use(r"\s*Your task is to create a detailed summary of the conversation so far\b")

# Instruction files a harness injects, with the file's name or path.
_CLAUDE_MD = compiled_on_use(r"Contents of (\S+?) \([^)\n]*\):\n(.*?)(?=\nContents of \S+ \(|</system-reminder>|\Z)", re.DOTALL)
_AGENTS_MD = compiled_on_use(r"#\s*AGENTS\.md instructions for (\S+)\s*<INSTRUCTIONS>(.*?)(?:</INSTRUCTIONS>|\Z)", re.DOTALL)
_USER_INSTRUCTIONS = compiled_on_use(r"<user_instructions>(.*?)(?:</user_instructions>|\Z)", re.DOTALL)
_GEMINI_CONTEXT = compiled_on_use(r"--- Context from: (\S+) ---\n(.*?)(?:--- End of Context from: \1 ---|\Z)", re.DOTALL)
# Claude Code's note around injected instruction files: the harness's words, not the file's.
_CLAUDE_MD_TRAILER = compiled_on_use(r"\n\s*IMPORTANT: this context may or may not be relevant to your tasks\..*\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SourceText:
    message: int  # the entry's message number
    origin: str  # "user message" | "system prompt" | "instructions: <file>"
    text: str


def source_texts(entries: Iterable[Entry], log_format: str | None = None) -> Iterator[SourceText]:
    """The texts in ``entries`` that people wrote, each with where it comes from."""
    system_is_users = log_format in USER_SYSTEM_PROMPT_FORMATS if log_format else None
    users_typed = log_format not in HARNESS_USER_FORMATS
    for entry in entries:
        users_system: bool | None = None  # (asked at the entry's first system block: most entries have none)
        for block in entry.blocks:
            category = block.category
            if category not in (USER, INJECTED, SYSTEM):
                continue
            text = block.text
            if category == SYSTEM:
                if users_system is None:
                    users_system = system_is_users is not False and not _harness_system_prompt(entry)
                if users_system:
                    yield SourceText(entry.index, SYSTEM_PROMPT_ORIGIN, text)
                yield from _instruction_files(entry.index, text)
            elif category == INJECTED:
                yield from _instruction_files(entry.index, text)
            else:
                yield from _instruction_files(entry.index, text)
                typed = _typed_text(text) if users_typed else ""
                if typed.strip():
                    yield SourceText(entry.index, USER_ORIGIN, typed)


def _harness_system_prompt(entry: Entry) -> bool:
    """Whether the entry's system prompt is a harness's own, whatever the log's format: a request an API proxy
    saved from Claude Code or Codex holds their built-in prompt, in several blocks (after a billing header)."""
    return any(block.category == SYSTEM and _HARNESS_SYSTEM_PROMPT.match(block.text) for block in entry.blocks)


def _typed_text(text: str) -> str:
    """A user turn without what the harness wrote into it."""
    if _HARNESS_TURN.match(text):
        return ""
    if "<" in text:
        text = _HARNESS_SECTION.sub("", text)
    return _HARNESS_LINE.sub("", text)


def _instruction_files(message: int, text: str) -> Iterator[SourceText]:
    if "Contents of " in text:
        for match in _CLAUDE_MD.finditer(text):
            yield SourceText(message, f"{INSTRUCTIONS_ORIGIN}: {match.group(1)}", _CLAUDE_MD_TRAILER.sub("", match.group(2)))
    if "AGENTS.md instructions" in text:
        for match in _AGENTS_MD.finditer(text):
            yield SourceText(message, f"{INSTRUCTIONS_ORIGIN}: AGENTS.md ({match.group(1)})", match.group(2))
    elif "<user_instructions>" in text:
        for match in _USER_INSTRUCTIONS.finditer(text):
            yield SourceText(message, f"{INSTRUCTIONS_ORIGIN}: AGENTS.md", match.group(1))
    if "--- Context from: " in text:
        for match in _GEMINI_CONTEXT.finditer(text):
            yield SourceText(message, f"{INSTRUCTIONS_ORIGIN}: {match.group(1)}", match.group(2))
