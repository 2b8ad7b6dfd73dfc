"""Labels the plotting tools share (tools/plot.py, tools/plot_plan.py):
message sizes as lanecast writes them (K/M/G, powers of 1024) and times in
the unit that reads best."""


def size_text(b):
    b = int(b)
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale}{unit}"
    return str(b)


def time_text(us, digits=3):
    """`us` microseconds in s, ms or us, with `digits` significant digits."""
    if us >= 1e6:
        return f"{us / 1e6:.{digits}g} s"
    if us >= 1e3:
        return f"{us / 1e3:.{digits}g} ms"
    return f"{us:.{digits}g} us"
