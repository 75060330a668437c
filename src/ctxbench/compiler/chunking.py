"""Split an artifact into structural chunks, each a byte range of the source.

Markdown by sections (with the enclosing headings as context), Python by top-level
definitions via ``ast`` (large classes by method, with the class line as context; a file
``ast`` cannot parse, or that makes it recurse too deep, falls back to blank-line blocks),
JSON and YAML by nesting (small sibling keys grouped, a large value split into its
children with the enclosing key lines as context, so each chunk keeps its key path),
TOML/INI by table, chat logs by message, other text by the sections under its headings
(Markdown ``#``, setext or reStructuredText underlines, manual-page upper-case lines,
troff ``.SH``/``.SS``) when it has at least two, else by blank-line blocks. Chunks are
line-aligned (UTF-8 safe), contiguous and cover the whole artifact, so any byte belongs
to exactly one chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ``ast`` is imported when a Python file is chunked, not on every start
    import ast

__all__ = ["MAX_CHUNK_BYTES", "Chunk", "chunk_artifact", "chunker_for", "path_suffix"]

MAX_CHUNK_BYTES = 3000
_BLOCK_TARGET = 900
Range = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One excerpt candidate: ``[start, end)`` bytes of the artifact plus context ranges.

    ``context`` holds the byte ranges of enclosing headings or signatures (all before
    ``start``) that are rendered with the chunk so a fragment stays readable.
    """

    artifact_id: str
    source_blake3: str
    start: int
    end: int
    context: tuple[Range, ...] = ()
    label: str = ""


@dataclass(frozen=True, slots=True)
class _Piece:
    start_line: int
    end_line: int  # exclusive
    context: tuple[int, ...] = ()  # line numbers whose text is context
    label: str = ""


class _Lines:
    def __init__(self, data: bytes) -> None:
        self.raw = data.splitlines(keepends=True)
        self.offsets = [0]
        for line in self.raw:
            self.offsets.append(self.offsets[-1] + len(line))
        self.text = [line.decode("utf-8", "replace") for line in self.raw]

    def __len__(self) -> int:
        return len(self.raw)

    def blank(self, i: int) -> bool:
        return not self.raw[i].strip()


def _blocks(lines: _Lines, lo: int, hi: int, target: int = _BLOCK_TARGET) -> list[_Piece]:
    """Blank-line separated blocks of lines [lo, hi), small neighbours merged up to target."""
    pieces: list[tuple[int, int]] = []
    start = lo
    for i in range(lo, hi):
        if lines.blank(i) and i + 1 < hi and not lines.blank(i + 1):
            pieces.append((start, i + 1))
            start = i + 1
    if start < hi:
        pieces.append((start, hi))
    merged: list[tuple[int, int]] = []
    for a, b in pieces:
        if merged:
            pa = merged[-1][0]
            if lines.offsets[b] - lines.offsets[pa] <= target:
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    return [_Piece(a, b) for a, b in merged]


def _split_by_starts(starts: Sequence[int], n: int, labels: Sequence[str] = ()) -> list[_Piece]:
    bounds = sorted(set([0, *(s for s in starts if 0 < s < n)]))
    label_at = dict(zip(starts, labels, strict=False))
    return [
        _Piece(a, b, (), label_at.get(a, ""))
        for a, b in zip(bounds, [*bounds[1:], n], strict=True)
    ]


