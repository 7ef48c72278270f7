"""The discovery document, with the two endpoints the toolkit serves but leaves out of it
(revocation and device authorization), as providers such as Keycloak and Okta list them."""
import json

from django.urls import reverse
from oauth2_provider.views import ConnectDiscoveryInfoView


class DiscoveryView(ConnectDiscoveryInfoView):
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        document = json.loads(response.content)
        origin = request.build_absolute_uri("/").rstrip("/")
        document["revocation_endpoint"] = origin + reverse("oauth2_provider:revoke-token")
        document["device_authorization_endpoint"] = origin + reverse("oauth2_provider:device-authorization")
        document["grant_types_supported"] = [
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
        ]
        response.content = json.dumps(document)
        return response
