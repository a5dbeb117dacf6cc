"""With an app id, `/api/messages` takes only requests carrying a valid Bot Connector JWT.

A local identity provider (tests/fakes/entra_id.py) publishes OpenID metadata and the JWKS of an
RSA key made for the run; the adapter reads it through `teams.openid_metadata_url` and the SDK's
validator checks every token. The accepted request's reply goes out with a token MSAL got from the
local managed-identity endpoint (auth type SystemManagedIdentity) — nothing reaches the internet.
"""

from __future__ import annotations

import http.client
import json
import time

import pytest

from core.bench.fakes.bot_connector import FakeConnector
from tests.fakes.entra_id import FakeEntra, new_key
from tests.teams_harness import TeamsServed, teams_env

APP_ID = "6f0a3c8e-1111-4222-8333-944455556666"


@pytest.fixture
def served(tmp_path, demo_var):
    with FakeConnector() as connector, FakeEntra() as entra:
        env = {
            **teams_env(tmp_path, demo_var),
            "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID": APP_ID,
            "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__AUTHTYPE": "SystemManagedIdentity",
            "ASKBASE_TEAMS__OPENID_METADATA_URL": entra.metadata_url,
            "IDENTITY_ENDPOINT": entra.msi_endpoint,
            "IDENTITY_HEADER": entra.identity_header,
        }
        server = TeamsServed(env, tmp_path, connector)
        try:
            yield server, connector, entra
        finally:
            server.stop()


def test_requests_without_a_valid_jwt_get_401_and_nothing_is_answered(served):
    server, connector, entra = served
    url = connector.service_url
    activity = server.client.activity("How many clients are there?")
    refused = {
        "no token": "",
        "not a JWT": "not-a-jwt",
        "signed by another key": entra.mint(APP_ID, service_url=url, key=new_key()),
        "for another bot": entra.mint("someone-else", service_url=url),
        "expired an hour ago": entra.mint(
            APP_ID, service_url=url, issued_at=time.time() - 7200, lifetime_s=3600
        ),
        "unknown key id": entra.mint(APP_ID, service_url=url, kid="nope"),
    }
    for why, token in refused.items():
        status, body = server.client.post(activity, token=token)
        assert status == 401, f"{why}: {status} {body!r}"
    time.sleep(1.0)
    assert connector.calls == []  # no reply, no typing: the engine never saw the question


def test_a_valid_jwt_is_answered_and_the_reply_carries_the_bots_own_token(served):
    server, connector, entra = served
    activity = server.client.activity("How many clients are there?")
    token = entra.mint(APP_ID, service_url=connector.service_url)
    status, _ = server.client.post(activity, token=token)
    assert status == 202, server.output()
    answer = connector.card_in(activity["conversation"]["id"], lambda m: m.is_answer, timeout=15)
    assert answer.sentence() == "Number of clients: 300."
    replies = [c for c in connector.calls if c.body.get("type") == "message"]
    assert replies and all(c.token in entra.issued for c in replies)  # MSAL's token, from the MSI endpoint
    assert entra.token_requests and entra.token_requests[0]["resource"] == "https://api.botframework.com"


def test_a_5_mb_body_gets_413_before_its_token_is_looked_at_and_the_adapter_is_unharmed(served):
    """A body over the limit is refused by its size whoever sends it — no token, or a valid one —
    and the client reads the 413 (the connection is not reset under a client still sending)."""
    server, connector, entra = served
    big = {**server.client.activity("How many clients are there?"), "text": "x" * 5_000_000}
    assert server.client.post(big, token="")[0] == 413
    assert server.client.post(big, token=entra.mint(APP_ID, service_url=connector.service_url))[0] == 413
    # chunked, so no length to refuse it by: read up to the limit, then 413 (after the token)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("POST", "/api/messages")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Transfer-Encoding", "chunked")
        conn.putheader("Authorization", f"Bearer {entra.mint(APP_ID, service_url=connector.service_url)}")
        conn.endheaders()
        chunk = json.dumps(big).encode()[:1_000_000]
        for _ in range(5):
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.send(b"0\r\n\r\n")
        assert conn.getresponse().status == 413
    finally:
        conn.close()
    assert connector.calls == []
    activity = server.client.activity("How many clients are there?")
    status, _ = server.client.post(activity, token=entra.mint(APP_ID, service_url=connector.service_url))
    assert status == 202
    connector.card_in(activity["conversation"]["id"], lambda m: m.is_answer, timeout=15)
