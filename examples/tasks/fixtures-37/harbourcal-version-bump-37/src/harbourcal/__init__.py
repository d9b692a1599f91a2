"""Tide-aware sailing calendar."""

__version__ = "1.4.2"
TIDELIB_MIN = "1.4.2"  # oldest tidelib we support
