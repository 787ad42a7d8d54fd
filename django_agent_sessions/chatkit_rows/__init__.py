"""ChatKit's threads, items and attachments as rows (docs/protocols/chatkit.md); the
``chatkit`` extra's ``DjangoChatKitStore`` reads and writes them through ``store.chatkit``."""