_MD_HEADING = re.compile(r"^(#{1,6})[ \t]")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown(lines: _Lines) -> list[_Piece]:
    pieces: list[_Piece] = []
    stack: list[tuple[int, int]] = []  # (level, line) of enclosing headings
    start, label = 0, ""
    context: tuple[int, ...] = ()
    in_fence = False
    for i, text in enumerate(lines.text):
        if _FENCE.match(text):
            in_fence = not in_fence
            continue
        match = None if in_fence else _MD_HEADING.match(text)
        if not match:
            continue
        if i > start:
            pieces.append(_Piece(start, i, context, label))
        level = len(match.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        context = tuple(line for _, line in stack)
        stack.append((level, i))
        start, label = i, text.strip()
    if start < len(lines):
        pieces.append(_Piece(start, len(lines), context, label))
    return pieces


def _def_start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def _python(lines: _Lines) -> list[_Piece]:
    import ast

    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    try:
        tree = ast.parse("".join(lines.text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Hostile or broken input (deeply nested expressions recurse in the parser):
        # fall back to plain blocks rather than fail the whole index.
        return _blocks(lines, 0, len(lines))
    starts: list[int] = []
    labels: list[str] = []
    previous_was_def = True
    for statement in tree.body:
        is_def = isinstance(statement, defs)
        if is_def or previous_was_def:
            starts.append(_def_start(statement))
            labels.append(lines.text[statement.lineno - 1].strip() if is_def else "")
        previous_was_def = is_def
    pieces = _split_by_starts(starts, len(lines), labels)
    out: list[_Piece] = []
    classes = {_def_start(n): n for n in tree.body if isinstance(n, ast.ClassDef)}
    for piece in pieces:
        node: ast.ClassDef | None = classes.get(piece.start_line)
        size = lines.offsets[piece.end_line] - lines.offsets[piece.start_line]
        methods = [m for m in node.body if isinstance(m, defs)] if node else []
        if node is None or size <= MAX_CHUNK_BYTES or not methods:
            out.append(piece)
            continue
        signature = tuple(range(piece.start_line, node.lineno))  # decorators + class line
        method_starts = [_def_start(m) for m in methods]
        out.append(_Piece(piece.start_line, method_starts[0], (), piece.label))
        bounds = [*method_starts, piece.end_line]
        for m, a, b in zip(methods, bounds, bounds[1:], strict=False):
            out.append(_Piece(a, b, signature, lines.text[m.lineno - 1].strip()))
    return out


_KEY = re.compile(
    r"""^\s*(?:-\s+)?(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s:#"'{}\[\],][^:#]*?))\s*:"""
)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _nested(lines: _Lines) -> list[_Piece]:
    """JSON or YAML by nesting (indentation): see the module docstring."""
    depth = [_indent(t) if t.strip() else -1 for t in lines.text]
    out: list[_Piece] = []

    def block_end(i: int, hi: int) -> int:
        # A line owns the following lines that are blank or indented deeper; a closing
        # bracket at the same indent belongs to it too.
        j = i + 1
        while j < hi and (depth[j] < 0 or depth[j] > depth[i]):
            j += 1
        if j < hi and depth[j] == depth[i] and lines.text[j].strip()[:1] in "}]":
            j += 1
        return j

    def label_of(context: tuple[int, ...], i: int) -> str:
        keys = []
        for n in (*context, i):
            m = _KEY.match(lines.text[n])
            if m:
                keys.append(next(g for g in m.groups() if g is not None).strip())
        return ".".join(keys)

    def split(lo: int, hi: int, context: tuple[int, ...]) -> None:
        siblings: list[tuple[int, int]] = []
        i = lo
        while i < hi:
            j = block_end(i, hi) if depth[i] >= 0 else i + 1
            siblings.append((i, j))
            i = j
        group: tuple[int, int] | None = None
        for a, b in siblings:
            size = lines.offsets[b] - lines.offsets[a]
            if size > MAX_CHUNK_BYTES and b - a > 2:
                if group:
                    out.append(_Piece(group[0], group[1], context, label_of(context, group[0])))
                    group = None
                out.append(_Piece(a, a + 1, context, label_of(context, a)))
                split(a + 1, b, (*context, a))
                continue
            if group and lines.offsets[b] - lines.offsets[group[0]] <= _BLOCK_TARGET:
                group = (group[0], b)
                continue
            if group:
                out.append(_Piece(group[0], group[1], context, label_of(context, group[0])))
            group = (a, b)
        if group:
            out.append(_Piece(group[0], group[1], context, label_of(context, group[0])))

    split(0, len(lines), ())
    # A key line alone (its value split below it) joins the chunk that follows it.
    merged: list[_Piece] = []
    for piece in out:
        if merged and merged[-1].end_line - merged[-1].start_line == 1 \
                and merged[-1].end_line == piece.start_line and \
                lines.offsets[piece.end_line] - lines.offsets[merged[-1].start_line] <= \
                MAX_CHUNK_BYTES:
            head = merged.pop()
            context = tuple(c for c in piece.context if c != head.start_line)
            merged.append(_Piece(head.start_line, piece.end_line, context, piece.label))
            continue
        merged.append(piece)
    return merged


_CONFIG_KEY = re.compile(r"^(\[[^\]]+\]|[A-Za-z0-9_\"'][^:=#]*[:=])")


def _config(lines: _Lines) -> list[_Piece]:
    starts: list[int] = []
    pending: int | None = None  # comments and document markers attach to the next key
    in_table = False  # inside a TOML/INI [table], only the next table header starts a chunk
    for i, text in enumerate(lines.text):
        if text.startswith(("#", ";", "---")):
            pending = i if pending is None else pending
        elif _CONFIG_KEY.match(text) and (not in_table or text.startswith("[")):
            in_table = in_table or text.startswith("[")
            starts.append(i if pending is None else pending)
            pending = None
        elif not text.strip():
            continue
        else:
            pending = None
    return _split_by_starts(starts, len(lines)) if starts else _blocks(lines, 0, len(lines))


_CHAT_START = re.compile(
    r"^\s*(\[[^\]]{1,40}\]\s*|\d{4}-\d\d-\d\d[T ][\d:.]+Z?\s*|\d\d?:\d\d(:\d\d)?\s*)?"
    r"(<[^>]{1,40}>|\[@?[\w.\- ]{1,40}\]|@?[\w.\-]{1,40}( \([^)]{1,30}\))?:)\s"
)


def _chat(lines: _Lines) -> list[_Piece]:
    starts = [i for i, text in enumerate(lines.text) if _CHAT_START.match(text)]
    return _split_by_starts(starts, len(lines)) if starts else _blocks(lines, 0, len(lines))


def _per_line(lines: _Lines) -> list[_Piece]:
    return [_Piece(i, i + 1) for i in range(len(lines)) if not lines.blank(i)]


_UNDERLINE = re.compile(r"^([=\-~^*+#])\1{2,}\s*$")
_CAPS_HEADING = re.compile(r"^[A-Z][A-Z0-9 /&()-]{2,40}$")
_TROFF_HEADING = re.compile(r"^\.(SH|SS|Sh|Ss)\b")
_UNDERLINE_LEVEL = {"=": 1, "-": 2}


def _text_headings(lines: _Lines) -> list[tuple[int, int]]:
    """(line, level) of headings in plain text: Markdown ``#``, setext or reStructuredText
    underlines, manual-page style upper-case lines at the left margin, and troff
    ``.SH``/``.SS`` (``.Sh``/``.Ss`` in mdoc) section macros."""
    found: list[tuple[int, int]] = []
    in_fence = False
    texts = lines.text
    for i, text in enumerate(texts):
        if _FENCE.match(text):
            in_fence = not in_fence
            continue
        if in_fence or not text.strip():
            continue
        atx = _MD_HEADING.match(text)
        if atx:
            found.append((i, len(atx.group(1))))
            continue
        troff = _TROFF_HEADING.match(text)
        if troff:
            found.append((i, 1 if troff.group(1) in ("SH", "Sh") else 2))
            continue
        following = texts[i + 1] if i + 1 < len(texts) else ""
        under = _UNDERLINE.match(following)
        if under and not _UNDERLINE.match(text) and \
                len(following.strip()) >= 0.6 * len(text.strip()):
            found.append((i, _UNDERLINE_LEVEL.get(under.group(1), 3)))
        elif _CAPS_HEADING.match(text.rstrip("\r\n")):
            found.append((i, 1))
    return found


def _plain(lines: _Lines) -> list[_Piece]:
    """Sections under detected headings (with the enclosing ones as context), else blocks."""
    headings = _text_headings(lines)
    if len(headings) < 2:
        return _blocks(lines, 0, len(lines))
    pieces: list[_Piece] = []
    stack: list[tuple[int, int]] = []
    start, label = 0, ""
    context: tuple[int, ...] = ()
    for i, level in headings:
        if i > start:
            pieces.append(_Piece(start, i, context, label))
        while stack and stack[-1][0] >= level:
            stack.pop()
        context = tuple(line for _, line in stack)
        stack.append((level, i))
        start, label = i, lines.text[i].strip()
    pieces.append(_Piece(start, len(lines), context, label))
    return pieces


_BY_SUFFIX: dict[str, Callable[[_Lines], list[_Piece]]] = {
    ".md": _markdown, ".markdown": _markdown, ".py": _python, ".json": _nested,
    ".yaml": _nested, ".yml": _nested, ".toml": _config, ".ini": _config, ".cfg": _config,
    ".jsonl": _per_line, ".ndjson": _per_line,
}


def path_suffix(path: str) -> str:
    """The lowercased extension of a corpus path's file name (``".md"``), or ``""``."""
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def chunker_for(path: str, kind: str) -> str:
    """Name of the chunker used for an artifact (by extension, then by source kind)."""
    suffix = path_suffix(path)
    if kind == "chat" and suffix not in (".jsonl", ".ndjson", ".json"):
        return "chat"
    fn = _BY_SUFFIX.get(suffix)
    return fn.__name__.lstrip("_") if fn else "plain"


_CHUNKERS: dict[str, Callable[[_Lines], list[_Piece]]] = {
    "markdown": _markdown, "python": _python, "nested": _nested, "config": _config,
    "chat": _chat, "per_line": _per_line, "plain": _plain,
}


def _limit(lines: _Lines, pieces: list[_Piece]) -> list[_Piece]:
    """Split pieces larger than MAX_CHUNK_BYTES into blocks that keep the piece's context."""
    out: list[_Piece] = []
    for piece in pieces:
        size = lines.offsets[piece.end_line] - lines.offsets[piece.start_line]
        if size <= MAX_CHUNK_BYTES or piece.end_line - piece.start_line < 2:
            out.append(piece)
            continue
        first_is_heading = bool(piece.label) and piece.start_line not in piece.context
        for n, block in enumerate(_blocks(lines, piece.start_line, piece.end_line)):
            context = piece.context
            if n and first_is_heading:
                context = (*context, piece.start_line)
            out.append(_Piece(block.start_line, block.end_line, context, piece.label))
    return out


def chunk_artifact(
    artifact_id: str, source_blake3: str, path: str, kind: str, data: bytes
) -> list[Chunk]:
    """Chunks of one artifact's bytes, in source order; empty for an empty artifact."""
    lines = _Lines(data)
    if not len(lines):
        return []
    pieces = _limit(lines, _CHUNKERS[chunker_for(path, kind)](lines))
    chunks: list[Chunk] = []
    for piece in pieces:
        if piece.end_line <= piece.start_line:
            continue
        context = tuple(
            (lines.offsets[i], lines.offsets[i + 1])
            for i in sorted(set(piece.context)) if i < piece.start_line
        )
        chunks.append(Chunk(
            artifact_id, source_blake3, lines.offsets[piece.start_line],
            lines.offsets[piece.end_line], context, piece.label,
        ))
    return chunks
