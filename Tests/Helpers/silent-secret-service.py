#!/usr/bin/python3
"""A Secret Service provider that never answers: it owns org.freedesktop.secrets on the session
bus and then reads no messages, so every call to it waits forever. The tests use it to check that
Coffer's keyring calls time out instead of hanging.

Usage: silent-secret-service.py [SECONDS]   (prints "ready" once it owns the name)
"""
import sys
import time

import dbus

bus = dbus.SessionBus()
if bus.request_name("org.freedesktop.secrets") != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
    sys.exit("could not own org.freedesktop.secrets")
print("ready", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
