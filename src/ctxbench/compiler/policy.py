"""Access policy of one actor: which classifications it may read, which artifacts it may not.

The policy is applied to artifact metadata (id and classification) before any text of
the artifact is read for a query, so a denied or disallowed artifact is never scored,
never held as candidate text and never rendered.

Names typed by a person (a plain directory's allowed classifications and denied files)
are bound to the corpus by :meth:`Policy.resolved_for` before use, fail-closed: each is
normalised (Unicode NFC, surrounding whitespace, ``./`` and ``..`` segments, an absolute
path or one relative to the working directory that lies inside the corpus) and must
name something that exists, or the whole request is refused with a located error.
Case policy: an exact match wins; otherwise a case-insensitive match (Unicode casefold)
is used when it is unique, and refused as ambiguous when several files differ only in
case. A bare file name matches the one file of that name anywhere in the corpus, or is
refused as ambiguous (also when one of the files of that name sits at the corpus root,
so the name is that file's path too). A directory denies every file under it.
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.core import InputError, blake3_json
from ctxbench.core.errors import describe_value

if TYPE_CHECKING:
    from ctxbench.compiler.corpus import Corpus

__all__ = ["POLICY_SCHEMA", "Policy"]

POLICY_SCHEMA = "ctxbench.policy.v1"


def _sorted_unique(values: Iterable[str], what: str) -> tuple[str, ...]:
    out = set()
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"policy: {what}: expected non-blank strings, got {value!r}")
        out.add(value)
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class Policy:
    """Build with the actor's allowed classifications and explicitly denied artifact ids.

    Both lists are stored sorted and de-duplicated, so equal policies have equal digests.
    Access is never inferred from the ordinal position of a classification.
    """

    allowed_classifications: tuple[str, ...]
    denied_artifacts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "allowed_classifications",
            _sorted_unique(self.allowed_classifications, "allowed_classifications"),
        )
        object.__setattr__(
            self, "denied_artifacts", _sorted_unique(self.denied_artifacts, "denied_artifacts")
        )

    def permits(self, artifact_id: str, classification: str) -> bool:
        """True when the actor may receive this artifact's text."""
        return (
            classification in self.allowed_classifications
            and artifact_id not in self.denied_artifacts
        )

    def to_json(self) -> dict[str, Any]:
        """The policy as JSON (the form that is hashed and stored in a commit)."""
        return {
            "allowed_classifications": list(self.allowed_classifications),
            "denied_artifacts": list(self.denied_artifacts),
        }

    def digest(self) -> str:
        """BLAKE3 of the RFC 8785 JSON of the policy (with its schema name)."""
        return blake3_json({"schema": POLICY_SCHEMA, **self.to_json()})

    @classmethod
    def from_json(cls, value: Any, *, where: str = "policy") -> Policy:
        """Read a policy object ``{allowed_classifications, denied_artifacts}``."""
        if not isinstance(value, dict) or set(value) != {
            "allowed_classifications", "denied_artifacts"
        }:
            raise InputError(
                f"{where}: expected an object with exactly allowed_classifications and "
                f"denied_artifacts, got {value!r}"
            )
        allowed, denied = value["allowed_classifications"], value["denied_artifacts"]
        if not isinstance(allowed, list) or not isinstance(denied, list):
            raise InputError(f"{where}: expected arrays of strings")
        return cls(tuple(allowed), tuple(denied))

    def resolved_for(self, corpus: Corpus) -> Policy:
        """This policy with every name bound to ``corpus`` (see the module docstring).

        Allowed classifications must be ECEB classifications (or ones the corpus uses),
        matched case-insensitively, and at least one must be a classification the corpus
        holds; each denied entry must name an artifact id, a file or a directory of the
        corpus. Anything else is an InputError naming the entry (exit 2).
        """
        from ctxbench.protocols.eceb.records import CLASSIFICATIONS

        used = {a.classification for a in corpus.artifacts}
        known = tuple(sorted(set(CLASSIFICATIONS) | used))
        allowed = tuple(_classification(value, known) for value in self.allowed_classifications)
        if corpus.artifacts and not used & set(allowed):
            raise InputError(
                f"policy: allowed_classifications: expected at least one classification the "
                f"corpus holds ({', '.join(sorted(used))}), got {', '.join(allowed)}")
        denied: set[str] = set()
        for value in self.denied_artifacts:
            denied.update(_denied(value, corpus))
        return Policy(allowed, tuple(denied))

    @classmethod
    def from_task(cls, task: Any) -> Policy:
        """The policy an ECEB task declares (its allow-list and its denied artifacts)."""
        return cls(tuple(task.allowed_classifications), tuple(task.denied_artifacts))


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _fold(text: str) -> str:
    return _nfc(text).casefold()


