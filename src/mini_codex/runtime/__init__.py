"""Orchestration: Session, run_turn, step capture, sampling and tool dispatch.

The only layer that wires the adapters together; nothing imports it but ``cli/``.
"""
