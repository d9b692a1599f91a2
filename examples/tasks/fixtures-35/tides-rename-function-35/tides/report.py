from tides.core import calc_tide, calc_tide_table


def morning_report():
    heights = calc_tide_table(range(6, 12))
    peak = max(heights)
    now = calc_tide(8)
    return f"now={now:.2f} peak={peak:.2f}"
