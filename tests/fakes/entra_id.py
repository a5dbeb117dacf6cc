"""A local stand-in for Entra ID / the Bot Framework token service, on 127.0.0.1.

- `/.well-known/openid-configuration` and `/keys`: an OpenID metadata document and the JWKS of an
  RSA key generated for the test run — what the adapter reads to check incoming JWTs
  (`teams.openid_metadata_url`). `mint()` signs tokens with that key, as the Bot Connector would.
- `/msi/token`: Azure App Service's managed-identity endpoint (IDENTITY_ENDPOINT / IDENTITY_HEADER),
  which MSAL asks for the token the adapter's replies carry (auth type SystemManagedIdentity), so
  an authenticated reply goes out without reaching the internet.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from core.bench.fakes.local_server import LocalServer, QuietHandler

BOT_FRAMEWORK_ISSUER = "https://api.botframework.com"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class FakeEntra(LocalServer):
    host: str = "127.0.0.1"
    port: int = 0
    identity_header: str = "local-identity-header"
    key: rsa.RSAPrivateKey = field(default_factory=new_key)
    kid: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    token_requests: list[dict[str, Any]] = field(default_factory=list)
    issued: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._listen(self._handler())

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def metadata_url(self) -> str:
        return f"{self.base_url}/.well-known/openid-configuration"

    @property
    def msi_endpoint(self) -> str:
        return f"{self.base_url}/msi/token"

    def jwks(self) -> dict[str, Any]:
        public = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def mint(
        self,
        audience: str,
        *,
        service_url: str | None = None,
        issuer: str = BOT_FRAMEWORK_ISSUER,
        lifetime_s: int = 3600,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        issued_at: float | None = None,
        **claims: Any,
    ) -> str:
        """A Bot Connector-style token: RS256, our kid, aud = the bot's app id; `serviceurl` when
        `service_url` is given (None: no such claim), and any other `claims` (tid, appid, ver…)."""
        now = int(issued_at if issued_at is not None else time.time())
        body: dict[str, Any] = {
            "iss": issuer,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime_s,
            **({"serviceurl": service_url} if service_url is not None else {}),
            **claims,
        }
        return jwt.encode(body, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/.well-known/openid-configuration":
                    self.send_json(
                        200,
                        {
                            "issuer": BOT_FRAMEWORK_ISSUER,
                            "jwks_uri": f"{fake.base_url}/keys",
                            "id_token_signing_alg_values_supported": ["RS256"],
                        },
                    )
                elif url.path == "/keys":
                    self.send_json(200, fake.jwks())
                elif url.path == "/msi/token":
                    query = {k: v[0] for k, v in parse_qs(url.query).items()}
                    fake.token_requests.append(query)
                    if self.headers.get("X-IDENTITY-HEADER") != fake.identity_header:
                        self.send_json(401, {"statusCode": 401, "message": "bad identity header"})
                        return
                    token = f"outbound-{uuid.uuid4().hex}"
                    fake.issued.append(token)
                    self.send_json(
                        200,
                        {
                            "access_token": token,
                            "expires_on": str(int(time.time()) + 3600),
                            "resource": query.get("resource", ""),
                            "token_type": "Bearer",
                        },
                    )
                else:
                    self.send_json(404, {"error": "not found"})

        return Handler
