"""Reading a source's files from a fetched bare git directory at a pinned commit, or from an
extracted tree: the part every converter shares (stdlib only).

Why: the converters read their raw data either from a ``fetch`` snapshot (a bare git dir, read
with ``git show`` / ``git ls-tree`` at the commit the recipe pins) or from a folder someone
extracted by hand; the git side is the same everywhere, the folder layout is each source's own.
"""

from __future__ import annotations

import os
import subprocess

__all__ = [
    "git_files",
    "git_names",
    "git_show",
    "git_show_bytes",
    "git_show_or_none",
    "is_git",
    "walk_files",
]


def is_git(raw: str) -> bool:
    """Whether ``raw`` is a git directory (bare) rather than an extracted tree."""
    return os.path.exists(os.path.join(raw, "HEAD")) or os.path.isdir(os.path.join(raw, "objects"))


def git_show_bytes(raw: str, commit: str, path: str) -> bytes:
    """The file ``path`` at ``commit``, as bytes (for ``json.loads``, which detects the encoding)."""
    return subprocess.run(
        ["git", f"--git-dir={raw}", "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def git_show(raw: str, commit: str, path: str) -> str:
    """The file ``path`` at ``commit``, as UTF-8 text."""
    return git_show_bytes(raw, commit, path).decode("utf-8")


def git_show_or_none(raw: str, commit: str, path: str) -> str | None:
    """The file ``path`` at ``commit`` as UTF-8 text, or None if git cannot show it (optional files)."""
    r = subprocess.run(["git", f"--git-dir={raw}", "show", f"{commit}:{path}"], capture_output=True)
    return r.stdout.decode("utf-8") if r.returncode == 0 else None


def git_files(raw: str, commit: str, base: str) -> list[str]:
    """Every file under ``base`` at ``commit``, as paths relative to ``base``."""
    out = subprocess.run(
        ["git", f"--git-dir={raw}", "ls-tree", "-r", "--name-only", commit, base],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    return [p[len(base) + 1 :] for p in out if p]


def git_names(raw: str, commit: str, folder: str) -> list[str]:
    """The names directly in ``folder`` at ``commit`` (files and subfolders, not recursive)."""
    out = subprocess.run(
        ["git", f"--git-dir={raw}", "ls-tree", f"{commit}:{folder}"],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8")
    return [line.split("\t", 1)[1] for line in out.splitlines()]


def walk_files(root: str) -> list[str]:
    """Every file under the folder ``root``, as ``/``-separated paths relative to it."""
    return [
        os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
        for d, _, fs in os.walk(root)
        for f in fs
    ]
