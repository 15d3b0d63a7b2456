"""The ``permissions`` section: instructions hash, approved prefixes, legacy hashes, matchers."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.jsonmerge import Json, strip_null_fields
from mini_codex.protocol.items import InputText, Message, developer_message, user_message
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.hash import fragment_hash
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, Previous, SnapshotDecodeError
from mini_codex.world_state.sections.permissions import (
    ApprovalPolicy,
    PermissionsSection,
    PermissionsSnapshot,
    SandboxMode,
)
from mini_codex.world_state.snapshot import WorldStateSnapshot
from mini_codex.world_state.state import WorldState

SANDBOX_WORKSPACE_WRITE = (
    "Filesystem sandbox: `workspace-write`. Commands you run may read files anywhere, but they may "
    "only create, modify or delete files inside the writable roots. Writing anywhere else needs "
    "escalated permissions."
)
NETWORK_RESTRICTED = (
    "Network access: restricted. Commands cannot connect to the network unless they are given "
    "escalated permissions."
)
APPROVAL_ON_REQUEST = (
    "Approval policy: `on-request`. Commands run inside the sandbox. When a command really needs "
    "more than the sandbox allows (writing outside the writable roots, network access, ...), "
    "request escalated permissions for that command; the user is asked to approve it. Do not "
    "request escalation for work the sandbox already allows."
)


def section(prefixes: Sequence[Sequence[str]] = ()) -> PermissionsSection:
    return PermissionsSection(
        approval_policy="on-request",
        sandbox_mode="workspace-write",
        writable_roots=["/repo", "/tmp"],
        network_access=False,
        approved_command_prefixes=prefixes,
    )


def full(prefixes: Sequence[Sequence[str]] = ()) -> Fragment:
    return section(prefixes).instructions_fragment()


def known(
    prefixes: Sequence[Sequence[str]], instructions: str | None = None
) -> Known[PermissionsSnapshot | str]:
    return Known(
        PermissionsSnapshot(
            instructions=instructions or section().instructions_hash,
            approved_command_prefixes=tuple(tuple(prefix) for prefix in prefixes),
        )
    )


def test_full_instructions_text_is_exact() -> None:
    fragment = section([["touch", "allow-prefix.txt"], ["git", "log"]]).render_diff(ABSENT)

    assert fragment == Fragment(
        role="developer",
        start_marker="<permissions instructions>",
        end_marker="</permissions instructions>",
        body=(
            f"\n{SANDBOX_WORKSPACE_WRITE}\nThe writable roots are `/repo`, `/tmp`.\n\n"
            f"{NETWORK_RESTRICTED}\n\n{APPROVAL_ON_REQUEST}\n\n"
            "## Approved command prefixes\n"
            "Commands starting with one of these prefixes have already been approved and run "
            "without asking:\n"
            '- ["git", "log"]\n'
            '- ["touch", "allow-prefix.txt"]\n'
        ),
    )


@pytest.mark.parametrize(
    ("approval", "sandbox", "roots", "network", "expected_lines"),
    [
        (
            "never",
            "read-only",
            [],
            False,
            [
                "Filesystem sandbox: `read-only`.",
                "Network access: restricted.",
                "Approval policy: `never`.",
            ],
        ),
        (
            "untrusted",
            "danger-full-access",
            [],
            True,
            [
                "Filesystem sandbox: `danger-full-access`.",
                "Network access: enabled.",
                "Approval policy: `untrusted`.",
            ],
        ),
        (
            "on-failure",
            "workspace-write",
            [],
            True,
            [
                "Filesystem sandbox: `workspace-write`.",
                "No writable roots are configured, so every write needs escalated permissions.",
                "Network access: enabled.",
                "Approval policy: `on-failure`.",
            ],
        ),
    ],
)
def test_instructions_describe_each_policy(
    approval: ApprovalPolicy,
    sandbox: SandboxMode,
    roots: list[str],
    network: bool,
    expected_lines: list[str],
) -> None:
    text = PermissionsSection(approval, sandbox, roots, network).instructions_fragment().text
    paragraphs = [line for line in text.split("\n")[1:-1] if line]

    assert len(paragraphs) == len(expected_lines)
    for paragraph, start in zip(paragraphs, expected_lines, strict=True):
        assert paragraph.startswith(start)


def test_invalid_policies_are_rejected_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="unknown approval policy 'sometimes'"):
        PermissionsSection("sometimes", "read-only")
    with pytest.raises(ValueError, match="unknown sandbox mode 'open'"):
        PermissionsSection("never", "open")
    with pytest.raises(ValueError, match="must not be empty"):
        PermissionsSection("never", "read-only", approved_command_prefixes=[[]])
    with pytest.raises(ValueError, match="a list of words, not a string: 'ls'"):
        PermissionsSection("never", "read-only", approved_command_prefixes=["ls"])


def test_prefix_only_update_is_exact() -> None:
    fragment = section([["touch", "allow-prefix.txt"]]).render_diff(known([]))

    assert fragment is not None
    assert fragment.role == "developer"
    assert fragment.text == 'Approved command prefix saved:\n- ["touch", "allow-prefix.txt"]'


def test_only_new_prefixes_are_rendered() -> None:
    current = section([["ls"], ["git", "log"], ["python3", "-m", "pytest"], ["pwd"]])

    fragment = current.render_diff(known([["pwd"], ["git", "log"]]))

    assert fragment is not None
    assert fragment.text == (
        'Approved command prefix saved:\n- ["ls"]\n- ["python3", "-m", "pytest"]'
    )


def test_non_ascii_prefixes_are_not_escaped() -> None:
    fragment = section([["echo", 'héllo "x"']]).render_diff(known([]))

    assert fragment is not None
    assert fragment.text == 'Approved command prefix saved:\n- ["echo", "héllo \\"x\\""]'


def test_equal_prefix_sets_render_nothing() -> None:
    current = section([["git", "log"], ["ls"]])

    assert current.render_diff(known([["ls"], ["git", "log"]])) is None
    assert current.render_diff(Known(current.snapshot())) is None


def test_a_removed_prefix_renders_the_full_instructions() -> None:
    current = section([["ls"]])

    assert current.render_diff(known([["ls"], ["pwd"]])) == full([["ls"]])


def test_replaced_prefixes_render_the_full_instructions() -> None:
    current = section([["ls"], ["cat"]])

    assert current.render_diff(known([["pwd"]])) == full([["ls"], ["cat"]])


def test_a_changed_instructions_hash_renders_the_full_instructions() -> None:
    current = section([["ls"]])

    assert current.render_diff(known([["ls"]], instructions="0" * 40)) == full([["ls"]])


@pytest.mark.parametrize("previous", [ABSENT, UNKNOWN], ids=["absent", "unknown"])
def test_absent_and_unknown_render_the_full_instructions(
    previous: Previous[PermissionsSnapshot | str],
) -> None:
    assert section([["ls"]]).render_diff(previous) == full([["ls"]])


def test_legacy_hash_suppresses_only_a_matching_full_block() -> None:
    current = section([["ls"]])
    full_block = current.instructions_fragment()
    legacy_hash = fragment_hash("developer", full_block.text)

    assert current.render_diff(Known(legacy_hash)) is None
    # The hash of the instructions without prefixes is not the full block's hash.
    assert current.render_diff(Known(current.instructions_hash)) == full_block
    assert current.render_diff(Known("sha1:0123")) == full_block


def test_the_hash_covers_the_instructions_without_prefixes() -> None:
    without = section().instructions_fragment()

    assert section([["ls"]]).instructions_hash == fragment_hash("developer", without.text)
    assert section([["ls"]]).instructions_hash == section().instructions_hash
    assert section().instructions_fragment(with_prefixes=False) == without


def test_snapshot_json_shape() -> None:
    current = section([["touch", "allow-prefix.txt"], ["git", "log"], ["git", "log"]])

    assert strip_null_fields(current.encode_snapshot(current.snapshot())) == {
        "instructions": current.instructions_hash,
        "approved_command_prefixes": [["git", "log"], ["touch", "allow-prefix.txt"]],
    }
    assert len(current.instructions_hash) == 40


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("abc123", "abc123"),
        ("sha1:abc", "sha1:abc"),
        (
            {"instructions": "h", "approved_command_prefixes": [["a", "b"], ["c"]]},
            PermissionsSnapshot(instructions="h", approved_command_prefixes=(("a", "b"), ("c",))),
        ),
        ({"instructions": "h"}, PermissionsSnapshot(instructions="h")),
    ],
    ids=["legacy-hash", "legacy-sha1-fingerprint", "current", "current-without-prefixes"],
)
def test_both_snapshot_shapes_decode(raw: Json, expected: PermissionsSnapshot | str) -> None:
    assert PermissionsSection.decode_snapshot(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        None,
        7,
        [],
        {"approved_command_prefixes": []},
        {"instructions": "h", "approved_command_prefixes": "ls"},
    ],
)
def test_mismatched_snapshots_do_not_decode(raw: Json) -> None:
    with pytest.raises(SnapshotDecodeError):
        PermissionsSection.decode_snapshot(raw)


prefix_sets = st.lists(
    st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3), max_size=5
)


@given(prefixes=prefix_sets)
def test_round_tripped_current_snapshot_renders_nothing(prefixes: list[list[str]]) -> None:
    current = section(prefixes)
    restored = PermissionsSection.decode_snapshot(
        strip_null_fields(current.encode_snapshot(current.snapshot()))
    )

    assert restored == current.snapshot()
    assert current.render_diff(Known(restored)) is None


@given(before=prefix_sets, added=prefix_sets)
def test_growing_the_prefix_set_renders_exactly_the_added_prefixes(
    before: list[list[str]], added: list[list[str]]
) -> None:
    previous = section(before)
    current = section(before + added)
    new = sorted({tuple(p) for p in added} - {tuple(p) for p in before})

    fragment = current.render_diff(Known(previous.snapshot()))

    if not new:
        assert fragment is None
    else:
        assert fragment is not None
        lines = fragment.text.split("\n")
        assert lines[0] == "Approved command prefix saved:"
        assert len(lines) == len(new) + 1


def test_matchers_recognise_developer_permissions_blocks() -> None:
    text = full([["ls"]]).text

    assert PermissionsSection.matches_legacy_fragment("developer", text)
    assert PermissionsSection.has_retained_fragment_matcher()
    assert PermissionsSection.matches_retained_fragment("developer", f"\n {text}\n")
    assert not PermissionsSection.matches_retained_fragment("user", text)
    assert not PermissionsSection.matches_legacy_fragment(
        "developer", 'Approved command prefix saved:\n- ["ls"]'
    )


def bundled_developer_message(*texts: str) -> Message:
    return Message(role="developer", content=[InputText(text=text) for text in texts])


def test_history_diff_without_a_baseline_and_a_retained_block_rerenders_once() -> None:
    state = WorldState([section([["ls"]])])
    history = [bundled_developer_message("<model_switch>x</model_switch>", full([["ls"]]).text)]

    assert state.render_history_diff(None, history) == [full([["ls"]])]


def test_history_diff_finds_the_block_inside_a_bundled_developer_message() -> None:
    state = WorldState([section([["ls"]])])
    baseline = state.snapshot()
    bundled = bundled_developer_message("other developer text", full([["ls"]]).text)

    assert state.render_history_diff(baseline, [bundled]) == []
    assert state.render_history_diff(baseline, [user_message("hi")]) == [full([["ls"]])]


def test_history_diff_with_a_baseline_renders_only_the_new_prefix() -> None:
    before = WorldState([section([["ls"]])])
    after = WorldState([section([["ls"], ["pwd"]])])
    history = [developer_message(full([["ls"]]).text)]

    fragments = after.render_history_diff(
        WorldStateSnapshot.from_json(before.snapshot().to_json()), history
    )

    assert [fragment.text for fragment in fragments] == [
        'Approved command prefix saved:\n- ["pwd"]'
    ]
