"""The end of a ``compiled`` selection: context beside the chosen evidence, at no header cost.

When every opening and widening that fits has been taken, what room is left is smaller
than any of them needs. Two steps may spend it, and neither adds a header or a gap marker:

* :func:`fill` grows each opened window one line at a time, best window first, inside its
  chunk (where the budget, not the selection, stopped it) and, once the chunk is whole,
  past it into the adjacent lines of the same file, but only while the packet's headers
  and separators are more than ``share`` (``selection.HEADER_SHARE``) of its tokens. A
  window could otherwise not grow past its chunk, and a packet whose windows are whole
  would stop below its budget with headers capped against that budget (so more than a
  tenth of the packet); a complete packet whose headers are within their share is not
  padded: it stays the smallest packet that holds the selection. Costs are the
  selection's per-piece estimates.
* :func:`close` runs on the rendered packet, counted exactly: while its headers and
  separators are more than ``share`` of its tokens, it adds the first line beside any
  range of any excerpt (excerpts in packet order) that still fits the budget.
* :func:`bridge`, last, fills every gap between two kept ranges of a file whose text
  costs at most the gap marker plus ``BRIDGE_TOKENS`` (:func:`small_gap`), where the
  exactly counted packet still fits: a marker never stands for a line or two of evidence
  between two ranges the packet keeps (the selection fills such gaps as it adds, too).

Every added line is contiguous with a range the packet already holds, so touching ranges
merge (:func:`ctxbench.compiler.render.merge_ranges`); a line that reaches the next range
of its file removes a gap marker. Nothing is ever removed, so a packet holds no less
evidence than before; it is not padded with unrelated text: only the lines around what was
chosen, in the files it was chosen from, are added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxbench.compiler.evidence import QueryMatcher, Window
from ctxbench.compiler.render import Range, merge_ranges, render_excerpt

if TYPE_CHECKING:
    from ctxbench.compiler.index import ContextIndex
    from ctxbench.compiler.selection import Draft, PacketParts

__all__ = ["BRIDGE_TOKENS", "GAP_TOKENS", "MAX_BYTES_PER_TOKEN", "bridge", "bridged", "close",
           "fill", "header_tokens", "lines_beside", "small_gap"]

#: A gap whose text costs at most the marker (2 tokens) plus this is filled, not marked.
BRIDGE_TOKENS = 8
GAP_TOKENS = 2  # the gap line and the newline added before it
# More bytes per token than text ever averages over a piece of lines (cl100k: about 4).
MAX_BYTES_PER_TOKEN = 12


def small_gap(index: ContextIndex, data: bytes, gap: Range) -> bool:
    """True if the text of ``gap`` costs at most the gap marker plus ``BRIDGE_TOKENS``."""
    limit = GAP_TOKENS + BRIDGE_TOKENS
    return 0 < gap[1] - gap[0] <= MAX_BYTES_PER_TOKEN * limit and \
        index.count(data[gap[0]:gap[1]].decode("utf-8", "replace")) <= limit


def bridged(index: ContextIndex, data: bytes, ranges: tuple[Range, ...]) -> tuple[Range, ...]:
    """``ranges`` (sorted, merged) with every small gap (:func:`small_gap`) filled."""
    out = list(ranges[:1])
    for a, b in ranges[1:]:
        if small_gap(index, data, (out[-1][1], a)):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def lines_beside(data: bytes, rng: Range) -> tuple[Range | None, Range | None]:
    """The next line after and the next line before a line-aligned range, each with the
    blank lines between it and the range (so an excerpt never gains a blank edge), or
    None at either end of the file."""
    a, b = rng
    after = before = None
    end = b
    while end < len(data):
        start = end
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        if data[start:end].strip():
            break
    if end > b:
        after = (b, end)
    start = a
    while start > 0:
        stop = start
        start = data.rfind(b"\n", 0, stop - 1) + 1
        if data[start:stop].strip():
            break
    if start < a:
        before = (start, a)
    return after, before


def _all_beside(data: bytes, ranges: tuple[Range, ...]) -> list[Range]:
    """Every line beside a range (as :func:`lines_beside`), in file order."""
    out: list[Range] = []
    for rng in ranges:
        after, before = lines_beside(data, rng)
        out += [line for line in (before, after) if line is not None and line not in out]
    return out


class _Reach:
    """One opened window, grown by :func:`fill`: inside its chunk, then past it."""

    __slots__ = ("after", "before", "position", "window")

    def __init__(self, window: Window, position: int) -> None:
        self.window = window
        self.position = position
        self.after = 0
        self.before = 0

    def step(self, draft: Draft, matcher: QueryMatcher, share: float) -> bool:
        """Add one line if one fits (past the chunk only while headers and separators
        are more than ``share`` of the packet); False when nothing more is to be added."""
        window = self.window
        if not window.whole():
            state = window.state()
            span = window.grow(1)
            if span is not None and draft.add(self.position, (span,)):
                return True
            window.restore(state)
            return False
        if draft.overhead <= share * draft.estimate:
            return False  # the packet is complete and its headers within their share
        data = draft.index.source(self.position)
        ranges = draft.packet.ranges[self.position]
        span = window.span()
        holder = next((r for r in ranges if r[0] <= span[0] and span[1] <= r[1]), None)
        if holder is None:  # not held (cannot happen: a window is what the packet holds)
            return False
        after, before = lines_beside(data, holder)
        lines = [line for line in (after, before) if line is not None]
        if len(lines) == 2:
            # Towards the heavier line; on a tie two lines after for each line before,
            # as a window grows inside its chunk (evidence.Window.grow).
            weights = matcher.line_weights(data, lines)
            if weights[1] > weights[0] or (weights[1] == weights[0] and
                                            self.after > 2 * self.before):
                lines.reverse()
        for line in lines:
            if draft.add(self.position, (line,)):
                if line == after:
                    self.after += 1
                else:
                    self.before += 1
                return True
        # The window's own range is boxed in: the lines beside the file's other ranges.
        return any(draft.add(self.position, (line,)) for line in _all_beside(data, ranges)
                   if line not in lines)


def fill(draft: Draft, windows: list[tuple[Window, int]], matcher: QueryMatcher,
         share: float) -> None:
    """Spend the room no opening or widening fits in on the lines next to the opened
    windows, one line per window in turn, best window first (see the module)."""
    growing = [_Reach(window, position) for window, position in windows]
    while growing and draft.room() > 0:
        growing = [reach for reach in growing if reach.step(draft, matcher, share)]


def _render(packet: PacketParts, ranges: dict[int, tuple[Range, ...]]) -> str:
    index = packet.index
    return "".join(render_excerpt(packet.excerpt(p, ranges[p]), index.source(p))
                   for p in packet.order)


def header_tokens(index: ContextIndex, order: list[int],
                  ranges: dict[int, tuple[Range, ...]], token_count: int) -> int:
    """Packet tokens minus the tokens of the excerpt texts alone, in packet order
    (headers, gap markers, separators), as ``ctxbench compile evaluate`` measures them."""
    bodies = [index.source(p)[a:b].decode("utf-8", "replace")
              for p in order for a, b in ranges[p]]
    return max(0, token_count - index.count("".join(bodies)))


def close(packet: PacketParts, token_count: int, share: float) -> bool:
    """While headers and separators are more than ``share`` of the packet, add the first
    line beside a range of an excerpt (packet order) that keeps the exactly counted packet
    within its budget. True if a line was added (``packet.ranges`` changed)."""
    budget = packet.budget
    if budget is None or not packet.order:
        return False
    index = packet.index
    changed = False
    # Not only while tokens are left: a line that closes a gap removes its marker, so the
    # packet may take it even at its budget. Each step adds bytes, so this ends.
    while header_tokens(index, packet.order, packet.ranges, token_count) > \
            share * token_count:
        for position in packet.order:
            data = index.source(position)
            ranges = packet.ranges[position]
            for line in _all_beside(data, ranges):
                trial = dict(packet.ranges)
                trial[position] = merge_ranges((*ranges, line))
                count = index.count(_render(packet, trial))
                if count <= budget:
                    packet.ranges = trial
                    token_count = count
                    changed = True
                    break
            else:
                continue
            break
        else:
            break
    return changed


def bridge(packet: PacketParts) -> bool:
    """Fill each small gap (:func:`small_gap`) between two ranges of an excerpt where the
    exactly counted packet stays within its budget. True if ``packet.ranges`` changed."""
    budget = packet.budget
    if budget is None:
        return False
    index = packet.index
    changed = False
    for position in packet.order:
        data = index.source(position)
        whole = bridged(index, data, packet.ranges[position])
        if whole == packet.ranges[position]:
            continue
        trial = dict(packet.ranges)
        trial[position] = whole
        count = index.count(_render(packet, trial))
        if count <= budget:
            packet.ranges, changed = trial, True
    return changed
