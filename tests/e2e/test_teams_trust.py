"""Teams trusts only what it verified (issue 31): the token's issuer, audience, caller and tenant,
the activity's tenant, and a `serviceUrl` that the token names exactly and that is an allowed Bot
Connector address — otherwise 401, and no outbound request of any kind: no typing indicator, no
answer, no membership lookup, not even a token fetched for one.

`python -m bot serve --teams` runs as deployed, single-tenant, with its keys from a local
Entra/JWKS fake (tests/fakes/entra_id.py) and its outbound token from that fake's managed-identity
endpoint. Two fake Bot Connectors listen: the allowed one, and an attacker's, which would say
anyone is a member of the analyst team and would record any token sent to it.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from microsoft_agents.activity import ConversationReference
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.core import TurnContext

from bot.teams import cards
from bot.teams.auth import guid, same_id
from bot.teams.config import sdk_configuration, startup_problem
from bot.teams.outbound import OutboundRefused, ServiceUrls, cloud_adapter
from bot.teams.proactive import Sender
from core.bench.fakes.bot_connector import TENANT, FakeConnector
from core.settings import load_settings
from tests.fakes.entra_id import FakeEntra
from tests.teams_harness import APP_ID, TeamsServed, connector_env, identity_env, teams_env

OTHER_TENANT = "0badc0de-0000-4000-8000-000000000666"
OTHER_APP = "0badc0de-1111-4222-8333-000000000777"  # another app registered in our tenant
ANALYSTS_TEAM = "19:analysts0123456789@thread.tacv2"
BOB = "bbbbbbbb-0000-4000-8000-0000000000b2"
V2_ISSUER = f"https://login.microsoftonline.com/{TENANT}/v2.0"
V1_ISSUER = f"https://sts.windows.net/{TENANT}/"


@pytest.fixture
def served(tmp_path, demo_var):
    legit = FakeConnector()
    attacker = FakeConnector(teams={ANALYSTS_TEAM: {BOB}})  # "yes, Bob is an analyst"
    with legit, attacker, FakeEntra() as entra:
        env = {
            **teams_env(tmp_path, demo_var),
            **identity_env(entra),
            **connector_env(legit),  # only the real Bot Connector's address is allowed
            "ASKBASE_VERIFIED__ANALYSTS__TEAMS_TEAMS": json.dumps([ANALYSTS_TEAM]),
        }
        server = TeamsServed(env, tmp_path, legit)
        try:
            yield server, legit, attacker, entra
        finally:
            server.stop()


def elsewhere(activity: dict[str, Any], service_url: str) -> dict[str, Any]:
    return {**activity, "serviceUrl": service_url}


def from_tenant(
    activity: dict[str, Any], conversation: str | None, channel_data: str | None
) -> dict[str, Any]:
    out = json.loads(json.dumps(activity))
    out["conversation"].pop("tenantId", None)
    out["channelData"].pop("tenant", None)
    if conversation is not None:
        out["conversation"]["tenantId"] = conversation
    if channel_data is not None:
        out["channelData"]["tenant"] = {"id": channel_data}
    return out


def nothing_went_out(*connectors: FakeConnector, entra: FakeEntra) -> None:
    time.sleep(1.0)  # what a refused request would have started has had time to arrive
    for connector in connectors:
        assert connector.calls == [] and connector.lookups == []
    assert entra.token_requests == []  # not even an outbound token was asked for


def test_requests_that_claim_more_than_their_token_vouches_for_get_401_and_nothing_goes_out(served):
    server, legit, attacker, entra = served
    url, evil = legit.service_url, attacker.service_url
    question = server.client.activity("How many clients are there?")
    good = entra.mint(APP_ID, service_url=url)
    other_entra = entra.mint(
        APP_ID,
        service_url=url,
        issuer=f"https://login.microsoftonline.com/{OTHER_TENANT}/v2.0",
        tid=OTHER_TENANT,
        ver="2.0",
        azp=APP_ID,
    )
    # why it is refused: (token, activity, what the log says)
    refused: dict[str, tuple[str, dict[str, Any], str]] = {
        "an issuer nobody trusts": (
            entra.mint(APP_ID, service_url=url, issuer="https://evil.example"),
            question,
            "issuer is not the Bot Framework's or this tenant's",
        ),
        "an Entra issuer of another tenant": (
            other_entra,
            question,
            "issuer is not the Bot Framework's or this tenant's",
        ),
        "a Bot Framework token for another tenant": (
            entra.mint(APP_ID, service_url=url, tid=OTHER_TENANT),
            question,
            "from another tenant (tid)",
        ),
        "our tenant's Entra token, but another app's (azp)": (
            entra.mint(APP_ID, service_url=url, issuer=V2_ISSUER, tid=TENANT, ver="2.0", azp=OTHER_APP),
            question,
            "caller (azp) is not this bot",
        ),
        "our tenant's v1.0 Entra token with no appid": (
            entra.mint(APP_ID, service_url=url, issuer=V1_ISSUER, tid=TENANT, ver="1.0"),
            question,
            "caller (appid) is not this bot",
        ),
        "an activity from another tenant": (
            good,
            from_tenant(question, OTHER_TENANT, OTHER_TENANT),
            "the activity is from another tenant",
        ),
        "an activity naming two tenants": (
            good,
            from_tenant(question, TENANT, OTHER_TENANT),
            "the activity is from another tenant",
        ),
        "an activity naming no tenant": (good, from_tenant(question, None, None), "names no tenant"),
        "a token without a serviceurl claim": (entra.mint(APP_ID), question, "names no serviceurl"),
        "a serviceUrl the token does not name": (
            good,
            elsewhere(question, evil),
            "serviceUrl is not the one its token names",
        ),
        "the right host, another path than the token's": (
            good,
            elsewhere(question, url + "evil/"),
            "serviceUrl is not the one its token names",
        ),
        "a serviceUrl the token names, off the allow list": (
            entra.mint(APP_ID, service_url=evil),
            elsewhere(question, evil),
            "not an allowed Bot Connector address",
        ),
    }
    for why, (token, activity, _) in refused.items():
        status, body = server.client.post(activity, token=token)
        assert status == 401, f"{why}: {status} {body!r}"
    nothing_went_out(legit, attacker, entra=entra)
    said = [line.split(": ", 1)[1] for line in server.output().splitlines() if "refused a request" in line]
    assert len(said) == len(refused)
    for (why, (_, _, reason)), line in zip(refused.items(), said, strict=True):
        assert reason in line, f"{why}: refused for another reason: {line}"  # said in the log only

    # what a single-tenant bot does take: the Bot Connector's token, and its own tenant's Entra one
    entra_token = entra.mint(APP_ID, service_url=url, issuer=V2_ISSUER, tid=TENANT, ver="2.0", azp=APP_ID)
    for token in (good, entra_token):
        accepted = server.client.activity("How many clients are there?")
        assert server.client.post(accepted, token=token)[0] == 202, server.output()
        answer = legit.card_in(accepted["conversation"]["id"], lambda m: m.is_answer, timeout=20)
        assert answer.sentence() == "Number of clients: 300."
    assert attacker.calls == [] and all(c.token in entra.issued for c in legit.calls)


def test_membership_is_asked_only_of_the_verified_service_url(served):
    """The red team's ✅ Verify: a press whose serviceUrl pointed at a server answering "member"
    made a non-analyst an analyst. Now that press is refused before anyone is asked; the same
    press from the real Bot Connector asks it, and it says no."""
    server, legit, attacker, entra = served
    place = server.client.place("groupChat")
    press = {cards.ACTION: "verify", "trace": "0" * 32}
    forged = elsewhere(
        server.client.activity(None, place=place, value=press, user=BOB, name="Bob"), attacker.service_url
    )
    status, _ = server.client.post(forged, token=entra.mint(APP_ID, service_url=attacker.service_url))
    assert status == 401
    nothing_went_out(legit, attacker, entra=entra)

    real = server.client.activity(None, place=place, value=press, user=BOB, name="Bob")
    assert server.client.post(real, token=entra.mint(APP_ID, service_url=legit.service_url))[0] == 202
    said = legit.card_in(place["conversation"]["id"], lambda m: "Only analysts" in m.all_text(), timeout=20)
    assert said is not None
    assert legit.lookups == [(ANALYSTS_TEAM, BOB)] and attacker.lookups == [] and attacker.calls == []


def test_outbound_turns_refuse_a_service_url_off_the_list(monkeypatch, demo_var):
    """The second wall: whatever a stored conversation reference (a schedule's, a claim's) says,
    the proactive sender starts no turn for an address off the list — before the SDK fetches a
    single token — and the SDK's connector-client factory, asked directly, makes no client for
    one. The allowed address still works, with the bot's token."""
    with FakeConnector() as legit, FakeConnector() as attacker, FakeEntra() as entra:
        for name, value in {**identity_env(entra), **connector_env(legit)}.items():
            monkeypatch.setenv(name, value)
        settings = load_settings()
        adapter = cloud_adapter(settings, MsalConnectionManager(**sdk_configuration(settings)))
        sender = Sender(adapter, APP_ID, ServiceUrls.from_settings(settings))
        card = cards.card([cards.text_block("Scheduled: number of clients: 300.")])

        def reference(service_url: str) -> ConversationReference:
            return ConversationReference.model_validate(
                {
                    "serviceUrl": service_url,
                    "channelId": "msteams",
                    "conversation": {"id": "19:sales0123456789@thread.v2", "tenantId": TENANT},
                    "bot": {"id": "28:askbase-bot"},
                }
            )

        evil_urls = (attacker.service_url, "https://evil.example/", "http://smba.trafficmanager.net/")
        for evil in evil_urls:
            with pytest.raises(OutboundRefused):
                asyncio.run(sender.post(reference(evil), card, "scheduled"))
        assert attacker.calls == [] and entra.token_requests == []

        async def send(context: TurnContext) -> None:
            await context.send_activity("never sent")

        for evil in evil_urls:
            continuation = reference(evil).get_continuation_activity()
            with pytest.raises(OutboundRefused):
                asyncio.run(adapter.continue_conversation(APP_ID, continuation, send))
        assert attacker.calls == [] and entra.token_requests == []

        assert asyncio.run(sender.post(reference(legit.service_url), card, "scheduled"))
        (call,) = legit.calls
        assert call.token in entra.issued  # the token goes where it may


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://smba.trafficmanager.net/emea/", True),
        ("https://SMBA.trafficmanager.net/amer/", True),  # hosts have no case
        ("https://webchat.botframework.com/", True),
        ("http://127.0.0.1:8767/", True),
        ("http://127.0.0.1:8767/v3/", True),
        ("https://smba.trafficmanager.net:8443/emea/", False),  # another port
        ("http://smba.trafficmanager.net/emea/", False),  # not https
        ("https://smba.trafficmanager.net.evil.example/", False),
        ("https://evil.smba.trafficmanager.net/", False),  # a plain host admits no subdomain
        ("https://botframework.com/", False),  # `*.` admits subdomains only
        ("https://evilbotframework.com/", False),
        ("https://smba.trafficmanager.net./", False),
        ("https://user@smba.trafficmanager.net/", False),
        ("https://smba.trafficmanager.net\\@evil.example/", False),
        ("https://smba.trafficmanager.net/emea/?next=https://evil.example", False),
        ("http://127.0.0.1:8768/", False),
        ("http://localhost:8767/", False),
        ("/v3/conversations", False),
        ("", False),
    ],
)
def test_the_allow_list_admits_only_the_addresses_it_names(url, allowed):
    urls = ServiceUrls.of(["smba.trafficmanager.net", "*.botframework.com", "http://127.0.0.1:8767/"])
    assert urls.admits(url) is allowed


