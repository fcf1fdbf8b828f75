"""docs/api.md is what scripts/make_api_docs.py makes of the code as it is now."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_api_docs.py"
API = ROOT / "docs" / "api.md"


def _load_script():
    spec = importlib.util.spec_from_file_location("make_api_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_up_to_date():
    expected = _load_script().render()
    current = API.read_text(encoding="utf-8") if API.exists() else ""
    if current != expected:
        new, old = expected.splitlines(), current.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(new, old)) if a != b),
                     min(len(new), len(old)))
        raise AssertionError(
            f"docs/api.md is out of date (a public name, a signature or a docstring "
            f"summary changed): run `python scripts/make_api_docs.py`. First difference, "
            f"line {first + 1}:\n  in the file: {old[first] if first < len(old) else '(end)'}"
            f"\n  from code:   {new[first] if first < len(new) else '(end)'}")


def test_api_reference_is_deterministic_and_has_no_addresses():
    script = _load_script()
    text = script.render()
    assert text == script.render()
    assert " at 0x" not in text
    assert "(no docstring)" not in text


def test_every_name_in_all_is_listed():
    import chainrule
    text = API.read_text(encoding="utf-8")
    missing = [name for name in chainrule.__all__ if f"`cr.{name}" not in text]
    assert not missing, f"not in docs/api.md: {missing}"


def test_check_flag_exits_non_zero_when_stale(tmp_path, monkeypatch):
    script = _load_script()
    assert script.main(["--check"]) == 0
    stale = tmp_path / "api.md"
    stale.write_text("# an old reference\n", encoding="utf-8")
    monkeypatch.setattr(script, "OUTPUT", stale)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--check"]) == 1
    assert stale.read_text(encoding="utf-8") == "# an old reference\n"  # --check writes nothing


def test_the_script_runs_from_the_command_line():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
