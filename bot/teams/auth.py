"""Who may call `/api/messages`, and which of what they say Askbase believes.

A request is taken only when everything Askbase acts on was vouched for:

1. The token (the SDK's `JwtTokenValidator`): RS256 signature against the issuer's published keys,
   expiry with 5 minutes' leeway, an audience of our app id, an Entra token's `tid` bound to its
   issuer. Keys come from the public clouds' fixed JWKS addresses, or — for a sovereign cloud, an
   emulator, the tests' local identity provider — from the OpenID metadata document named in
   `teams.openid_metadata_url` (its `jwks_uri`).
2. The token's claims (`Trust.check_token`), as the Bot Framework's connector-to-bot rules and
   Entra's say (docs/teams.md cites them): the issuer is the Bot Framework's
   (`https://api.botframework.com`, or its US Government twin) or, for a single-tenant bot, the
   configured tenant's own Entra issuers (`https://login.microsoftonline.com/{tenant}/v2.0`,
   `https://sts.windows.net/{tenant}/`); an Entra token names our app id as its caller (`appid`
   in a v1.0 token, `azp` in a v2.0 one — the Bot Framework's emulator rule, so only a holder of
   our own credentials passes); a `tid`, when present, is the configured tenant.
3. The activity against the token (`Trust.check_activity`): its `serviceUrl` is exactly the one
   the token's `serviceurl` claim names (the Bot Framework's rule: the body is not signed, the
   token is) and is an allowed Bot Connector address (outbound.py); for a single-tenant bot its
   tenant (`conversation.tenantId`, `channelData.tenant.id`) is the configured one.

Anything else gets 401, before any outbound request is made — the typing indicator, the answer,
a membership lookup would all carry the bot's own token to that `serviceUrl`. The reason is
logged, never returned. In anonymous local mode there is no token: only step 3's allow list and
tenant apply (and replies carry no token).

Only `/api/messages` is guarded this way: the download links (`/files/<token>`) are opened by
people's browsers and Teams' image proxy, which carry no Bot Connector token; they carry their own
signature instead (links.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jwt import PyJWK, PyJWTError
from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration, ClaimsIdentity
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator
from microsoft_agents.hosting.core.authorization.jwt.jwt_token_validator import _JwkClientManager

from bot.teams.outbound import ServiceUrls
from core.settings import Settings

log = logging.getLogger("askbase.teams.auth")

# The Bot Connector's token issuers: the public cloud's and the US Government cloud's.
BOT_FRAMEWORK_ISSUERS = frozenset({"https://api.botframework.com", "https://api.botframework.us"})
MULTI_TENANT = frozenset({"common", "organizations"})  # Entra's meta-tenants: no single tenant to check


class Unauthorized(Exception):
    """The request carries no acceptable token, or claims what its token does not vouch for.

    The message says which check failed (for the log); it is never returned to the caller."""


def guid(value: Any) -> str | None:
    """`value` as a canonical GUID (lower case, hyphenated), or None when it is not one.

    Entra object, tenant and app ids are GUIDs: compared as GUIDs, whatever case a portal or a
    client writes them in, and never equal to anything that is not one."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) != 36:  # the hyphenated form only: no braces, no URNs, no 32-digit run
        return None
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


def same_id(a: Any, b: Any) -> bool:
    """Two app or tenant ids are the same: as GUIDs when both are, else exactly."""
    ga, gb = guid(a), guid(b)
    if ga is not None or gb is not None:
        return ga is not None and ga == gb
    return isinstance(a, str) and isinstance(b, str) and bool(a) and a == b


def tenant_of(settings: Settings) -> str | None:
    """The tenant a single-tenant bot serves (a GUID), or None for a multi-tenant bot."""
    raw = (settings.teams.tenant_id or "").strip()
    if not raw or raw.lower() in MULTI_TENANT:
        return None
    return guid(raw) or raw


def tenant_problem(settings: Settings) -> str | None:
    """A tenant Askbase could not compare activities with (a domain name instead of the id)."""
    tenant = tenant_of(settings)
    if tenant is not None and guid(tenant) is None:
        return (
            f"teams.tenant_id ({tenant!r}) must be the tenant's id, a GUID (Entra ID → Overview → "
            "Tenant ID), or 'common' for a multi-tenant bot: activities name their tenant by id."
        )
    return None


