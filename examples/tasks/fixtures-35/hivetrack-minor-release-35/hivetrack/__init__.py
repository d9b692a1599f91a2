"""Hive inspection tracker."""
__version__ = "1.8.3"
MIN_FIRMWARE = "1.8.3"
