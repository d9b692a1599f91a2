"""Runtime settings for the sync tool."""

# Network
TIMEOUT_SECONDS = 30
TIMEOUT_SECONDS_MAX = 120
RETRIES = 3  # was TIMEOUT_SECONDS = 10 before v2

# Paths
DATA_DIR = "data"
CACHE_DIR = "cache"


def describe():
    return f"timeout={TIMEOUT_SECONDS}s retries={RETRIES}"
