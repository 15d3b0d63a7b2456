"""The ``environments`` section: spec §2.3 and the §7.2 acceptance cases 10–20."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.jsonmerge import Json, strip_null_fields
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, Previous, SnapshotDecodeError
from mini_codex.world_state.sections.environments import (
    Environment,
    EnvironmentEntry,
    EnvironmentsSection,
    EnvironmentsSnapshot,
    NetworkPolicy,
    native_path,
)
from mini_codex.world_state.state import WorldState

FS_DISABLED = (
    '<filesystem><permission_profile type="disabled"><file_system type="unrestricted" />'
    "</permission_profile></filesystem>"
)
FS_EXTERNAL = (
    '<filesystem><permission_profile type="external"><file_system type="external" />'
    "</permission_profile></filesystem>"
)

NETWORK_14 = (
    '<network enabled="true"><allowed>new.example.com</allowed>'
    "<denied>blocked.example.com</denied></network>"
)


def available(env_id: str, cwd: str, shell: str | None = None) -> Environment:
    return Environment(env_id, cwd, "available", shell, is_primary=False)


def primary(env_id: str, cwd: str, shell: str | None = None) -> Environment:
    return Environment(env_id, cwd, "available", shell, is_primary=True)


def starting(env_id: str, cwd: str) -> Environment:
    return Environment(env_id, cwd, "starting", None, is_primary=False)


def persisted(section: EnvironmentsSection) -> Json:
    return strip_null_fields(section.encode_snapshot(section.snapshot()))


def restored(section: EnvironmentsSection) -> Known[EnvironmentsSnapshot]:
    """``Known`` of ``section``'s snapshot after a trip through the persisted JSON."""
    return Known(EnvironmentsSection.decode_snapshot(persisted(section)))


def render(
    previous: Previous[EnvironmentsSnapshot], current: EnvironmentsSection | None
) -> str | None:
    """The table harness: no current section renders nothing; otherwise the fragment text."""
    if current is None:
        return None
    fragment = current.render_diff(previous)
    if fragment is None:
        return None
    assert fragment.role == "user"
    return fragment.text


@dataclass(frozen=True)
class Case:
    previous: Previous[EnvironmentsSnapshot]
    current: EnvironmentsSection | None
    expected: str | None


FULL_LAPTOP_DEVBOX = EnvironmentsSection(
    [primary("laptop", "/repo", "zsh"), available("devbox", "/workspace", "bash")]
)
FULL_LAPTOP_DEVBOX_TEXT = """<environment_context>
  <environments>
    <environment id="devbox" primary="false">
      <cwd>/workspace</cwd>
      <shell>bash</shell>
    </environment>
    <environment id="laptop" primary="true">
      <cwd>/repo</cwd>
      <shell>zsh</shell>
    </environment>
  </environments>
</environment_context>"""

