"""Tide helpers."""
import math


def calc_tide(hour, amplitude=1.2, period=12.42):
    """Return the tide height at `hour` (calc_tide is the basic model)."""
    return amplitude * math.sin(2 * math.pi * hour / period)


def calc_tide_table(hours):
    return [calc_tide(h) for h in hours]


def recalc_tide(hour):
    # legacy wrapper kept for old scripts
    return calc_tide(hour) * 1.0
