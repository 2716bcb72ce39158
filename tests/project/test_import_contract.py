"""The import contract (import-linter, configured in pyproject.toml) holds, and would catch a back-import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (pip install -e '.[dev]')")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    # import-linter puts the working directory first on the path: the copy under test is what it reads.
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=120)


def copy_of_the_project(tmp_path: Path) -> Path:
    tree = tmp_path / "project"
    shutil.copytree(ROOT / "ctxtop", tree / "ctxtop", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_contract_holds_on_the_tree():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "back_import", "contract"), [
    ("ctxtop/parsers/model.py", "import ctxtop.context.window.session", "Data flows one way"),
    ("ctxtop/context/window/accounting.py", "import ctxtop.tui.theme", "Data flows one way"),
    ("ctxtop/context/rules/facts.py", "import rich.text", "context is headless"),
    ("ctxtop/context/store/source.py", "import ctxtop.context.audit.alerts", "each concern builds on the ones below it"),
])
def test_a_deliberate_back_import_breaks_the_contract(tmp_path, module, back_import, contract):
    tree = copy_of_the_project(tmp_path)
    path = tree / module
    path.write_text(path.read_text() + f"\n{back_import}  # a deliberate back-import\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert f"{contract}" in result.stdout and "BROKEN" in result.stdout
