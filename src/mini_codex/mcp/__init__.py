"""MCP servers: runtime, per-step binding and tool naming (not implemented yet)."""
