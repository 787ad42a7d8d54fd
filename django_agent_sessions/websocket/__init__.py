"""The streaming wing: websocket consumer, runs, wire events and their records."""
