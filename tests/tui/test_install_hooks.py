"""`ctxtop install-hooks` on temporary settings files: other settings kept, idempotent, dry run, uninstall."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from ctxtop.tui import cli
from ctxtop.tui.commands.install_hooks import settings_path

THEIRS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def install(settings, *options: str) -> int:
    return cli.main(["install-hooks", "--settings", str(settings), "--command", "/opt/venv/bin/ctxtop", *options])


def commands(settings: dict, event: str) -> list[str]:
    return [hook["command"] for group in settings["hooks"].get(event, []) for hook in group["hooks"]]


def test_install_keeps_every_other_setting_and_hook(tmp_path, capsys):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS, indent=2))
    assert install(path) == 0
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == THEIRS["permissions"]
    assert settings["hooks"]["Stop"] == THEIRS["hooks"]["Stop"]
    assert commands(settings, "PreToolUse") == ["~/bin/check-bash.sh", "/opt/venv/bin/ctxtop hook"]
    assert settings["hooks"]["SessionStart"] == [{"matcher": "compact", "hooks": [{"type": "command", "command": "/opt/venv/bin/ctxtop hook", "timeout": 30}]}]
    assert commands(settings, "PreCompact") == ["/opt/venv/bin/ctxtop hook"]
    assert settings["statusLine"] == {"type": "command", "command": "/opt/venv/bin/ctxtop statusline"}
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("settings.json.ctxtop-backup-")]
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == THEIRS


def test_install_twice_adds_nothing(tmp_path, capsys):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    install(path)
    once = path.read_text()
    files = sorted(tmp_path.iterdir())
    assert install(path) == 0
    assert path.read_text() == once and sorted(tmp_path.iterdir()) == files  # not written, no second backup
    assert "already there" in capsys.readouterr().err
    # Another spelling of the same command counts as ctxtop's too.
    assert cli.main(["install-hooks", "--settings", str(path), "--command", "ctxtop"]) == 0 and path.read_text() == once


def test_a_command_not_named_ctxtop_is_recognized_as_ctxtops_too(tmp_path, capsys):
    # --command /opt/guard/run-ctxtop (a wrapper script): a second install added every hook again, and the status line
    # it had set was "already set" by someone else; --uninstall found "no ctxtop hook" and left them all in.
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    wrapper = ["install-hooks", "--settings", str(path), "--command", "/opt/guard/run-ctxtop"]
    assert cli.main(wrapper) == 0
    once = path.read_text()
    assert commands(json.loads(once), "PreToolUse") == ["~/bin/check-bash.sh", "/opt/guard/run-ctxtop hook"]
    assert cli.main(wrapper) == 0 and path.read_text() == once
    assert "already there" in capsys.readouterr().err
    assert cli.main([*wrapper, "--uninstall"]) == 0 and json.loads(path.read_text()) == THEIRS


def test_dry_run_writes_nothing(tmp_path, capsys):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    before = path.read_bytes()
    assert install(path, "--dry-run") == 0
    out = capsys.readouterr().out
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["settings.json"]
    assert '+        "matcher": "compact",' in out and '+    "command": "/opt/venv/bin/ctxtop statusline"' in out
    assert install(tmp_path / "none" / "settings.json", "--dry-run") == 0
    assert not (tmp_path / "none").exists()


def test_uninstall_restores_the_settings(tmp_path, capsys):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    install(path)
    assert install(path, "--uninstall") == 0
    assert json.loads(path.read_text()) == THEIRS
    assert install(path, "--uninstall") == 0 and "nothing to change" in capsys.readouterr().err


@pytest.mark.parametrize("theirs", [{"hooks": {}, "model": "opus"}, {"hooks": {"Stop": []}}, {"statusLine": None}],
                         ids=["empty hooks", "an empty event", "a null status line"])
def test_uninstall_leaves_settings_without_ctxtop_as_they_are(tmp_path, capsys, theirs):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(theirs))
    before = path.read_bytes()
    assert install(path, "--uninstall") == 0
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no backup either
    assert "nothing to change (no ctxtop hook in it)" in capsys.readouterr().err


def test_a_new_settings_file_and_its_uninstall(tmp_path, capsys):
    path = tmp_path / ".claude" / "settings.local.json"
    assert install(path) == 0
    assert set(json.loads(path.read_text())) == {"hooks", "statusLine"}
    assert f"ctxtop: added ctxtop hooks and status line to {path}" in capsys.readouterr().err.splitlines()
    assert not [p for p in path.parent.iterdir() if "backup" in p.name]  # nothing to back up
    install(path, "--uninstall")
    assert json.loads(path.read_text()) == {}


def test_someone_elses_status_line_is_left_alone(tmp_path, capsys):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": "npx ccusage statusline"}}))
    install(path)
    assert json.loads(path.read_text())["statusLine"]["command"] == "npx ccusage statusline"
    err = capsys.readouterr().err
    assert "status line is already set" in err
    assert f"ctxtop: added ctxtop hooks to {path}" in err.splitlines()  # not "and status line": it was not added
    install(path, "--uninstall")
    assert json.loads(path.read_text()) == {"statusLine": {"type": "command", "command": "npx ccusage statusline"}}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}', '{"a": NaN}', '{"b": -Infinity}', "[" * 100_000,
                                  '{"c": 1e400}', '{"d": [-2E+999]}'],
                         ids=["not json", "an array", "hooks not an object", "NaN", "Infinity", "nested too deeply",
                              # (read as inf, they were written back as Infinity: a file Claude Code cannot read)
                              "a number beyond a float", "a negative one"])
def test_a_broken_settings_file_is_not_touched(tmp_path, capsys, text):
    path = tmp_path / "settings.json"
    path.write_text(text)
    assert install(path) == 2
    assert path.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["settings.json"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not changed" in err


def test_the_scopes_name_claude_codes_files(tmp_path, monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert settings_path("project", cwd=tmp_path) == tmp_path / ".claude" / "settings.json"
    assert settings_path("local", cwd=tmp_path) == tmp_path / ".claude" / "settings.local.json"
    assert settings_path("user", home=tmp_path) == tmp_path / ".claude" / "settings.json"


def test_scope_user_is_where_claude_code_keeps_its_configuration(tmp_path, monkeypatch, capsys):
    # CLAUDE_CONFIG_DIR moves ~/.claude (a second account, say): Claude Code reads its settings.json there, not ~/.claude's.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "work-account"))
    assert cli.main(["install-hooks", "--scope", "user", "--command", "ctxtop"]) == 0
    assert "ctxtop statusline" in (tmp_path / "work-account" / "settings.json").read_text()
    assert not (tmp_path / "home").exists()
    assert settings_path("project", cwd=tmp_path) == tmp_path / ".claude" / "settings.json"  # (the project's are where they were)


def test_scope_project_in_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["install-hooks", "--scope", "local", "--command", "ctxtop"]) == 0
    assert json.loads((tmp_path / ".claude" / "settings.local.json").read_text())["statusLine"]["command"] == "ctxtop statusline"


def test_python_dash_m_ctxtop_installs_hooks_by_this_pythons_full_path(monkeypatch):
    # `python -m ctxtop install-hooks` (README: "python -m ctxtop works too"): a bare "ctxtop hook" would fail
    # wherever the agent's PATH lacks this ctxtop, so the hooks name this interpreter by its full path.
    import ctxtop
    from ctxtop.tui.commands import install_hooks

    monkeypatch.setattr(sys, "argv", [str(Path(ctxtop.__file__).parent / "__main__.py"), "install-hooks"])
    command = install_hooks.ctxtop_command()
    assert command == f"{shlex.quote(sys.executable)} -m ctxtop"
    assert install_hooks.is_ours(f"{command} hook") and install_hooks.is_ours(f"{command} statusline")


def test_every_other_value_comes_back_as_it_was_character_for_character(tmp_path, capsys):
    # The settings were written through the output's last line of defence, which strips controls and invisible
    # characters: a right-to-left mark, a zero-width joiner in an emoji or a C1 character in a value was lost,
    # and a lone surrogate (valid as a JSON escape) became "?".
    values = {"rtl": "\u05e9\u05dc\u05d5\u05dd\u200f!", "emoji": "\U0001f469\u200d\U0001f4bb", "persian": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
              "c1": "a\x85b\x9bc\x7f", "bidi": "x\u202ey", "bom": "\ufeffz", "surrogate": "\ud800", "esc": "\x1b[31m"}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({**THEIRS, "env": values}, ensure_ascii=True))
    assert install(path) == 0
    assert json.loads(path.read_text())["env"] == values
    assert install(path, "--uninstall") == 0
    assert json.loads(path.read_text()) == {**THEIRS, "env": values}


@pytest.mark.parametrize("inner", ["5", "null", "true", '"x"', "{}"])
def test_a_hook_group_whose_hooks_are_no_list_is_kept_as_it_was(tmp_path, capsys, inner):
    # A number or null there was an internal error (TypeError) instead of an install.
    path = tmp_path / "settings.json"
    path.write_text(f'{{"hooks": {{"PreToolUse": [{{"matcher": "Bash", "hooks": {inner}}}]}}}}')
    assert install(path) == 0, capsys.readouterr().err
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert groups[0] == {"matcher": "Bash", "hooks": json.loads(inner)} and len(groups) == 2
    assert install(path, "--uninstall") == 0
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": json.loads(inner)}]}}


def test_hooks_already_in_another_scope_by_another_command_are_said_to_run_twice(tmp_path, monkeypatch, capsys):
    # Claude Code merges every scope's hooks and runs each distinct command: installed in the project by one path and
    # for the user by another, the rules were put back twice after each compaction, and nothing said so.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert cli.main(["install-hooks", "--scope", "project", "--command", "/opt/old/bin/ctxtop"]) == 0
    capsys.readouterr()
    assert cli.main(["install-hooks", "--scope", "user", "--command", "/opt/old/bin/ctxtop"]) == 0
    assert "runs ctxtop's hooks too" not in capsys.readouterr().err  # the same command in two scopes runs once
    assert cli.main(["install-hooks", "--scope", "local", "--command", "ctxtop"]) == 0
    err = capsys.readouterr().err
    assert ".claude/settings.json (project scope) runs ctxtop's hooks too" in err
    assert "ctxtop install-hooks --scope project --uninstall" in err and "(user scope)" in err


@pytest.mark.parametrize(("indent", "end"), [(4, "\n"), ("\t", "\n"), (3, "")], ids=["four spaces", "tabs", "no final newline"])
def test_the_settings_are_written_back_in_their_own_layout(tmp_path, capsys, indent, end):
    # Every install and uninstall rewrote a project's shared .claude/settings.json with two spaces a level and a final
    # newline, whatever the file used: a diff of every line for the team to review, and an uninstall that did not give
    # the file back.
    path = tmp_path / "settings.json"
    original = json.dumps(THEIRS, indent=indent) + end
    path.write_text(original)
    assert install(path) == 0
    added = path.read_text()
    unit = indent if isinstance(indent, str) else " " * indent
    assert f'\n{unit}"hooks": {{\n{unit * 2}"PreToolUse": [\n{unit * 3}{{\n' in added and added.endswith("}" + end)
    assert install(path, "--uninstall") == 0
    assert path.read_text() == original
