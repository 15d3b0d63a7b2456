"""``IgnoreRules``: the same verdicts as ``pathspec.GitIgnoreSpec``, in time linear in the file."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from mini_codex.discovery.gitignore import MAX_PATTERN_BYTES, MAX_WILDCARD_PATTERNS, IgnoreRules

NAMES = ["a", "b", "build", "x.log", "y.txt", ".env", "keep.tmp", "a.b.c", "dir", "bu", "x."]
SEGMENTS = st.sampled_from(NAMES)
PATTERN_PARTS = st.sampled_from(
    [*NAMES, "*", "**", "*.log", "*.tmp", "?", "[ab]", "a*", "\\!x", "bu*", "ke*.tmp", "x.*", ".e*"]
)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(PATTERN_PARTS, min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()):
        text = "/" + text
    if draw(st.booleans()):
        text += "/"
    if draw(st.integers(0, 3)) == 0:
        text = "!" + text
    return text


@st.composite
def paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(SEGMENTS, min_size=1, max_size=4))
    return "/".join(parts) + ("/" if draw(st.booleans()) else "")


@settings(max_examples=300, deadline=None)
@given(st.lists(patterns(), max_size=12), st.lists(paths(), min_size=1, max_size=10))
def test_verdicts_equal_gitignorespec(lines: list[str], checked: list[str]) -> None:
    # Repeat some lines back to back, which the rules collapse.
    doubled = [line for line in lines for _ in range(1 + len(line) % 2)]
    rules = IgnoreRules(doubled)
    spec = GitIgnoreSpec.from_lines(doubled)
    assert [rules.check(path) for path in checked] == [
        spec.check_file(path).include for path in checked
    ]


def test_overlong_lines_are_skipped_with_a_note() -> None:
    rules = IgnoreRules(["\0" * (MAX_PATTERN_BYTES + 1), "*.log"])
    assert (rules.check("a.log"), rules.check("a.txt"), rules.notes) == (
        True,
        None,
        (f"1 line(s) longer than {MAX_PATTERN_BYTES} bytes ignored (no such path)",),
    )


def test_a_truncated_file_drops_its_cut_line_with_a_note() -> None:
    rules = IgnoreRules.from_bytes(b"*.log\nbuil", truncated=True)
    assert (rules.check("build/"), rules.check("x.log"), rules.notes) == (
        None,
        True,
        ("larger than 10 bytes: lines after byte 6 ignored",),
    )


def _build_seconds(data: bytes) -> float:
    start = time.perf_counter()
    IgnoreRules.from_bytes(data)
    return time.perf_counter() - start


def test_building_is_linear_in_the_size_of_a_hostile_file() -> None:
    """The old rules took ~15 s for 1 MiB of NUL bytes (one line) and ~13 s for a repeated
    pattern; compare 64 KiB with 1 MiB of the same content: 16x the bytes, not 16² the time."""
    for unit in (b"\0", b"*.log\n", b"generated/file.bin\n"):
        small = unit * ((64 << 10) // len(unit))
        large = unit * ((1 << 20) // len(unit))
        assert _build_seconds(large) <= 32 * _build_seconds(small) + 0.05


def test_many_literal_patterns_match_in_constant_time() -> None:
    lines = [f"generated/out_{number}.bin" for number in range(40_000)]
    rules = IgnoreRules(lines)
    assert [rules.check(p) for p in ("generated/out_39999.bin", "generated/x", "src/a.py")] == [
        True,
        None,
        None,
    ]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(paths(), min_size=1, max_size=5))
def test_any_bytes_make_rules_that_never_raise(data: bytes, checked: list[str]) -> None:
    rules = IgnoreRules.from_bytes(data)
    assert all(rules.check(path) in (True, False, None) for path in checked)


def test_wildcard_patterns_beyond_the_limit_are_skipped_with_a_note() -> None:
    lines = [f"?{number}*b" for number in range(MAX_WILDCARD_PATTERNS)] + ["*x*", "keep.me"]
    rules = IgnoreRules(lines)
    assert (rules.check("z7zzb"), rules.check("yxy"), rules.check("keep.me"), rules.notes) == (
        True,
        None,
        True,
        (f"1 wildcard pattern(s) after the first {MAX_WILDCARD_PATTERNS} ignored",),
    )
