"""Documented upper bounds on everything a reader accepts.

Every reader in ctxbench refuses input beyond these bounds with a located error
(``file:line`` or a JSON pointer, and the field), instead of running out of memory,
recursing until Python gives up, or spending minutes on a count nobody meant.

=========================  =====================  =======================================
bound                      value                  why
=========================  =====================  =======================================
``MAX_DEPTH``              64 levels              JSON/JSONL/TOML nesting; records are
                                                  3 deep, reports about 8
``MAX_NUMBER_CHARS``       4,300 characters       one JSON number token (Python's own
                                                  limit for integers; a double needs ~25)
``MAX_COUNT``              2^53 - 1               every count, id, token number and
                                                  repetition: the largest integer every
                                                  JSON reader (and a float64) keeps exact
``MAX_LINE_BYTES``         64 MiB                 one JSONL line (a trial with a long
                                                  response text stays far below it)
``MAX_DOCUMENT_BYTES``     1 GiB                  one JSON document (an ECEB run of a
                                                  million observations is ~400 MB)
``MAX_TOML_BYTES``         16 MiB                 one TOML file (specs, preregistrations)
``MAX_ARCHIVE_MEMBERS``    250,000 members        one zip archive (an Inspect ``.eval``
                                                  holds one member per sample and epoch)
``MAX_ARCHIVE_MEMBER_BYTES``  256 MiB             one archive member, decompressed
``MAX_ARCHIVE_BYTES``      512 MiB                a whole archive, decompressed (the
                                                  foreign reader holds it all in memory)
``MAX_MESSAGE_CHARS``      2,000 characters       one rendered error line
``MAX_QUOTED_CHARS``       60 characters          a value quoted inside a message
=========================  =====================  =======================================
"""

from __future__ import annotations

__all__ = [
    "MAX_ARCHIVE_BYTES",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_ARCHIVE_MEMBER_BYTES",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_NUMBER_CHARS",
    "MAX_QUOTED_CHARS",
    "MAX_TOML_BYTES",
]

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 4300
MAX_COUNT = 2**53 - 1
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_DOCUMENT_BYTES = 1024 * 1024 * 1024
MAX_TOML_BYTES = 16 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 250_000
MAX_ARCHIVE_MEMBER_BYTES = 256 * 1024 * 1024
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
MAX_MESSAGE_CHARS = 2000
MAX_QUOTED_CHARS = 60
