"""sentinel — scripts/chaos scenarios for a Redis Sentinel group (to come)."""
SHORT = []
LONG = []
