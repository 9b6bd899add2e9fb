"""What every command that writes a verdict file does once it is locked and written:
say which jurors' cost is unknown, and sign it when asked (--sign)."""

from __future__ import annotations

from pathlib import Path

import typer

SIGN_HELP = (
    "Ed25519 private key (OpenSSH or PEM, e.g. ~/.ssh/id_ed25519): after the verdict file is locked, "
    "write a detached SSH signature beside it (<file>.sig; check with jury verify --trusted-key)."
)


def sign_option():
    return typer.Option(None, "--sign", metavar="KEYFILE", help=SIGN_HELP)


def signer_for(key: Path | None):
    """Load the signing key before any work, so a bad key fails before a call is paid for."""
    if key is None:
        return None
    from jury.verdicts.signing import load_signer

    return load_signer(key)


def unpriced_lines(path: Path | None) -> list[str]:
    """Lines naming the juror models litellm could not price in a written verdict file."""
    if path is None:
        return []
    from jury.verdicts.lock import load_locked

    doc = load_locked(path)
    unpriced = doc.totals.unpriced_models or []
    if not unpriced:
        return []
    unknown = sorted(m for m, c in (doc.summary.get("cost_by_model") or {}).items() if c is None)
    return [
        f"cost unknown: litellm has no price for {', '.join(unpriced)}; the file's totals.cost_usd "
        f"(${doc.totals.cost_usd:.4f}) leaves their calls out"
        + (f", and the cost for {', '.join(unknown)} is unknown" if unknown else "")
    ]


def missing_schema(cfg, output: Path | None) -> Path | None:
    """The schema/ folder a verdict file written to ``output`` names (beside it), when it is not
    there yet: writing the file writes it, and after_write says so."""
    from jury.verdicts.assemble import verdicts_dir

    folder = verdicts_dir(cfg, output) / "schema"
    return None if folder.exists() else folder


def after_write(console, path: Path | None, signer=None, new_schema: Path | None = None) -> None:
    """Say where the file's JSON Schemas went when writing it made their folder (``new_schema``,
    from missing_schema), report unpriced jurors of the written (or reused) file, then sign it
    if asked."""
    if new_schema is not None and path is not None and new_schema.is_dir():
        console.print(f"wrote {new_schema}/ beside {path}: the JSON Schemas its $schema names", highlight=False, markup=False)
    for line in unpriced_lines(path):
        console.print(f"[yellow]{line}[/]", highlight=False)
    if signer is None or path is None:
        return
    from jury.verdicts.signing import sign_file

    sig_path, written = sign_file(path, signer)
    if written:
        console.print(f"signed {path}: {sig_path} (key {signer.fingerprint})", highlight=False)
    else:
        console.print(f"{path} was already signed by this key: {sig_path} kept", highlight=False)
