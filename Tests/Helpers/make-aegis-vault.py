#!/usr/bin/env python3
"""Writes an encrypted Aegis vault with an implementation independent of Coffer (Python's
`cryptography` package), so the tests check Coffer's import against more than its own export.

Usage: make-aegis-vault.py OUTPUT PASSWORD
The vault holds a TOTP entry (RFC 6238 SHA-1 seed), a HOTP entry (counter 5) and a Steam entry.
"""
import base64
import json
import os
import sys
import uuid

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

output, password = sys.argv[1], sys.argv[2]

content = {
    "version": 2,
    "entries": [
        {"type": "totp", "uuid": str(uuid.uuid4()), "name": "alice@example.com", "issuer": "Example", "note": "",
         "favorite": False, "icon": None,
         "info": {"secret": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "algo": "SHA1", "digits": 8, "period": 30}},
        {"type": "hotp", "uuid": str(uuid.uuid4()), "name": "bob", "issuer": "Bank", "note": "", "favorite": False,
         "icon": None, "info": {"secret": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "algo": "SHA1", "digits": 6, "counter": 5}},
        {"type": "steam", "uuid": str(uuid.uuid4()), "name": "gamer", "issuer": "Steam", "note": "", "favorite": False,
         "icon": None, "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "SHA1", "digits": 5, "period": 30}},
    ],
    "groups": [],
}

master_key = AESGCM.generate_key(bit_length=256)
salt = os.urandom(32)
kek = Scrypt(salt=salt, length=32, n=2 ** 15, r=8, p=1).derive(password.encode())

key_nonce = os.urandom(12)
wrapped = AESGCM(kek).encrypt(key_nonce, master_key, None)  # ciphertext followed by the 16-byte tag
db_nonce = os.urandom(12)
sealed = AESGCM(master_key).encrypt(db_nonce, json.dumps(content).encode(), None)

vault = {
    "version": 1,
    "header": {
        "slots": [{
            "type": 1, "uuid": str(uuid.uuid4()), "key": wrapped[:-16].hex(),
            "key_params": {"nonce": key_nonce.hex(), "tag": wrapped[-16:].hex()},
            "n": 2 ** 15, "r": 8, "p": 1, "salt": salt.hex(),
        }],
        "params": {"nonce": db_nonce.hex(), "tag": sealed[-16:].hex()},
    },
    "db": base64.b64encode(sealed[:-16]).decode(),
}
with open(output, "w") as file:
    json.dump(vault, file)
