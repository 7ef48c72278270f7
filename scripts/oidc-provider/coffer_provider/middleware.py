"""A faulty token endpoint, on request, for tests that play a slow or broken provider: while the
state directory holds `delay-<client_id>`, the token endpoint waits that many seconds before
answering that client; while it holds `huge-<client_id>`, it answers with that many bytes of
JSON-looking garbage, streamed without a Content-Length; while it holds `calls-<client_id>`, each
of that client's requests to the token endpoint adds a line to it (its grant type), so a test can
count the refreshes a provider saw."""
import time

from django.conf import settings
from django.http import StreamingHttpResponse


def _number(path):
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return None


class SlowTokenEndpoint:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.endswith("/token/") and request.method == "POST":
            client = request.POST.get("client_id", "")
            if client.replace("-", "_").isidentifier():
                calls = settings.STATE / f"calls-{client}"
                if calls.exists():
                    with calls.open("a") as file:
                        file.write(request.POST.get("grant_type", "") + "\n")
                delay = _number(settings.STATE / f"delay-{client}")
                if delay:
                    time.sleep(min(30.0, delay))
                size = _number(settings.STATE / f"huge-{client}")
                if size:
                    return StreamingHttpResponse(_garbage(int(size)), content_type="application/json")
        return self.get_response(request)


def _garbage(size):
    chunk = b'{"access_token": "' + b"x" * 65500 + b'", '
    sent = 0
    while sent < size:
        yield chunk
        sent += len(chunk)
