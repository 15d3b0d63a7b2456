"""MCP servers: the client (stdio, streamable HTTP), the catalog cache, the session's runtime
(servers started concurrently in the background, required ones awaited), the per-step binding,
tool naming (``mcp__server__tool``), results and ``mcp://`` mentions."""
