"""Unique value and node names (the exporter and the legalization pass share the scheme)."""


def fresh_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base__k`` with the first free k; the name is added to ``taken``."""
    name, k = base, 1
    while name in taken:
        name = f"{base}__{k}"
        k += 1
    taken.add(name)
    return name
