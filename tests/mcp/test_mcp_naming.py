"""MCP tool naming (spec/codex-runtime.md §5.7, §11.15): sanitizing, collisions, 64 bytes."""

from __future__ import annotations

import hashlib
import random
import re

from hypothesis import given
from hypothesis import strategies as st

from mini_codex.mcp.naming import (
    MAX_TOOL_NAME_LENGTH,
    QualifiedTool,
    QualifiedTools,
    qualify_tools,
    sanitize_name_part,
)

VALID = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def _suffix(raw: str) -> str:
    return "_" + hashlib.sha1(raw.encode()).hexdigest()[:12]


def test_flat_name_is_mcp_server_tool() -> None:
    result = qualify_tools([("everything", "echo")])
    assert result == QualifiedTools(
        tools=(QualifiedTool("everything", "echo", "mcp__everything", "echo"),)
    )
    assert result.tools[0].flat_name == "mcp__everything__echo"


def test_parts_are_sanitized_and_the_prefix_is_not_doubled() -> None:
    assert sanitize_name_part("a.b c/d-é") == "a_b_c_d__"  # Codex 0.169 replaces "-" too
    assert sanitize_name_part("") == "_"
    result = qualify_tools([("my server", "get.thing"), ("mcp__own", "x")])
    assert [t.flat_name for t in result.tools] == ["mcp__own__x", "mcp__my_server__get_thing"]


def test_duplicated_raw_identities_are_skipped() -> None:
    result = qualify_tools([("s", "echo"), ("s", "echo")])
    assert result == QualifiedTools(
        tools=(QualifiedTool("s", "echo", "mcp__s", "echo"),), skipped=(("s", "echo"),)
    )


def test_namespace_collision_appends_the_namespace_identity_hash() -> None:
    result = qualify_tools([("a.b", "t"), ("a_b", "t")])
    first = _suffix("a.b\0mcp__a.b\0")
    second = _suffix("a_b\0mcp__a_b\0")
    assert result.tools == (
        QualifiedTool("a.b", "t", "mcp__a_b" + first, "t"),
        QualifiedTool("a_b", "t", "mcp__a_b" + second, "t"),
    )


def test_tool_name_collision_within_a_namespace_appends_the_tool_identity_hash() -> None:
    result = qualify_tools([("s", "get.x"), ("s", "get_x")])
    ns = "s\0mcp__s\0"
    assert result.tools == (
        QualifiedTool("s", "get.x", "mcp__s", "get_x" + _suffix(f"{ns}\0get.x\0get.x")),
        QualifiedTool("s", "get_x", "mcp__s", "get_x" + _suffix(f"{ns}\0get_x\0get_x")),
    )


def test_a_name_over_64_bytes_is_truncated_with_the_hash_suffix() -> None:
    tool = "t" * 80
    (qualified,) = qualify_tools([("server", tool)]).tools
    raw = f"server\0mcp__server\0\0{tool}\0{tool}"
    assert qualified.namespace == "mcp__server"
    assert qualified.name == "t" * (64 - len("mcp__server") - 2 - 13) + _suffix(raw)
    assert len(qualified.flat_name) == MAX_TOOL_NAME_LENGTH


def test_exactly_64_bytes_is_kept_and_65_is_not() -> None:
    server = "s"  # namespace mcp__s (6) + "__" (2) → 56 bytes left for the tool name
    kept = qualify_tools([(server, "x" * 56)]).tools[0]
    cut = qualify_tools([(server, "y" * 57)]).tools[0]
    assert (kept.name, len(kept.flat_name)) == ("x" * 56, 64)
    assert cut.name != "y" * 57
    assert len(cut.flat_name) == 64


def test_a_namespace_too_long_for_the_suffix_is_truncated_and_the_suffix_is_the_name() -> None:
    server = "n" * 70
    (qualified,) = qualify_tools([(server, "tool")]).tools
    raw = f"{server}\0mcp__{server}\0\0tool\0tool"
    assert qualified.name == _suffix(raw)
    assert qualified.namespace == ("mcp__" + server)[: 64 - 2 - 13]
    assert len(qualified.flat_name) == 64


def test_a_residual_clash_after_truncation_rehashes_with_the_attempt_number() -> None:
    long_tool = "y" * 57  # 1 byte over the budget after "mcp__s__"
    raw_long = f"s\0mcp__s\0\0{long_tool}\0{long_tool}"
    first_try = "y" * (56 - 13) + _suffix(raw_long)
    # A tool literally named like the long tool's first hashed name sorts first and keeps it,
    # so the long tool must hash again with "\0<attempt>".
    result = qualify_tools([("s", long_tool), ("s", first_try)])
    assert result.tools == (
        QualifiedTool("s", first_try, "mcp__s", first_try),
        QualifiedTool("s", long_tool, "mcp__s", "y" * 43 + _suffix(raw_long + "\x001")),
    )


def test_output_order_is_raw_identity_order_whatever_the_input_order() -> None:
    pairs = [("b", "z"), ("a", "y"), ("a", "x"), ("c", "w")]
    shuffled = pairs[:]
    random.Random(4).shuffle(shuffled)
    assert qualify_tools(shuffled) == qualify_tools(pairs)
    assert [(t.server, t.tool) for t in qualify_tools(pairs).tools] == [
        ("a", "x"),
        ("a", "y"),
        ("b", "z"),
        ("c", "w"),
    ]


names = st.text(alphabet=st.sampled_from("ab._-é/ x"), min_size=0, max_size=70)


@given(st.lists(st.tuples(names, names), max_size=12))
def test_names_are_valid_unique_bounded_and_order_independent(
    pairs: list[tuple[str, str]],
) -> None:
    result = qualify_tools(pairs)
    flat = [t.flat_name for t in result.tools]
    assert all(VALID.match(name) for name in flat)
    assert len(set(flat)) == len(flat)
    assert {(t.server, t.tool) for t in result.tools} == set(pairs)
    assert qualify_tools(reversed(pairs)).tools == result.tools
