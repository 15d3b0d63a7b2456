"""The WorldState: model-visible sections, their persisted snapshots, diffs and fragments.

Pure core (no I/O, no clock). Layout:

* ``section.py`` / ``fragment.py`` – the section contract and model-visible fragments;
* ``extensions.py`` – extension-contributed sections and their entry-point loading;
* ``state.py`` – the ordered ``WorldState`` container and its three rendering modes;
* ``snapshot.py`` – ``WorldStateSnapshot`` and its RFC 7396 patches;
* ``hash.py`` – fingerprints sections persist instead of large texts;
* ``messages.py`` – fragments to messages, and the model-visible layout formatter;
* ``sections/`` – the built-in sections (imported from there, not re-exported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.world_state.extensions import (
        EXTENSION_ENTRY_POINT_GROUP,
        CapabilityRoot,
        ExtensionContext,
        ExtensionEnvironment,
        ExtensionSection,
        ExtensionStore,
        ExtensionStores,
        FragmentMatcher,
        WorldStateExtension,
        contribute_sections,
        load_extensions,
    )
    from mini_codex.world_state.fragment import Fragment, Role, markers_match
    from mini_codex.world_state.hash import FRAGMENT_HASH_DOMAIN, fragment_hash, json_hash
    from mini_codex.world_state.messages import (
        LAYOUT_TEXT_LIMIT,
        format_model_visible_layout,
        fragments_to_messages,
    )
    from mini_codex.world_state.section import (
        ABSENT,
        UNKNOWN,
        Absent,
        Known,
        Previous,
        Section,
        SnapshotDecodeError,
        Unknown,
    )
    from mini_codex.world_state.snapshot import WorldStateSnapshot
    from mini_codex.world_state.state import AnySection, WorldState

__all__ = [
    "ABSENT",
    "EXTENSION_ENTRY_POINT_GROUP",
    "FRAGMENT_HASH_DOMAIN",
    "LAYOUT_TEXT_LIMIT",
    "UNKNOWN",
    "Absent",
    "AnySection",
    "CapabilityRoot",
    "ExtensionContext",
    "ExtensionEnvironment",
    "ExtensionSection",
    "ExtensionStore",
    "ExtensionStores",
    "Fragment",
    "FragmentMatcher",
    "Known",
    "Previous",
    "Role",
    "Section",
    "SnapshotDecodeError",
    "Unknown",
    "WorldState",
    "WorldStateExtension",
    "WorldStateSnapshot",
    "contribute_sections",
    "format_model_visible_layout",
    "fragment_hash",
    "fragments_to_messages",
    "json_hash",
    "load_extensions",
    "markers_match",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "EXTENSION_ENTRY_POINT_GROUP": "mini_codex.world_state.extensions",
        "CapabilityRoot": "mini_codex.world_state.extensions",
        "ExtensionContext": "mini_codex.world_state.extensions",
        "ExtensionEnvironment": "mini_codex.world_state.extensions",
        "ExtensionSection": "mini_codex.world_state.extensions",
        "ExtensionStore": "mini_codex.world_state.extensions",
        "ExtensionStores": "mini_codex.world_state.extensions",
        "FragmentMatcher": "mini_codex.world_state.extensions",
        "WorldStateExtension": "mini_codex.world_state.extensions",
        "contribute_sections": "mini_codex.world_state.extensions",
        "load_extensions": "mini_codex.world_state.extensions",
        "Fragment": "mini_codex.world_state.fragment",
        "Role": "mini_codex.world_state.fragment",
        "markers_match": "mini_codex.world_state.fragment",
        "FRAGMENT_HASH_DOMAIN": "mini_codex.world_state.hash",
        "fragment_hash": "mini_codex.world_state.hash",
        "json_hash": "mini_codex.world_state.hash",
        "LAYOUT_TEXT_LIMIT": "mini_codex.world_state.messages",
        "format_model_visible_layout": "mini_codex.world_state.messages",
        "fragments_to_messages": "mini_codex.world_state.messages",
        "ABSENT": "mini_codex.world_state.section",
        "UNKNOWN": "mini_codex.world_state.section",
        "Absent": "mini_codex.world_state.section",
        "Known": "mini_codex.world_state.section",
        "Previous": "mini_codex.world_state.section",
        "Section": "mini_codex.world_state.section",
        "SnapshotDecodeError": "mini_codex.world_state.section",
        "Unknown": "mini_codex.world_state.section",
        "WorldStateSnapshot": "mini_codex.world_state.snapshot",
        "AnySection": "mini_codex.world_state.state",
        "WorldState": "mini_codex.world_state.state",
    },
)
