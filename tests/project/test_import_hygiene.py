"""The pure layers must never pull in the terminal UI stack."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["ctxtop.parsers", "ctxtop.context", "ctxtop.context.guard.hooks", "ctxtop.context.window.session", "ctxtop.context.output.snapshot", "ctxtop.context.output.markdown"])
def test_pure_layer_does_not_import_textual_or_rich(package):
    code = f"import sys, {package}; bad = [m for m in ('textual', 'rich') if m in sys.modules]; print(','.join(bad))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"{package} imported {result.stdout.strip()}"
