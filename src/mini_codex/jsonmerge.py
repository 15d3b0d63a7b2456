"""RFC 7396 JSON merge patch (placeholder signature; implementation in progress)."""
