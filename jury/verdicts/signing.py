"""Detached signatures of verdict files, in OpenSSH's SSHSIG format (``ssh-keygen -Y sign``).

The lock (``content_sha256``) catches accidents, not edits: anyone can flip a verdict and
recompute it. A signature proves who locked a file. ``jury adjudicate|audit-gold|reaudit
--sign KEY`` writes ``<file>.sig`` beside the verdict file once it is locked and written;
``jury verify --trusted-key PUB`` checks it.

What is signed: the verdict file's exact bytes (as written; the lock's canonical JSON is
inside them), hashed with SHA-512 under the namespace ``jury-verdict``. So the signature
interoperates with OpenSSH both ways::

    ssh-keygen -Y sign -f ~/.ssh/id_ed25519 -n jury-verdict verdicts/adj.json    # writes adj.json.sig
    ssh-keygen -Y verify -f allowed_signers -I me -n jury-verdict -s verdicts/adj.json.sig < verdicts/adj.json

Keys: Ed25519 (``ssh-keygen -t ed25519``), private keys in OpenSSH or PEM (PKCS#8) form;
a passphrase-protected key reads its passphrase from ``JURY_SIGN_PASSPHRASE``. Trusted
keys are OpenSSH public key lines (``ssh-ed25519 AAAA... comment``, as in ``id_ed25519.pub``,
``authorized_keys`` or an ``allowed_signers`` file). The wire format (PROTOCOL.sshsig in
OpenSSH) is implemented here over ``cryptography``'s Ed25519; the trusted-key lines and their
allowed_signers options are read by jury.verdicts.allowed_signers. ``cryptography`` comes with
the [sign] extra (``pip install 'jury-sql[sign]'``): without it, signing or checking a signature is
one line naming that command, and a file with no signature still verifies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jury.errors import InputError, JuryError, SignatureError, extra_imports
from jury.inputs.reader import open_input
from jury.verdicts.allowed_signers import TrustedKey, key_line, parse_options

if TYPE_CHECKING:  # cryptography (the [sign] extra) is imported lazily, only when signing or checking a signature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

NAMESPACE = "jury-verdict"
SIG_SUFFIX = ".sig"
PASSPHRASE_ENV = "JURY_SIGN_PASSPHRASE"
_MAGIC = b"SSHSIG"
_VERSION = 1
_HASH = "sha512"
_KEY_TYPE = "ssh-ed25519"
_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_END = "-----END SSH SIGNATURE-----"
# cryptography comes with the [sign] extra: (module, extra, what needs it)
SIGNING = ("cryptography", "sign", "signing")
CHECKING = ("cryptography", "sign", "checking signatures")
MAX_KEY_BYTES = 1 << 20
"""The largest signature, private key or trusted-key file read (real ones are a few KiB)."""


def read_bounded(path: Path, cap: int) -> bytes:
    """The bytes of a regular file of at most ``cap`` bytes, through jury's one bounded reader
    (`jury.inputs.reader.open_input`: opened without blocking, checked as a regular file inside
    its own folder, so /dev/zero, a FIFO or a link out of the folder is refused before a byte is
    read); a larger file is refused by its size. OSError (FileNotFoundError...) passes through;
    anything else is a ValueError saying why."""
    try:
        fh = open_input(path, os_errors=True)
    except JuryError as exc:
        raise ValueError(str(exc).removeprefix(f"{path}: ")) from None
    with fh:
        info = os.fstat(fh.fileno())
        if info.st_size > cap:
            raise ValueError(f"is {info.st_size} bytes, larger than the {_size(cap)} limit")
        data = fh.read(cap + 1)
    if len(data) > cap:  # it grew while being read
        raise ValueError(f"is larger than the {_size(cap)} limit")
    return data


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


# ------------------------------------------------------------------ SSH wire format


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def uint32(self) -> int:
        (value,) = struct.unpack(">I", self.raw(4))
        return int(value)

    def string(self) -> bytes:
        return self.raw(self.uint32())

    def done(self) -> bool:
        return self.pos == len(self.data)


def _public_blob(raw_key: bytes) -> bytes:
    return _string(_KEY_TYPE.encode()) + _string(raw_key)


def fingerprint(blob: bytes) -> str:
    """OpenSSH's fingerprint of a public key blob: ``SHA256:<base64, no padding>``."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _signed_data(message: bytes, namespace: str = NAMESPACE, hash_algorithm: str = _HASH) -> bytes:
    """What the key actually signs (PROTOCOL.sshsig): preamble, namespace, hash of the message."""
    return (
        _MAGIC
        + _string(namespace.encode())
        + _string(b"")
        + _string(hash_algorithm.encode())
        + _string(hashlib.new(hash_algorithm, message).digest())
    )


