"""pytest plugin entry point (filled in by the runtime audit work)."""
