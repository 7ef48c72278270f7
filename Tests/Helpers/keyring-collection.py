#!/usr/bin/python3
"""Makes or unlocks a gnome-keyring collection with a password and no prompt, for the tests of a
default collection that moved (Tests/CofferStorageTests/Keychain/DefaultCollectionChangeTests).

  keyring-collection.py create LABEL PASSWORD   prints the new collection's path
  keyring-collection.py unlock PATH PASSWORD

gnome-keyring's own D-Bus interface takes the password inside a Secret Service session, which
lives as long as the connection that opened it: hence one process for both calls.
"""
import sys

import dbus

command, target, password = sys.argv[1:4]
bus = dbus.SessionBus()
service = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
_, session = service.OpenSession("plain", dbus.String("", variant_level=1), dbus_interface="org.freedesktop.Secret.Service")
secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(password.encode()), "text/plain"), signature="oayays")
internal = dbus.Interface(service, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
if command == "create":
    label = {"org.freedesktop.Secret.Collection.Label": dbus.String(target, variant_level=1)}
    print(internal.CreateWithMasterPassword(dbus.Dictionary(label, signature="sv"), secret))
elif command == "unlock":
    internal.UnlockWithMasterPassword(dbus.ObjectPath(target), secret)
else:
    sys.exit(f"unknown command {command}")