def _armor(blob: bytes) -> str:
    b64 = base64.b64encode(blob).decode()
    return "\n".join([_BEGIN, *(b64[i : i + 70] for i in range(0, len(b64), 70)), _END]) + "\n"


def _dearmor(text: str) -> bytes:
    lines = [x.strip() for x in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != _BEGIN or lines[-1] != _END:
        raise ValueError("not an armored SSH signature")
    try:
        return base64.b64decode("".join(lines[1:-1]), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"bad base64: {exc}") from None


@dataclass(frozen=True)
class Signature:
    """A parsed SSHSIG signature: the signer's public key blob and the raw Ed25519 signature."""

    public_blob: bytes
    namespace: str
    hash_algorithm: str
    key_type: str
    raw_signature: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_blob)


def parse_signature(text: str) -> Signature:
    """Parse an armored SSHSIG signature; ValueError says why it is not one."""
    r = _Reader(_dearmor(text))
    if r.raw(6) != _MAGIC:
        raise ValueError("no SSHSIG preamble")
    version = r.uint32()
    if version != _VERSION:
        raise ValueError(f"unsupported SSHSIG version {version}")
    public_blob, namespace, _reserved, hash_alg, sig_blob = r.string(), r.string(), r.string(), r.string(), r.string()
    if not r.done():
        raise ValueError("trailing bytes")
    s = _Reader(sig_blob)
    key_type = s.string().decode("ascii", "replace")
    raw_sig = s.string()
    return Signature(public_blob, namespace.decode("utf-8", "replace"), hash_alg.decode("ascii", "replace"), key_type, raw_sig)


def _ed25519_public(blob: bytes) -> Ed25519PublicKey:
    with extra_imports(*CHECKING):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    r = _Reader(blob)
    key_type = r.string().decode("ascii", "replace")
    if key_type != _KEY_TYPE:
        raise ValueError(f"key type {key_type} is not supported (only {_KEY_TYPE})")
    raw = r.string()
    if len(raw) != 32 or not r.done():
        raise ValueError("malformed ssh-ed25519 public key")
    return Ed25519PublicKey.from_public_bytes(raw)


def verify_bytes(message: bytes, sig: Signature) -> bool:
    """Does ``sig`` sign ``message`` under jury's namespace with the key it names?"""
    with extra_imports(*CHECKING):
        from cryptography.exceptions import InvalidSignature

    if sig.namespace != NAMESPACE or sig.key_type != _KEY_TYPE or sig.hash_algorithm not in ("sha512", "sha256"):
        return False
    try:
        _ed25519_public(sig.public_blob).verify(sig.raw_signature, _signed_data(message, sig.namespace, sig.hash_algorithm))
    except (InvalidSignature, ValueError):
        return False
    return True


# ------------------------------------------------------------------ keys


@dataclass(frozen=True)
class Signer:
    """A loaded Ed25519 private key and where it came from."""

    path: Path
    key: Ed25519PrivateKey

    @property
    def public_blob(self) -> bytes:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        return _public_blob(self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_blob)

    def sign(self, message: bytes) -> str:
        """The armored SSHSIG signature of ``message`` (what ``ssh-keygen -Y sign`` writes)."""
        raw = self.key.sign(_signed_data(message))
        blob = (
            _MAGIC
            + struct.pack(">I", _VERSION)
            + _string(self.public_blob)
            + _string(NAMESPACE.encode())
            + _string(b"")
            + _string(_HASH.encode())
            + _string(_string(_KEY_TYPE.encode()) + _string(raw))
        )
        return _armor(blob)


