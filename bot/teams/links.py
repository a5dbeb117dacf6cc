"""Signed, expiring download links for an answer's CSV and chart (`/files/<token>`).

Teams has no file upload for bots in channels, so the bot serves the files itself. A link names
what it is for — the CSV or the chart of one answer (its trace id), for one person in one place —
and until when; an HMAC signs it. The link is not the permission: opening it runs the stored SQL
again through `Askbase.rerun` as that person in that place (files.py), so access rules as they are
*now* apply, and every download is in the audit log. Anyone holding an unexpired link can fetch
what its person may see, the way anyone in a channel sees the answer; the expiry bounds that. A
CSV link is handed to the person who pressed CSV alone and expires (`teams.link_ttl_s`); a chart
link sits in the answer card itself, for everyone in the conversation, so it lives as long as the
answer does (`ttl_s=None`: it never expires; it stops working when the answer is no longer kept).

The key is `teams.link_secret`, else derived from the bot's client secret, else (local, anonymous
mode) a random key kept in the var directory — so a web process and a worker on the same settings
sign and check alike.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.access import Principal
from core.settings import Settings

Kind = Literal["csv", "png"]
KEY_FILE = "teams-link.key"
SIG_BYTES = 18


class BadLink(Exception):
    """The link is malformed, forged, or expired; the message says which, for the person."""


@dataclass(frozen=True)
class Link:
    kind: Kind
    trace_id: str
    user: str | None
    channel: str | None
    team: str | None
    expires: int  # unix seconds; 0: never (a chart shown in its answer's card)

    @property
    def principal(self) -> Principal:
        return Principal.teams(user=self.user, channel=self.channel, team=self.team)

    @property
    def expires_at(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.expires, dt.UTC)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signing_key(settings: Settings) -> bytes:
    teams = settings.teams
    if teams.link_secret is not None and teams.link_secret.get_secret_value():
        return hashlib.sha256(teams.link_secret.get_secret_value().encode()).digest()
    if teams.app_password is not None and teams.app_password.get_secret_value():
        return hmac.new(
            b"askbase-teams-links", teams.app_password.get_secret_value().encode(), "sha256"
        ).digest()
    path = Path(settings.var_dir) / KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
        except FileExistsError:  # another process made it first
            pass
    return bytes.fromhex(path.read_text().strip())


def sign(key: bytes, link: Link) -> str:
    payload = json.dumps(
        {
            "k": link.kind,
            "t": link.trace_id,
            "u": link.user,
            "c": link.channel,
            "m": link.team,
            "e": link.expires,
        },
        separators=(",", ":"),
    ).encode()
    signature = hmac.new(key, payload, "sha256").digest()[:SIG_BYTES]
    return f"{_b64(payload)}.{_b64(signature)}"


def issue(
    key: bytes, kind: Kind, trace_id: str, who: Principal, ttl_s: int | None, now: dt.datetime | None = None
) -> tuple[str, Link]:
    """A signed link; `ttl_s` None: one that does not expire (it lives as long as its answer)."""
    moment = now or dt.datetime.now(dt.UTC)
    expires = 0 if ttl_s is None else int(moment.timestamp()) + max(1, ttl_s)
    link = Link(kind, trace_id, who.user, who.channel, who.team, expires)
    return sign(key, link), link


def verify(key: bytes, token: str, now: dt.datetime | None = None) -> Link:
    """The link a token stands for; BadLink when it is not ours or no longer valid."""
    try:
        payload_text, signature_text = token.split(".", 1)
        payload, signature = _unb64(payload_text), _unb64(signature_text)
    except (ValueError, binascii.Error):
        raise BadLink("This link is not valid.") from None
    expected = hmac.new(key, payload, "sha256").digest()[:SIG_BYTES]
    if not hmac.compare_digest(signature, expected):
        raise BadLink("This link is not valid.")
    try:
        data = json.loads(payload)
        link = Link(
            kind="png" if data["k"] == "png" else "csv",
            trace_id=str(data["t"]),
            user=data.get("u"),
            channel=data.get("c"),
            team=data.get("m"),
            expires=int(data["e"]),
        )
    except (ValueError, KeyError, TypeError):
        raise BadLink("This link is not valid.") from None
    if link.expires and (now or dt.datetime.now(dt.UTC)).timestamp() > link.expires:
        raise BadLink("This link has expired. Press CSV under the answer in Teams for a new one.")
    return link


def url(base: str, token: str) -> str:
    return f"{base.rstrip('/')}/files/{token}"