def _suggest(value: str, choices: Iterable[str]) -> str:
    import difflib  # only on an error path; not worth its import on every start

    close = difflib.get_close_matches(value, list(choices), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _classification(value: str, known: tuple[str, ...]) -> str:
    folded = _fold(value.strip())
    for name in known:
        if _fold(name) == folded:
            return name
    raise InputError(
        f"policy: allowed_classifications: expected one of {', '.join(known)}, got "
        f"{describe_value(value)}{_suggest(folded, known)}")


def _relative_forms(value: str, root: Path) -> list[str]:
    """Corpus-relative spellings ``value`` may stand for (best first), NFC-normalised."""
    text = _nfc(value)
    forms: list[str] = []
    for candidate in (text, text.strip()):
        if os.path.isabs(candidate) or candidate.startswith("~"):
            full = os.path.expanduser(candidate)
        else:
            rel = posixpath.normpath(candidate.replace(os.sep, "/"))
            if rel not in (".", "") and not rel.startswith("../") and rel != "..":
                forms.append(rel)
            full = os.path.abspath(candidate)  # relative to the working directory
        for base, target in ((os.path.abspath(root), os.path.normpath(full)),
                             (os.path.realpath(root), os.path.realpath(full))):
            inside = os.path.relpath(target, base)
            if inside != "." and not inside.startswith(".."):
                forms.append(_nfc(inside.replace(os.sep, "/")))
    return list(dict.fromkeys(forms))


def _denied(value: str, corpus: Corpus) -> tuple[str, ...]:
    """The artifact ids one denied entry names; InputError when it names none or is ambiguous."""
    ids = [a.artifact_id for a in corpus.artifacts]
    paths = {a.artifact_id: _nfc(a.path) for a in corpus.artifacts}
    forms = _relative_forms(value, corpus.root)
    shown = describe_value(value)
    # Exact: an artifact id, a path or a directory of the corpus. Every reading of the
    # entry (corpus-relative, relative to the working directory) is denied at once.
    exact = [i for i in ids for form in forms
             if _nfc(i) == form or paths[i] == form or paths[i].startswith(form + "/")]
    if exact:
        bare = [f for f in forms if "/" not in f]
        for form in bare:
            # "A.md" is both the root file and the name of d/A.md: which one was meant is
            # not known, so the entry is refused rather than guessed (fail-closed).
            named = [i for i in ids if _fold(paths[i].rsplit("/", 1)[-1]) == _fold(form)]
            if len(named) > 1:
                raise _ambiguous(shown, named, paths, "share this file name")
        return tuple(dict.fromkeys(exact))
    for form in forms:  # case-insensitive: one file, or one directory's files
        folded = _fold(form)
        if "/" not in form:
            # "a.md" folds to the root file "A.md" and is also the name of d/a.md: which
            # one was meant is not known, so the entry is refused (fail-closed).
            named = [i for i in ids if _fold(paths[i].rsplit("/", 1)[-1]) == folded]
            if len(named) > 1:
                raise _ambiguous(shown, named, paths, "share this file name")
        files = [i for i in ids if _fold(i) == folded or _fold(paths[i]) == folded]
        if len(files) > 1:
            raise _ambiguous(shown, files, paths, "differ only in case")
        if files:
            return tuple(files)
        under = [i for i in ids if _fold(paths[i]).startswith(folded + "/")]
        dirs = {paths[i][: len(form)] for i in under}
        if len(dirs) > 1:
            raise _ambiguous(shown, under, paths, "lie in directories that differ only in case")
        if under:
            return tuple(under)
    for form in forms:  # a bare file name: the one file of that name
        if "/" in form:
            continue
        named = [i for i in ids if _fold(paths[i].rsplit("/", 1)[-1]) == _fold(form)]
        if len(named) > 1:
            raise _ambiguous(shown, named, paths, "share this file name")
        if named:
            return tuple(named)
    skipped = _skipped_entry(forms, corpus, paths)
    if skipped is not None:
        return skipped
    choices = [*ids, *(p.rsplit("/", 1)[-1] for p in paths.values())]
    hint = _suggest(forms[0] if forms else _nfc(value).strip(), choices)
    raise InputError(
        f"policy: denied_artifacts: expected an artifact of the corpus (its id, its path, a "
        f"path inside the corpus or a unique file name), got {shown}{hint}")


def _skipped_entry(forms: list[str], corpus: Corpus, paths: dict[str, str]
                   ) -> tuple[str, ...] | None:
    """For an entry that exists but is never read (hidden, a link, a special file): the
    artifacts a link points at, and those that are the same file (a hard link) as a
    hidden file, or a file under a hidden directory, it names (denied too, fail-closed);
    else nothing to deny."""
    root = corpus.root
    real_root = Path(os.path.realpath(root))
    by_path = {path: artifact_id for artifact_id, path in paths.items()}
    for form in forms:
        entry = root / form
        if not os.path.lexists(entry):
            continue
        target = Path(os.path.realpath(entry))
        if target.is_relative_to(real_root):
            inside = _nfc(target.relative_to(real_root).as_posix())
            hit = [i for p, i in by_path.items() if p == inside or p.startswith(inside + "/")]
            if hit:
                return tuple(hit)
        return _same_files(entry, corpus)
    return None


def _same_files(entry: Path, corpus: Corpus) -> tuple[str, ...]:
    """Artifacts that are the same file (device and inode) as, or hold the same bytes as,
    ``entry`` or a regular file under it (a directory is walked without following links;
    a link to a file stands for that file)."""
    import stat

    from ctxbench.protocols.eceb.files import hash_regular_file

    if entry.is_dir() and not entry.is_symlink():
        files = [Path(folder, name) for folder, _, names in os.walk(entry) for name in names]
    else:
        files = [entry]
    identities: set[tuple[int, int]] = set()
    digests: set[str] = set()
    for path in files:
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            identities.add((info.st_dev, info.st_ino))
            digests.add(hash_regular_file(Path(os.path.realpath(path)), str(path))[0])
        except (OSError, InputError):
            continue  # unreadable: nothing of it can be in the corpus's text either
    return tuple(a.artifact_id for a in corpus.artifacts
                 if a.identity in identities or a.blake3 in digests)


def _ambiguous(shown: str, matches: list[str], paths: dict[str, str], what: str) -> InputError:
    listed = ", ".join(repr(paths[i]) for i in sorted(matches)[:5])
    more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
    return InputError(
        f"policy: denied_artifacts: expected one artifact or directory, got {shown}, which "
        f"matches several that {what}: {listed}{more}; give the exact path")
