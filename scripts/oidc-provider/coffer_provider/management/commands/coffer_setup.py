"""The test user and the clients Coffer's tests sign in with (scripts/with-oidc-provider)."""
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from oauth2_provider.models import get_application_model

LOOPBACK = "http://127.0.0.1/callback"


class Command(BaseCommand):
    help = "Creates the test user and Coffer's test clients."

    def handle(self, *args, **options):
        state = os.environ["COFFER_OIDC_STATE"]
        password = open(os.path.join(state, "user-password")).read()
        secret = open(os.path.join(state, "client-secret")).read()
        user = get_user_model().objects.create_user(
            "alice", email="alice@example.test", password=password, first_name="Alice", last_name="Liddell"
        )
        Application = get_application_model()
        common = dict(user=user, algorithm=Application.RS256_ALGORITHM, skip_authorization=True)
        code = Application.GRANT_AUTHORIZATION_CODE
        # A native app (RFC 8252): loopback redirects on any port.
        Application.objects.create(
            client_id="coffer-public", name="Coffer (public)", client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=code, redirect_uris=LOOPBACK, post_logout_redirect_uris=LOOPBACK, **common,
        )
        # The same app under another client id: its ID tokens are for another audience.
        Application.objects.create(
            client_id="coffer-other", name="Another app", client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=code, redirect_uris=LOOPBACK, **common,
        )
        # The same again, for tests that slow its token endpoint (coffer_provider.middleware).
        Application.objects.create(
            client_id="coffer-slow", name="Coffer (slow)", client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=code, redirect_uris=LOOPBACK, **common,
        )
        # And again, for tests that make its token endpoint slow or answer gigabytes, one client
        # per suite so that their faults never reach each other's tests.
        for client_id in ("coffer-faulty", "coffer-replicas"):
            Application.objects.create(
                client_id=client_id, name=f"Coffer ({client_id})", client_type=Application.CLIENT_PUBLIC,
                authorization_grant_type=code, redirect_uris=LOOPBACK, **common,
            )
        # A confidential client: client_secret_basic or client_secret_post.
        Application.objects.create(
            client_id="coffer-confidential", client_secret=secret, name="Coffer (confidential)",
            client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=code,
            redirect_uris=LOOPBACK, **common,
        )
        # A machine without a browser: the device authorization grant (RFC 8628).
        Application.objects.create(
            client_id="coffer-device", name="Coffer (device)", client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_DEVICE_CODE, **common,
        )
        # The benchmarks' floor: Debian's oidc-agent signs in with the device grant, as a
        # confidential client (oidc-gen requires a secret); Coffer signs in beside it as itself.
        Application.objects.create(
            client_id="oidc-agent", client_secret=secret, name="oidc-agent (the benchmarks' floor)",
            client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_DEVICE_CODE, **common,
        )
