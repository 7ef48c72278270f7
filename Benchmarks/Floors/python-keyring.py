"""P1 peer: Python's `keyring` package with its SecretService backend, on the same daemon.

Prints one line per set_password + get_password: the time it took, in nanoseconds.

    python python-keyring.py OPERATIONS PAYLOAD_BYTES
"""
import sys
import time

import keyring
from keyring.backends import SecretService


def main() -> None:
    operations, payload = int(sys.argv[1]), int(sys.argv[2])
    keyring.set_keyring(SecretService.Keyring())
    for i in range(operations):
        secret = chr(ord("a") + i % 26) * payload
        start = time.monotonic_ns()
        keyring.set_password("org.coffer.bench", "bench-python", secret)
        if keyring.get_password("org.coffer.bench", "bench-python") != secret:
            sys.exit("python keyring returned another value")
        print(time.monotonic_ns() - start)
    keyring.delete_password("org.coffer.bench", "bench-python")


if __name__ == "__main__":
    main()
