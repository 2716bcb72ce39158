"""A local summarizer for the replay tests: keeps the user's first message verbatim, drops the rest.

Reads ctxtop's replay transcript (JSON on stdin: {"schema", "compaction", "messages": [{"message",
"role", "category", "tool_name", "content"}]}) and prints a summary. On the demo session it keeps
the budget rule (the first message) and drops the WeCom-only and phone-number rules.
"""

import json
import sys

transcript = json.load(sys.stdin)
users = [m["content"] for m in transcript["messages"] if m["category"] == "user"]
print("Summary of the conversation so far.")
if users:
    print(f"The user's first instruction, verbatim: {users[0]}")
print(f"{len(transcript['messages'])} messages were summarized; work continues with the order checks.")
