"""Formatting shared by bench/scale's summaries (summarize.py, summarize_build.py)."""


def bp(n):
    """A base count with its unit (3 significant digits)."""
    n = int(n)
    for unit, f in (("Gbp", 1e9), ("Mbp", 1e6), ("kbp", 1e3)):
        if n >= f:
            return f"{n / f:.3g} {unit}"
    return f"{n} bp"


def num(x):
    """A CSV field as a float; None when empty or NA."""
    return None if x in ("", "NA", None) else float(x)
