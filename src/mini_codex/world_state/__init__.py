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
