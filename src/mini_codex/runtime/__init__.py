"""Orchestration: Session, run_turn, step capture, sampling, compaction, approvals and tool
dispatch.

The runtime holds no defaults and no wiring of its own: a ``Session`` gets frozen settings and
its services (``runtime/session_settings.py``) from ``mini_codex.host``, the only importer of
``runtime.session`` (an import-linter contract). Front ends (``cli/``, ``tui/``, ``web/``,
``sdk/``, ``batch/``) use the runtime's event and exec-event types and its approval callback
protocol, and hold ``host.Session`` objects.
"""