def test_a_path_entry_admits_only_that_path_and_below():
    urls = ServiceUrls.of(["https://connector.example/teams"])
    assert urls.admits("https://connector.example/teams/") and urls.admits(
        "https://connector.example/teams/x/"
    )
    assert not urls.admits("https://connector.example/teamsx/")
    assert not urls.admits("https://connector.example/teams/../admin/")  # read as /admin/
    assert not urls.admits("https://connector.example/")


def test_settings_it_cannot_use_stop_the_adapter_at_start():
    base = {"teams": {"app_id": APP_ID}}
    assert startup_problem(load_settings(**base)) is None
    assert "must be the tenant's id" in (
        startup_problem(load_settings(teams={"app_id": APP_ID, "tenant_id": "contoso.onmicrosoft.com"})) or ""
    )
    assert startup_problem(load_settings(teams={"app_id": APP_ID, "tenant_id": "common"})) is None
    assert "service_url_hosts" in (
        startup_problem(load_settings(teams={"app_id": APP_ID, "service_url_hosts": ["ftp://x"]})) or ""
    )
    assert "empty" in (
        startup_problem(load_settings(teams={"app_id": APP_ID, "service_url_hosts": []})) or ""
    )


def test_object_ids_are_compared_as_guids():
    upper = "AAAAAAAA-0000-4000-8000-0000000000A1"
    assert guid(upper) == upper.lower() and same_id(upper, upper.lower())
    assert guid("{aaaaaaaa-0000-4000-8000-0000000000a1}") is None  # one written form only
    assert guid("29:1abcdef") is None and not same_id("29:1abcdef", upper)
    assert not same_id(None, None) and not same_id("", "")
