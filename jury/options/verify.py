"""``jury.verify``'s options (``jury verify``'s, less the verdict files: its arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.options import Flag, OneOrMany, Options


class VerifyOptions(Options):
    """What ``jury.verify`` can be asked: which keys every file must be signed by, and whether the
    table shows only the files that fail."""

    quiet: Annotated[bool, Flag(flags=("--quiet", "-q"))] = False
    """Print only the files that fail."""
    trusted_key: Annotated[OneOrMany[Path], Flag(flags=("--trusted-key",), metavar="PUB")] = []
    """OpenSSH ed25519 public key or allowed_signers file (repeatable): every file must carry a valid
    <file>.sig by one of these keys."""
