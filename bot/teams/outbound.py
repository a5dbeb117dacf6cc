"""Where Askbase's outbound requests to Teams may go, and the one place their token is attached.

Every reply, typing indicator, card update, proactive post and membership lookup goes to the
`serviceUrl` of an activity (or of a stored conversation reference), with the bot's own Entra
token in the `Authorization` header. That address arrives in the request body, which no signature
covers; a caller who could name it would receive the token and any answer (SSRF). So two walls:

1. auth.py accepts an activity only when its `serviceUrl` is exactly the one the Bot Connector's
   token names (its `serviceurl` claim) and is on the allow list below (`teams.service_url_hosts`);
   anything else is refused with 401 before a single outbound request is made.
2. `GuardedClientFactory`, the only maker of the SDK's connector clients (web process and worker
   alike, `cloud_adapter`), refuses a URL off the allow list before it asks MSAL for a token — so a
   stored reference written before this check, or a path not thought of, cannot leak it either.

An allow-list entry is `host` or `*.domain` (https, port 443, any path), or a URL prefix
`scheme://host[:port][/path/]` — how tests and emulators name a local Bot Connector
(`http://127.0.0.1:8767/`). URLs are read with yarl, the parser aiohttp itself sends with, so what
is checked is what is connected to.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import Connections, TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity
from microsoft_agents.hosting.core.connector import ConnectorClientBase
from microsoft_agents.hosting.core.connector.client import UserTokenClient
from microsoft_agents.hosting.core.rest_channel_service_client_factory import (
    RestChannelServiceClientFactory,
)
from yarl import URL

from core.settings import Settings

log = logging.getLogger("askbase.teams.outbound")

DEFAULT_PORTS = {"https": 443, "http": 80}


class OutboundRefused(PermissionError):
    """A URL the bot's requests (and its token) must not go to; the message names no secret."""


@dataclass(frozen=True)
class Origin:
    """One allow-list entry: a scheme, a host (or every subdomain of one), a port, a path prefix."""

    scheme: str
    host: str  # lower case; for a wildcard, the domain whose subdomains are allowed
    wildcard: bool
    port: int
    path: str  # "/" or a prefix ending in "/"

    @classmethod
    def parse(cls, entry: str) -> Origin:
        text = entry.strip()
        if "://" not in text:
            text = f"https://{text}"
        scheme, rest = text.split("://", 1)
        scheme = scheme.lower()
        authority, _, path = rest.partition("/")
        host, port_text = authority, ""
        if ":" in authority:
            host, _, port_text = authority.rpartition(":")
        host = host.lower()
        wildcard = host.startswith("*.")
        if wildcard:
            host = host[2:]
        if (
            scheme not in DEFAULT_PORTS
            or not host
            or any(c in host for c in "*@[]\\ ")
            or (port_text and not port_text.isdigit())
        ):
            raise ValueError(f"not a service URL allow-list entry: {entry!r}")
        prefix = "/" + path.strip("/")
        return cls(
            scheme=scheme,
            host=host,
            wildcard=wildcard,
            port=int(port_text) if port_text else DEFAULT_PORTS[scheme],
            path=prefix if prefix == "/" else prefix + "/",
        )

    def admits(self, url: URL) -> bool:
        host = url.host or ""
        host_ok = host.endswith("." + self.host) if self.wildcard else host == self.host
        path = url.path if url.path.endswith("/") else url.path + "/"
        return url.scheme == self.scheme and host_ok and url.port == self.port and path.startswith(self.path)


@dataclass(frozen=True)
class ServiceUrls:
    """The Bot Connector addresses outbound requests may go to (`teams.service_url_hosts`)."""

    origins: tuple[Origin, ...]

    @classmethod
    def of(cls, entries: Iterable[str]) -> ServiceUrls:
        return cls(tuple(Origin.parse(e) for e in entries if e.strip()))

    @classmethod
    def from_settings(cls, settings: Settings) -> ServiceUrls:
        return cls.of(settings.teams.service_url_hosts)

    def admits(self, url: str | None) -> bool:
        """Is `url` an absolute address on the list, with no user info, query or fragment?"""
        if not url:
            return False
        try:
            parsed = URL(url)
        except (ValueError, TypeError):
            return False
        if (
            not parsed.absolute
            or parsed.user is not None
            or parsed.password is not None
            or parsed.query_string
            or parsed.fragment
        ):
            return False
        return any(origin.admits(parsed) for origin in self.origins)

    def require(self, url: str | None) -> None:
        if not self.admits(url):
            raise OutboundRefused("the service URL is not an allowed Bot Connector address")


class GuardedClientFactory(RestChannelServiceClientFactory):
    """The SDK's connector-client factory, refusing any URL off the allow list before a token is
    even asked for (the second wall, see the module doc)."""

    def __init__(self, connections: Connections, service_urls: ServiceUrls) -> None:
        super().__init__(connections)
        self.service_urls = service_urls

    async def create_connector_client(
        self,
        context: TurnContext | None,
        claims_identity: ClaimsIdentity,
        service_url: str,
        audience: str,
        scopes: list[str] | None = None,
        use_anonymous: bool = False,
    ) -> ConnectorClientBase:
        self._require(service_url)
        return await super().create_connector_client(
            context, claims_identity, service_url, audience, scopes, use_anonymous
        )

    async def create_user_token_client(
        self, context: TurnContext, claims_identity: ClaimsIdentity, use_anonymous: bool = False
    ) -> UserTokenClient:
        """The SDK makes this client (and fetches a token for it) before the turn's connector:
        a turn for a refused address stops here, before any token is asked for."""
        activity = context.activity if context is not None else None
        if activity is not None and activity.service_url:
            self._require(activity.service_url)
        return await super().create_user_token_client(context, claims_identity, use_anonymous)

    def _require(self, service_url: str | None) -> None:
        if not self.service_urls.admits(service_url):
            log.warning("refused an outbound connector to a service URL off the allow list")
            raise OutboundRefused("the service URL is not an allowed Bot Connector address")


def cloud_adapter(settings: Settings, connections: Connections) -> CloudAdapter:
    """The SDK's adapter, every connector client of which is made by `GuardedClientFactory`."""
    return CloudAdapter(
        channel_service_client_factory=GuardedClientFactory(connections, ServiceUrls.from_settings(settings))
    )
