"""The interactive terminal UI (``mini-codex`` with no subcommand): a Textual app that is a client
of one ``Session``'s events. It holds no runtime logic: turns, steering, interrupts and approvals
go through the Session API and the runtime's approval callback. Textual loads only when the UI
starts (``import textual`` takes about a second)."""