def load_signer(path: str | Path) -> Signer:
    """Load an Ed25519 private key (OpenSSH or PEM); a one-line InputError when it cannot be used."""
    with extra_imports(*SIGNING):
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_ssh_private_key

    p = Path(path)
    try:
        data = read_bounded(p, MAX_KEY_BYTES)
    except FileNotFoundError:
        raise InputError(f"{p}: no such signing key file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read the signing key: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{p}: the signing key file {exc}") from None
    passphrase = os.environ.get(PASSPHRASE_ENV)
    password = passphrase.encode() if passphrase else None
    loader = load_ssh_private_key if b"BEGIN OPENSSH PRIVATE KEY" in data else load_pem_private_key
    try:
        key = loader(data, password=password)
    except TypeError:  # encrypted without a password, or a password for an unencrypted key
        if password is None:
            raise InputError(f"{p}: the signing key is passphrase-protected: set {PASSPHRASE_ENV}") from None
        raise InputError(f"{p}: the signing key is not passphrase-protected: unset {PASSPHRASE_ENV}") from None
    except ValueError as exc:
        msg = str(exc)
        if password is not None and ("password" in msg.lower() or "decrypt" in msg.lower()):
            raise InputError(f"{p}: wrong passphrase for the signing key ({PASSPHRASE_ENV})") from None
        raise InputError(f"{p}: not a private key in OpenSSH or PEM form") from None
    except UnsupportedAlgorithm:  # an encrypted OpenSSH key needs bcrypt, which jury does not depend on
        raise InputError(
            f"{p}: reading a passphrase-protected OpenSSH key needs the bcrypt package "
            f"(pip install bcrypt); or sign with: ssh-keygen -Y sign -n {NAMESPACE} -f KEY FILE"
        ) from None
    except Exception as exc:
        raise InputError(f"{p}: not a usable private key ({type(exc).__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(
            f"{p}: is a {type(key).__name__.removeprefix('_').replace('PrivateKey', '')} key; "
            "jury signs with Ed25519 keys only (ssh-keygen -t ed25519)"
        )
    return Signer(p, key)


def load_trusted_keys(paths: Iterable[str | Path]) -> dict[str, list[TrustedKey]]:
    """{fingerprint: the lines trusting it} for every ssh-ed25519 key in the files: OpenSSH
    public key lines (``ssh-ed25519 AAAA... comment``) or allowed_signers lines (``principals
    [options] ssh-ed25519 AAAA...``), whose options limit the key as ``ssh-keygen -Y verify``
    does ('#' comments and other key types are skipped). A file with no ed25519 key, or a line
    with options OpenSSH would refuse, is an error."""
    out: dict[str, list[TrustedKey]] = {}
    for path in paths:
        p = Path(path)
        try:
            text = read_bounded(p, MAX_KEY_BYTES).decode("utf-8")
        except FileNotFoundError:
            raise InputError(f"{p}: no such trusted key file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{p}: cannot read the trusted key file: {getattr(exc, 'strerror', None) or exc}") from None
        except ValueError as exc:
            raise InputError(f"{p}: the trusted key file {exc}") from None
        found = 0
        for n, line in enumerate(text.splitlines(), 1):
            words = line.split()
            if not words or words[0].startswith("#") or _KEY_TYPE not in line:
                continue
            parsed = key_line(line, _KEY_TYPE)
            if parsed is None:
                continue
            principals, options, _kind, b64 = parsed
            if not b64:
                raise InputError(f"{p}:{n}: {_KEY_TYPE} with no key after it")
            try:
                blob = base64.b64decode(b64, validate=True)
                _ed25519_public(blob)
            except (binascii.Error, ValueError) as exc:
                raise InputError(f"{p}:{n}: not a valid {_KEY_TYPE} public key ({exc})") from None
            try:
                opts = parse_options(options)
            except ValueError as exc:
                raise InputError(f"{p}:{n}: bad allowed_signers options: {exc}") from None
            out.setdefault(fingerprint(blob), []).append(TrustedKey(f"{p}:{n}", principals, **opts))
            found += 1
        if not found:
            raise InputError(
                f"{p}: no {_KEY_TYPE} public key in the file (expected a line like "
                f"'{_KEY_TYPE} AAAA... comment', as in id_ed25519.pub)"
            )
    return out


# ------------------------------------------------------------------ files


def signature_path(path: str | Path) -> Path:
    p = Path(path)
    return p.with_name(p.name + SIG_SUFFIX)


