"""Overlapping regions of a plan that nothing in the plan declares."""

from __future__ import annotations


def undeclared_overlaps(plan):
    """Pairs of regions sharing a unit that no alias group explains: two phases of one group,
    or a group nested inside another (an if inside an arm, as a union inside a union)."""
    groups = {g.index: g for g in plan.groups}

    def nested(g, h):
        return g != h and groups[h].offset <= groups[g].offset and groups[g].end <= groups[h].end

    sized = [r for r in plan.regions if r.size]
    bad = []
    for i, a in enumerate(sized):
        for b in sized[i + 1 :]:
            if not (a.offset < b.end and b.offset < a.end):
                continue
            if a.group is not None and b.group is not None:
                if a.group == b.group and a.phase != b.phase:
                    continue
                if nested(a.group, b.group) or nested(b.group, a.group):
                    continue
            bad.append((a.name, b.name))
    return bad