@dataclass(frozen=True)
class Trust:
    """What a request must show beyond a valid signature (module doc, steps 2 and 3)."""

    app_id: str | None
    tenant: str | None  # a single-tenant bot's tenant id (GUID); None: any tenant
    service_urls: ServiceUrls

    @classmethod
    def from_settings(cls, settings: Settings) -> Trust:
        return cls(
            app_id=(settings.teams.app_id or "").strip() or None,
            tenant=tenant_of(settings),
            service_urls=ServiceUrls.from_settings(settings),
        )

    @property
    def entra_issuers(self) -> frozenset[str]:
        """The configured tenant's Entra issuers (v2.0 and v1.0); none for a multi-tenant bot."""
        if self.tenant is None:
            return frozenset()
        return frozenset(
            {
                f"https://login.microsoftonline.com/{self.tenant}/v2.0",
                f"https://sts.windows.net/{self.tenant}/",
            }
        )

    def check_token(self, claims: Mapping[str, Any]) -> None:
        """Issuer, audience, caller and tenant of a token whose signature the SDK checked."""
        issuer = claims.get("iss")
        if not isinstance(issuer, str):
            raise Unauthorized("the token names no issuer")
        if not same_id(claims.get("aud"), self.app_id):
            raise Unauthorized("the token is not for this bot (aud)")
        if issuer in BOT_FRAMEWORK_ISSUERS:
            pass  # the Bot Connector: its audience is the app id; no appid/azp is specified
        elif issuer in self.entra_issuers:
            version = claims.get("ver") or "1.0"
            caller = {"1.0": "appid", "2.0": "azp"}.get(str(version))
            if caller is None:
                raise Unauthorized(f"unknown Entra token version {version!r}")
            if not same_id(claims.get(caller), self.app_id):
                raise Unauthorized(f"the Entra token's caller ({caller}) is not this bot")
        else:
            raise Unauthorized("the token's issuer is not the Bot Framework's or this tenant's")
        if self.tenant is not None and "tid" in claims and not same_id(claims.get("tid"), self.tenant):
            raise Unauthorized("the token is from another tenant (tid)")

    def check_activity(self, identity: ClaimsIdentity, activity: Activity) -> None:
        """The activity's serviceUrl and tenant, against the token and the settings."""
        service_url = activity.service_url
        if not identity.allow_anonymous:
            claimed = identity.get_claim_value("serviceurl")
            if not isinstance(claimed, str) or not claimed:
                raise Unauthorized("the token names no serviceurl")
            if service_url != claimed:
                raise Unauthorized("the activity's serviceUrl is not the one its token names")
        if not self.service_urls.admits(service_url):
            raise Unauthorized("the activity's serviceUrl is not an allowed Bot Connector address")
        if self.tenant is not None:
            named = activity_tenants(activity)
            if not named:
                raise Unauthorized("the activity names no tenant")
            if any(not same_id(t, self.tenant) for t in named):
                raise Unauthorized("the activity is from another tenant")


def activity_tenants(activity: Activity) -> list[Any]:
    """Every tenant id the activity states: `conversation.tenantId`, `channelData.tenant.id`."""
    found: list[Any] = []
    conversation_tenant = getattr(activity.conversation, "tenant_id", None) if activity.conversation else None
    if conversation_tenant is not None:
        found.append(conversation_tenant)
    data = activity.channel_data
    if isinstance(data, Mapping):
        tenant = data.get("tenant")
        if isinstance(tenant, Mapping) and tenant.get("id") is not None:
            found.append(tenant.get("id"))
        elif tenant is not None:
            found.append(tenant)  # not the shape Teams sends: compared, and so refused
    return found


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

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> PyJWK:
        if self._jwks_uri is None:  # read once, off the event loop (acks must not wait on it)
            self._jwks_uri = await asyncio.to_thread(jwks_uri_of, self._metadata_url)
        return await super().get_signing_key(self._jwks_uri, header)


class TokenValidator(JwtTokenValidator):
    """The SDK's validator; with `metadata_url`, the keys come from that document."""

    def __init__(self, configuration: AgentAuthConfiguration, metadata_url: str | None = None) -> None:
        super().__init__(configuration)
        if metadata_url:
            self._jwk_client_manager = _KeysAt(metadata_url)


async def authorize(
    header: str | None,
    configuration: AgentAuthConfiguration,
    validator: TokenValidator,
    trust: Trust,
) -> ClaimsIdentity:
    """The caller's identity from its `Authorization` header; Unauthorized when not acceptable.

    Mirrors the SDK's own request check (`_authorize_request`) — no header is allowed only in
    anonymous mode; anything else must be a valid `Bearer` token — then checks its claims.
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
        identity = await validator.validate_token(token)
    except (PyJWTError, ValueError, OSError, KeyError) as exc:
        raise Unauthorized(type(exc).__name__) from None
    trust.check_token(identity.claims)
    return identity