def _read_signature(sig_path: Path) -> Signature:
    try:
        data = read_bounded(sig_path, MAX_KEY_BYTES)
    except OSError as exc:
        raise SignatureError(f"{sig_path}: cannot read the signature: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SignatureError(f"{sig_path}: {exc}; a signature is a small text file") from None
    try:
        return parse_signature(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SignatureError(f"{sig_path}: not a readable SSH signature ({exc})") from None


def _file_bytes(p: Path) -> bytes:
    """The signed file's bytes, bounded like every input file jury reads."""
    from jury.inputs.io import MAX_INPUT_BYTES

    try:
        return read_bounded(p, MAX_INPUT_BYTES)
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{p}: {exc}") from None


def _check_locked(p: Path) -> None:
    """A verdict or review file whose lock and rules hold (what jury locked), else VerdictError."""
    from jury.verdicts.lock import load_locked, read_verdict_json
    from jury.vocab import REVIEW_KIND

    data = read_verdict_json(p)
    if isinstance(data, dict) and data.get("kind") == REVIEW_KIND:
        from jury.verdicts.review import load_review

        load_review(p)
    else:
        load_locked(p)


def sign_file(path: str | Path, signer: Signer) -> tuple[Path, bool]:
    """Sign a locked verdict file: write ``<file>.sig``; (its path, True if written now).

    The file's lock is checked first: only a locked, unchanged file is signed. An existing
    signature is never replaced: one by this key over these bytes is kept (False); any
    other (another key, or not valid for the file) is an error naming both files.
    """
    from jury.inputs.writer import write_new

    p = Path(path)
    _check_locked(p)  # the lock holds: sign only what jury locked
    message = _file_bytes(p)
    sig_path = signature_path(p)
    if sig_path.exists() or sig_path.is_symlink():
        existing = _read_signature(sig_path)
        if existing.public_blob == signer.public_blob and verify_bytes(message, existing):
            return sig_path, False
        why = (
            "is not a valid signature of it"
            if not verify_bytes(message, existing)
            else f"signs it with another key ({existing.fingerprint})"
        )
        raise SignatureError(f"{sig_path}: already exists and {why}; it is not overwritten (move it away to sign again)")
    try:
        write_new(sig_path, signer.sign(message))  # never replaces a signature written meanwhile
    except FileExistsError:
        raise SignatureError(f"{sig_path}: appeared while signing; it is not overwritten") from None
    return sig_path, True


def check_file_signature(path: str | Path, trusted: dict[str, list[TrustedKey]] | None) -> tuple[bool, str]:
    """(ok, what to say) about ``<path>.sig``.

    With trusted keys (``trusted`` non-empty): a missing signature, an invalid one, one by an
    untrusted key, or by a key whose trusted-key lines do not allow it (allowed_signers
    options: namespaces, valid-after, valid-before, cert-authority, as ``ssh-keygen -Y
    verify`` reads them) is not ok. Without: no signature is fine (says nothing), a valid one
    names its key's fingerprint, an invalid one is not ok (the file changed after it was signed).
    """
    p = Path(path)
    sig_path = signature_path(p)
    if not sig_path.exists() and not sig_path.is_symlink():
        if trusted:
            return False, f"no signature ({sig_path.name} is missing) but --trusted-key requires one"
        return True, ""
    try:
        sig = _read_signature(sig_path)
        message = _file_bytes(p)
    except JuryError as exc:
        return False, f"{sig_path.name}: " + str(exc).removeprefix(f"{sig_path}: ")
    if sig.namespace != NAMESPACE:
        return False, f"{sig_path.name}: signature namespace is {sig.namespace!r}, not {NAMESPACE!r}"
    if not verify_bytes(message, sig):
        return False, f"{sig_path.name}: invalid signature: the file is not what key {sig.fingerprint} signed"
    if trusted:
        lines = trusted.get(sig.fingerprint)
        if not lines:
            return False, f"signed by {sig.fingerprint}, which is not a trusted key"
        now = time.time()
        refusals = [r for line in lines if (r := line.refusal(NAMESPACE, now)) is not None]
        allowed = [line for line in lines if line.refusal(NAMESPACE, now) is None]
        if not allowed:
            return False, f"signed by {sig.fingerprint}, but its trusted-key lines do not allow it: {'; '.join(refusals)}"
        who = f", principals {allowed[0].principals}" if allowed[0].principals else ""
        return True, f"signed by trusted key {sig.fingerprint} ({allowed[0].where}{who})"
    return True, f"signed by {sig.fingerprint} (not checked against a trusted key)"


def signature_label(path: str | Path, trusted: dict[str, list[TrustedKey]] | None) -> tuple[bool, str]:
    """check_file_signature, worded for a file named beside another: "unsigned" when there is
    no signature and none is required."""
    ok, note = check_file_signature(path, trusted)
    return ok, note or "unsigned"