CASES = {
    "10-absent-to-absent": Case(ABSENT, None, None),
    "11-absent-to-full": Case(ABSENT, FULL_LAPTOP_DEVBOX, FULL_LAPTOP_DEVBOX_TEXT),
    "12-unknown-to-full": Case(UNKNOWN, FULL_LAPTOP_DEVBOX, FULL_LAPTOP_DEVBOX_TEXT),
    "13-known-updates-and-removals": Case(
        restored(
            EnvironmentsSection(
                [
                    primary("laptop", "/repo", "bash"),
                    starting("devbox", "/workspace"),
                    available("old", "/old", "sh"),
                ]
            )
        ),
        EnvironmentsSection(
            [
                primary("laptop", "/repo", "zsh"),
                available("devbox", "/workspace", "powershell"),
                starting("remote", "/remote"),
            ]
        ),
        """<environment_context>
  <environments>
    <environment id="devbox" primary="false">
      <cwd>/workspace</cwd>
      <shell>powershell</shell>
    </environment>
    <environment id="laptop" primary="true">
      <cwd>/repo</cwd>
      <shell>zsh</shell>
    </environment>
    <environment id="old" status="unavailable" />
    <environment id="remote" primary="false">
      <cwd>/remote</cwd>
      <status>starting</status>
    </environment>
  </environments>
</environment_context>""",
    ),
    "14-known-turn-context-values-only": Case(
        restored(
            EnvironmentsSection(
                [primary("local", "/repo", "bash")],
                current_date="2026-06-19",
                timezone="UTC",
                network=NetworkPolicy(allowed_domains=["old.example.com"]),
                filesystem=FS_DISABLED,
            )
        ),
        EnvironmentsSection(
            [primary("local", "/repo", "bash")],
            current_date="2026-06-20",
            timezone="America/Los_Angeles",
            network=NetworkPolicy(
                allowed_domains=["new.example.com"], denied_domains=["blocked.example.com"]
            ),
            filesystem=FS_EXTERNAL,
        ),
        f"""<environment_context>
  <current_date>2026-06-20</current_date>
  <timezone>America/Los_Angeles</timezone>
  {NETWORK_14}
  {FS_EXTERNAL}
</environment_context>""",
    ),
    "15-absent-to-single-windows-environment": Case(
        ABSENT,
        EnvironmentsSection(
            [primary("remote", "file:///C:/windows", "powershell")], filesystem=FS_DISABLED
        ),
        f"""<environment_context>
  <cwd>C:\\windows</cwd>
  <shell>powershell</shell>
  {FS_DISABLED}
</environment_context>""",
    ),
    "16-unknown-shell-becoming-known-is-not-a-change": Case(
        restored(EnvironmentsSection([primary("local", "/repo")])),
        EnvironmentsSection([primary("local", "/repo", "zsh")]),
        None,
    ),
    "17-known-to-empty": Case(
        restored(EnvironmentsSection([primary("local", "/repo", "bash")])),
        EnvironmentsSection([]),
        """<environment_context>
  <environments>
    <environment id="local" status="unavailable" />
  </environments>
</environment_context>""",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_environment_context_diff_table(case: Case) -> None:
    assert render(case.previous, case.current) == case.expected


def test_full_snapshot_json() -> None:
    assert persisted(FULL_LAPTOP_DEVBOX) == {
        "environments": {
            "devbox": {"cwd": "/workspace", "shell": "bash", "status": "available"},
            "laptop": {"cwd": "/repo", "is_primary": True, "shell": "zsh", "status": "available"},
        }
    }


def test_changing_primary_environment_updates_model_context_and_persisted_state() -> None:
    before = EnvironmentsSection(
        [primary("local", "/repo", "bash"), available("remote", "/r", "zsh")]
    )
    after = EnvironmentsSection(
        [available("local", "/repo", "bash"), primary("remote", "/r", "zsh")]
    )

    assert (
        render(restored(before), after)
        == """<environment_context>
  <environments>
    <environment id="local" primary="false">
      <cwd>/repo</cwd>
      <shell>bash</shell>
    </environment>
    <environment id="remote" primary="true">
      <cwd>/r</cwd>
      <shell>zsh</shell>
    </environment>
  </environments>
</environment_context>"""
    )
    patch = WorldState([after]).snapshot().merge_patch_from(WorldState([before]).snapshot())
    assert patch == {
        "environments": {
            "environments": {"local": {"is_primary": None}, "remote": {"is_primary": True}}
        }
    }


def test_legacy_single_environment_snapshot_does_not_change() -> None:
    current = EnvironmentsSection([primary("local", "/repo", "bash")])
    legacy: Json = {
        "environments": {"local": {"cwd": "/repo", "status": "available", "shell": "bash"}}
    }

    assert render(Known(EnvironmentsSection.decode_snapshot(legacy)), current) is None
    assert persisted(current) == legacy


@pytest.mark.parametrize("primary_id", ["local", "remote"])
def test_crossing_single_environment_boundary_restates_current_environments(
    primary_id: str,
) -> None:
    single = EnvironmentsSection([primary("local", "/repo", "bash")])
    multiple = EnvironmentsSection(
        [
            Environment("local", "/repo", "available", "bash", is_primary=primary_id == "local"),
            Environment("remote", "/r", "available", "zsh", is_primary=primary_id == "remote"),
        ]
    )
    local_primary = "true" if primary_id == "local" else "false"
    remote_primary = "true" if primary_id == "remote" else "false"

    assert (
        render(restored(single), multiple)
        == f"""<environment_context>
  <environments>
    <environment id="local" primary="{local_primary}">
      <cwd>/repo</cwd>
      <shell>bash</shell>
    </environment>
    <environment id="remote" primary="{remote_primary}">
      <cwd>/r</cwd>
      <shell>zsh</shell>
    </environment>
  </environments>
</environment_context>"""
    )
    assert (
        render(restored(multiple), single)
        == """<environment_context>
  <environments>
    <environment id="local" primary="true">
      <cwd>/repo</cwd>
      <shell>bash</shell>
    </environment>
    <environment id="remote" status="unavailable" />
  </environments>
</environment_context>"""
    )


def test_subagents_are_persisted_but_never_trigger_a_render() -> None:
    before = EnvironmentsSection([primary("local", "/repo")], current_date="2026-06-19")
    after = EnvironmentsSection(
        [primary("local", "/repo")], current_date="2026-06-19", subagents="- worker: idle"
    )

    assert render(restored(before), after) is None
    assert persisted(after) == {
        "environments": {"local": {"cwd": "/repo", "status": "available"}},
        "current_date": "2026-06-19",
        "subagents": "- worker: idle",
    }


def test_present_values_are_repeated_whenever_something_renders() -> None:
    before = EnvironmentsSection(
        [primary("local", "/repo")],
        current_date="2026-06-19",
        timezone="UTC",
        network=NetworkPolicy(allowed_domains=["a.example.com", "b.example.com"]),
        filesystem=FS_DISABLED,
        subagents="- a & b\n- <c>\n",
    )
    after = EnvironmentsSection(
        [primary("local", "/repo")],
        current_date="2026-06-20",
        timezone="UTC",
        network=NetworkPolicy(allowed_domains=["a.example.com", "b.example.com"]),
        filesystem=FS_DISABLED,
        subagents="- a & b\n- <c>\n",
    )

    assert (
        render(restored(before), after)
        == f"""<environment_context>
  <current_date>2026-06-20</current_date>
  <timezone>UTC</timezone>
  <network enabled="true"><allowed>a.example.com,b.example.com</allowed></network>
  {FS_DISABLED}
  <subagents>
    - a &amp; b
    - &lt;c&gt;
  </subagents>
</environment_context>"""
    )


def test_text_is_xml_escaped_but_network_domains_are_not() -> None:
    section = EnvironmentsSection(
        [
            Environment('a&"b', "/r<1>", "available", "it's", is_primary=True),
            available("c", "/c"),
        ],
        current_date="<today>",
        network=NetworkPolicy(allowed_domains=["x&y.example.com"], denied_domains=["<z>"]),
    )

    assert (
        render(ABSENT, section)
        == """<environment_context>
  <environments>
    <environment id="a&amp;&quot;b" primary="true">
      <cwd>/r&lt;1&gt;</cwd>
      <shell>it&apos;s</shell>
    </environment>
    <environment id="c" primary="false">
      <cwd>/c</cwd>
    </environment>
  </environments>
  <current_date>&lt;today&gt;</current_date>
  <network enabled="true"><allowed>x&y.example.com</allowed><denied><z></denied></network>
</environment_context>"""
    )


def test_a_starting_single_environment_uses_the_environments_block() -> None:
    section = EnvironmentsSection([starting("remote", "/remote")])

    assert (
        render(ABSENT, section)
        == """<environment_context>
  <environments>
    <environment id="remote">
      <cwd>/remote</cwd>
      <status>starting</status>
    </environment>
  </environments>
</environment_context>"""
    )


def test_a_single_environment_that_became_available_is_restated() -> None:
    before = EnvironmentsSection([starting("local", "/repo")])
    after = EnvironmentsSection([primary("local", "/repo", "bash")])

    assert (
        render(restored(before), after)
        == """<environment_context>
  <cwd>/repo</cwd>
  <shell>bash</shell>
</environment_context>"""
    )


def test_a_changed_shell_is_a_change_when_both_sides_know_it() -> None:
    before = EnvironmentsSection([primary("local", "/repo", "bash")])
    after = EnvironmentsSection([primary("local", "/repo", "zsh")])
    forgot = EnvironmentsSection([primary("local", "/repo")])

    assert (
        render(restored(before), after)
        == """<environment_context>
  <cwd>/repo</cwd>
  <shell>zsh</shell>
</environment_context>"""
    )
    assert render(restored(before), forgot) is None


def test_network_policy_rendering() -> None:
    assert NetworkPolicy().render() == '<network enabled="true"></network>'
    assert NetworkPolicy(["a.com", "b.com", "a.com"], ["c.com"]).render() == (
        '<network enabled="true"><allowed>a.com,b.com</allowed><denied>c.com</denied></network>'
    )
    # A domain in both lists counts as denied.
    assert NetworkPolicy(["a.com", "b.com"], ["a.com"]).render() == (
        '<network enabled="true"><allowed>b.com</allowed><denied>a.com</denied></network>'
    )


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("/repo", "/repo"),
        ("file:///repo", "/repo"),
        ("file:///C:/windows", "C:\\windows"),
        ("file:///c:/Users/me/My%20Code", "c:\\Users\\me\\My Code"),
        ("file:///C:", "C:"),
        ("file://localhost/srv/app", "/srv/app"),
        ("file://server/share/dir", "\\\\server\\share\\dir"),
        ("file:///tmp/a%20b", "/tmp/a b"),
        ("C:\\already\\native", "C:\\already\\native"),
    ],
)
def test_cwd_is_stored_as_a_native_path(cwd: str, expected: str) -> None:
    assert native_path(cwd) == expected
    section = EnvironmentsSection([primary("e", cwd)])
    assert section.snapshot().environments["e"].cwd == expected


