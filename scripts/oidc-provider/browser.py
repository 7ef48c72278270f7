#!/usr/bin/env python3
"""A browser's part in the tests' sign-ins, played against the real provider: Coffer's loopback
agent starts it as `$BROWSER URL`, as it would start Firefox.

    browser.py URL                           follow URL, sign in at the provider's login form
                                             when asked, deliver the redirect to the loopback
    browser.py --device URI USER_CODE [deny] enter a device grant's user code and approve it

The provider's session cookie is kept in $COFFER_TEST_BROWSER_JAR (a browser profile), so a
second sign-in needs no password until the provider's session ends (RP-initiated logout).
Each step is appended to $COFFER_TEST_BROWSER_LOG when it is set ("login" when the form was
submitted, "redirect URL" before the loopback is called, "answer STATUS" after).
When $COFFER_TEST_BROWSER_HOLD names a file, the redirect to the loopback waits until it exists
(a minute at most).
"""
import html.parser
import http.cookiejar
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

STATE = os.environ["COFFER_TEST_OIDC_STATE"]
PASSWORD = open(os.path.join(STATE, "user-password")).read()


def log(line):
    path = os.environ.get("COFFER_TEST_BROWSER_LOG")
    if path:
        with open(path, "a") as file:
            file.write(line + "\n")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Form(html.parser.HTMLParser):
    """The first form's hidden fields."""

    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("type") == "hidden" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value", "")


jar_path = os.environ.get("COFFER_TEST_BROWSER_JAR")
jar = http.cookiejar.LWPCookieJar(jar_path) if jar_path else http.cookiejar.CookieJar()
if jar_path and os.path.exists(jar_path):
    jar.load(ignore_discard=True)
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
provider = urllib.parse.urlsplit(os.environ["COFFER_TEST_OIDC_ISSUER"]).netloc


def fetch(url, form=None):
    """One request, no redirect followed: (status, location, body)."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with opener.open(urllib.request.Request(url, data=data), timeout=30) as response:
            return response.status, None, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location"), error.read().decode(errors="replace")
    finally:
        if jar_path:
            jar.save(ignore_discard=True)


def hidden_fields(page):
    form = Form()
    form.feed(page)
    return form.fields


def visit(url, form=None):
    """Follows redirects within the provider, signing in when its login form comes up; stops
    at a redirect elsewhere (the loopback) and returns it, or at a page and returns None."""
    for _ in range(20):
        status, location, body = fetch(url, form)
        form = None
        if status in (301, 302, 303, 307, 308) and location:
            url = urllib.parse.urljoin(url, location)
            if urllib.parse.urlsplit(url).netloc != provider:
                return url, None
            continue
        if "/accounts/login/" in url and status == 200 and form is None:
            fields = hidden_fields(body)
            fields.update(username="alice", password=PASSWORD)
            log("login")
            form = fields
            continue
        return None, (status, body, url)
    raise SystemExit("browser.py: too many redirects")


def deliver(redirect):
    hold = os.environ.get("COFFER_TEST_BROWSER_HOLD")
    waited = 0.0
    while hold and not os.path.exists(hold):
        if waited > 60:
            log("gave up waiting for " + hold)
            return
        time.sleep(0.05)
        waited += 0.05
    log("redirect " + redirect)
    try:
        with urllib.request.urlopen(redirect, timeout=30) as response:
            log(f"answer {response.status}")
    except urllib.error.HTTPError as error:
        log(f"answer {error.code}")


def main(argv):
    if argv[:1] == ["--device"]:
        uri, user_code = argv[1], argv[2]
        action = argv[3] if len(argv) > 3 else "accept"
        redirect, page = visit(uri)
        status, body, url = page
        fields = hidden_fields(body)
        fields["user_code"] = user_code
        redirect, page = visit(url, fields)
        status, body, url = page
        fields = hidden_fields(body)
        fields["action"] = action
        redirect, page = visit(url, fields)
        log(f"device {action} {page[0]}")
        return
    redirect, page = visit(argv[0])
    if redirect:
        deliver(redirect)
    else:
        log(f"page {page[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
