// CKernelKeyring: the user's kernel keyring (keyrings(7), `@u`), through the add_key and keyctl
// system calls; no library needed. Coffer keeps a passphrase-derived key there, for a time the
// user chooses, so a day of commands asks once.
#ifndef COFFER_CKERNELKEYRING_H
#define COFFER_CKERNELKEYRING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Adds (or replaces) a "user" key named `description` to the user keyring, readable and
/// changeable by this user only (possessor and user: all; group and other: nothing), expiring
/// after `timeout_seconds`. Returns 0, or -errno.
int coffer_keyring_store(const char *description, const void *payload, size_t length, unsigned timeout_seconds);

/// Reads the "user" key named `description` from the user keyring into `buffer`. Returns the
/// payload's length (which may exceed `capacity`: then only `capacity` bytes were copied), or
/// -errno (-ENOKEY when there is none, -EKEYEXPIRED when it has expired).
long coffer_keyring_read(const char *description, void *buffer, size_t capacity);

/// Removes the "user" key named `description` from the user keyring. Returns 0, or -errno.
int coffer_keyring_remove(const char *description);

#ifdef __cplusplus
}
#endif

#endif
