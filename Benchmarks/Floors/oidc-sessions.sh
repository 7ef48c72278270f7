#!/usr/bin/env bash
# P13's two sessions at the provider scripts/with-oidc-provider runs, one per tool:
#   Benchmarks/Floors/oidc-sessions.sh DIR COFFER
# - Debian's oidc-agent (oidc-agent-cli): an agent of its own (its HOME is DIR/agent-home), and
#   the account "bench" made by oidc-gen with the device grant, approved by the tests' browser
#   stand-in (scripts/oidc-provider/browser.py);
# - coffer: the session "bench" in DIR/coffer-home (COFFER_HOME), signed in with `coffer login`
#   through the same stand-in as $BROWSER, its key in a 0600 key file (no session bus).
# Prints OIDC_SOCK=… and OIDCD_PID=… for the caller, who stops the agent.
set -euo pipefail
dir=$1 coffer=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
browser="$root/scripts/oidc-provider/browser.py"
: "${COFFER_TEST_OIDC_ISSUER:?run under scripts/with-oidc-provider}"
mkdir -p -m 700 "$dir/agent-home" "$dir/coffer-home"

export HOME="$dir/agent-home"
# The agent stays when this script ends: it must not keep a descriptor of the caller's open
# (Foundation's Process waits for every holder of the one it watches), so all above 2 are
# closed; and it must answer SIGTERM, which the caller's runtime blocks and a child inherits.
eval "$(python3 -c 'import os, signal, sys; os.closerange(3, 65536); signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.execvp(sys.argv[1], sys.argv[1:])' oidc-agent </dev/null 2>/dev/null)" >/dev/null
out="$dir/oidc-gen.out"
oidc-gen bench --iss="$COFFER_TEST_OIDC_ISSUER/" --client-id=oidc-agent \
  --client-secret="$(cat "$COFFER_TEST_OIDC_STATE/client-secret")" --flow=device --scope="openid profile" \
  --pw-cmd="echo bench" --prompt=none --confirm-default --no-url-call >"$out" 2>&1 &
gen=$!
for _ in $(seq 1 100); do grep -q "enter the code" "$out" && break; sleep 0.1; done
text="$(grep -v $'\e' "$out")"
uri="$(grep -oE 'https?://[^ ]+/device/' <<<"$text" | head -1)"
code="$(grep -oE 'enter the code: [A-Z0-9]+' <<<"$text" | awk '{print $NF}')"
python3 "$browser" --device "$uri" "$code" >/dev/null
wait "$gen" || { cat "$out" >&2; kill "$OIDCD_PID"; exit 1; }

env -u DBUS_SESSION_BUS_ADDRESS COFFER_HOME="$dir/coffer-home" BROWSER="$browser" \
  COFFER_TEST_BROWSER_JAR="$dir/browser-cookies" COFFER_LOG_LEVEL=error \
  "$coffer" login bench --issuer "$COFFER_TEST_OIDC_ISSUER" --client-id coffer-public >/dev/null 2>"$dir/coffer-login.err" \
  || { cat "$dir/coffer-login.err" >&2; kill "$OIDCD_PID"; exit 1; }
echo "OIDC_SOCK=$OIDC_SOCK"
echo "OIDCD_PID=$OIDCD_PID"
