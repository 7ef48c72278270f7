"""A slow token endpoint, on request: while the state directory holds `delay-<client_id>`, the
token endpoint waits that many seconds before answering that client. Tests use it to hold a
refresh in flight (so that racing refreshers would overlap) and to play a slow provider."""
import os
import time

from django.conf import settings


class SlowTokenEndpoint:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.endswith("/token/") and request.method == "POST":
            client = request.POST.get("client_id", "")
            delay = settings.STATE / f"delay-{client}"
            if client.isidentifier() or client.replace("-", "_").isidentifier():
                try:
                    time.sleep(min(30.0, float(delay.read_text())))
                except (OSError, ValueError):
                    pass
        return self.get_response(request)
