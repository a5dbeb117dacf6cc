"""Who may call `/api/messages`: the SDK's JWT validation of the Bot Connector's tokens.

The Microsoft 365 Agents SDK checks the token (signature against the issuer's published keys,
RS256, expiry with 5 minutes' leeway, audience = our app id, the tenant bound to the issuer) in
`JwtTokenValidator`. It finds the keys at the public clouds' fixed JWKS addresses; a deployment
elsewhere — a sovereign cloud, an Azure Bot Service emulator, the tests' local identity provider —
names its OpenID metadata document in `teams.openid_metadata_url`, and the validator then reads
the keys from that document's `jwks_uri`. Nothing else of the check changes.

Only `/api/messages` is guarded this way: the download links (`/files/<token>`) are opened by
people's browsers and Teams' image proxy, which carry no Bot Connector token; they carry their own
signature instead (links.py).
"""

from __future__ import annotations

import json
import logging
import urllib.request
from typing import Any

from jwt import PyJWTError
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration, ClaimsIdentity
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator
from microsoft_agents.hosting.core.authorization.jwt.jwt_token_validator import _JwkClientManager

log = logging.getLogger("askbase.teams.auth")


class Unauthorized(Exception):
    """The request carries no acceptable token (the reason is logged, never returned)."""


def jwks_uri_of(metadata_url: str, timeout_s: float = 10.0) -> str:
    """The `jwks_uri` an OpenID metadata document names."""
    with urllib.request.urlopen(metadata_url, timeout=timeout_s) as response:
        document: dict[str, Any] = json.loads(response.read().decode("utf-8"))
    uri = document.get("jwks_uri")
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"{metadata_url} names no jwks_uri")
    return uri


class _KeysAt(_JwkClientManager):
    """The SDK's cached key client, pointed at one JWKS address whatever the issuer."""

    def __init__(self, metadata_url: str) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # the SDK leaves its __init__ unannotated
        self._metadata_url = metadata_url
        self._jwks_uri: str | None = None

    def _get_jwk_client(self, jwks_uri: str) -> Any:
        if self._jwks_uri is None:
            self._jwks_uri = jwks_uri_of(self._metadata_url)
        return super()._get_jwk_client(self._jwks_uri)


class TokenValidator(JwtTokenValidator):
    """The SDK's validator; with `metadata_url`, the keys come from that document."""

    def __init__(self, configuration: AgentAuthConfiguration, metadata_url: str | None = None) -> None:
        super().__init__(configuration)
        if metadata_url:
            self._jwk_client_manager = _KeysAt(metadata_url)


async def authorize(
    header: str | None, configuration: AgentAuthConfiguration, validator: TokenValidator
) -> ClaimsIdentity:
    """The caller's identity from its `Authorization` header; Unauthorized when not acceptable.

    Mirrors the SDK's own request check (`_authorize_request`): no header is allowed only in
    anonymous mode; anything else must be a valid `Bearer` token.
    """
    if not header:
        if configuration.ANONYMOUS_ALLOWED and not configuration.CLIENT_ID:
            return validator.get_anonymous_claims()
        raise Unauthorized("no Authorization header")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
        raise Unauthorized("malformed Authorization header")
    try:
        return await validator.validate_token(token)
    except (PyJWTError, ValueError, OSError, KeyError) as exc:
        log.warning("refused a request to /api/messages: %s", type(exc).__name__)
        raise Unauthorized(type(exc).__name__) from None