def test_duplicate_environment_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate environment id: 'local'"):
        EnvironmentsSection([primary("local", "/a"), starting("local", "/a")])


def test_empty_subagents_count_as_none() -> None:
    assert EnvironmentsSection([], subagents="").snapshot().subagents is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"environments": {}}, EnvironmentsSnapshot(environments={})),
        (
            {"environments": {"e": {"cwd": "/r", "status": "starting"}}, "future": True},
            EnvironmentsSnapshot(environments={"e": EnvironmentEntry(cwd="/r", status="starting")}),
        ),
    ],
)
def test_snapshot_decodes_with_defaults(raw: Json, expected: EnvironmentsSnapshot) -> None:
    assert EnvironmentsSection.decode_snapshot(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"environments": {"e": {"cwd": "/r", "status": "ready"}}},
        {"environments": {"e": {"status": "available"}}},
        {"environments": []},
        "local",
    ],
)
def test_mismatched_snapshots_do_not_decode(raw: Json) -> None:
    with pytest.raises(SnapshotDecodeError):
        EnvironmentsSection.decode_snapshot(raw)


names = st.text(alphabet="abc&<'", min_size=1, max_size=4)
optional_text = st.none() | st.text(max_size=8)
environments = st.builds(
    Environment,
    id=names,
    cwd=st.sampled_from(["/repo", "file:///C:/w", "/a&b", "file:///x%20y"]),
    status=st.sampled_from(["available", "starting"]),
    shell=st.none() | st.sampled_from(["bash", "zsh"]),
    is_primary=st.booleans(),
)
sections = st.builds(
    EnvironmentsSection,
    environments=st.lists(environments, max_size=4, unique_by=lambda env: env.id),
    current_date=optional_text,
    timezone=optional_text,
    network=st.none() | st.builds(NetworkPolicy, st.lists(names, max_size=2)),
    filesystem=st.none() | st.sampled_from([FS_DISABLED, FS_EXTERNAL]),
    subagents=optional_text,
)


@given(section=sections)
def test_round_tripped_current_snapshot_renders_nothing(section: EnvironmentsSection) -> None:
    assert section.render_diff(Known(section.snapshot())) is None
    assert section.render_diff(restored(section)) is None


@given(section=sections)
def test_unknown_renders_like_absent(section: EnvironmentsSection) -> None:
    assert section.render_diff(UNKNOWN) == section.render_diff(ABSENT)
