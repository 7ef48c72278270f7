// See include/CKernelKeyring.h. Constants from <linux/keyctl.h> (stable kernel ABI).
#define _GNU_SOURCE
#include "CKernelKeyring.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
    KEY_SPEC_PROCESS_KEYRING = -2,
    KEY_SPEC_USER_KEYRING = -4,
    KEYCTL_LINK = 8,
    KEYCTL_SETPERM = 5,
    KEYCTL_UNLINK = 9,
    KEYCTL_SEARCH = 10,
    KEYCTL_READ = 11,
    KEYCTL_SET_TIMEOUT = 15,
    KEYCTL_INVALIDATE = 21,
};

// The owning user: view, read, write, search, link, setattr. Possessor, group and other:
// nothing. (Not the possessor: another user's process that inherited a session keyring linking
// this user's keyring possesses its keys.)
static const uint32_t owner_only = 0x003f0000;

static long search(const char *description) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
}

int coffer_keyring_store(const char *description, const void *payload, size_t length, unsigned timeout_seconds) {
    // Made in this process's keyring, given its timeout and permissions there, and only then
    // linked into the user keyring: a process killed in between leaves no key without a timeout
    // (the process keyring, and a key only it holds, go with the process). An older key of the
    // same name in the user keyring is replaced by the link.
    long id = syscall(SYS_add_key, "user", description, payload, length, KEY_SPEC_PROCESS_KEYRING);
    if (id < 0) return -errno;
    if (syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, timeout_seconds) < 0 ||
        syscall(SYS_keyctl, KEYCTL_SETPERM, id, owner_only) < 0 ||
        syscall(SYS_keyctl, KEYCTL_LINK, id, KEY_SPEC_USER_KEYRING) < 0) {
        int failure = errno;
        syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
        return -failure;
    }
    syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_PROCESS_KEYRING);
    return 0;
}

long coffer_keyring_read(const char *description, void *buffer, size_t capacity) {
    long id = search(description);
    if (id < 0) return -errno;
    long length = syscall(SYS_keyctl, KEYCTL_READ, id, buffer, capacity);
    return length < 0 ? -errno : length;
}

int coffer_keyring_remove(const char *description) {
    long id = search(description);
    if (id < 0) return -errno;
    return syscall(SYS_keyctl, KEYCTL_INVALIDATE, id) < 0 ? -errno : 0;
}
