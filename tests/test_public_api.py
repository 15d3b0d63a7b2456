from __future__ import annotations

import subprocess
import sys

import mini_codex


def test_every_public_name_resolves_to_its_module_object() -> None:
    from mini_codex.host import Session
    from mini_codex.jsonmerge import apply_merge_patch, create_merge_patch

    resolved = {name: getattr(mini_codex, name) for name in mini_codex.__all__}
    assert resolved["Session"] is Session
    assert resolved["create_merge_patch"] is create_merge_patch
    assert resolved["apply_merge_patch"] is apply_merge_patch
    assert sorted(dir(mini_codex)) == sorted(mini_codex.__all__)


def test_importing_the_package_loads_no_runtime_or_sdk() -> None:
    code = (
        "import sys, mini_codex; "
        "print(sorted(m for m in ('mini_codex.runtime', 'mcp', 'openai') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_all_lists_exactly_the_lazy_exports_and_the_version() -> None:
    assert sorted(mini_codex.__all__) == sorted(["__version__", *mini_codex._EXPORTS])
