"""Share links: a read-only page of a conversation for whoever has its unguessable URL."""
