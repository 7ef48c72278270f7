// See include/CTPM.h. Constants below are the TPM 2.0 specification's (Part 2) and tpm2-tss's
// public ABI (ESYS_TR values, TSS2_RC layers); structures are handled only as opaque buffers
// filled by libtss2-mu from the TPM's wire format.
#define _GNU_SOURCE
#include "CTPM.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t RC;
typedef uint32_t TR;

enum {
    TR_NONE = 0xfff,
    TR_PASSWORD = 0x0ff,
    TR_RH_OWNER = 0x101,
    SE_HMAC = 0x00,
    SE_POLICY = 0x01,
    SE_TRIAL = 0x03,
    ALG_SHA256 = 0x000B,
    SESSION_CONTINUE = 0x01,
    SESSION_DECRYPT = 0x20,
    SESSION_ENCRYPT = 0x40,
    // Big enough for any of the structures exchanged here (the largest, TPM2B_PRIVATE, is
    // 1,552 bytes in tpm2-tss 3.x); libtss2-mu never writes past the structure it fills.
    STRUCT_BUFFER = 8192,
    MAX_HANDLES = 8,
};

/// An empty TPM2B (size 0) or an empty list (count 0): outside info and creation PCRs, which
/// tpm2-tss requires even when there are none.
static const uint8_t zeroes[16] = {0};

/// AES-128 in CFB mode, the session's parameter encryption: TPMT_SYM_DEF marshalled.
static const uint8_t session_symmetric[] = {0x00, 0x06, 0x00, 0x80, 0x00, 0x43};

static struct {
    RC (*tctildr_initialize)(const char *, void **);
    void (*tctildr_finalize)(void **);
    RC (*initialize)(void **, void *, void *);
    void (*finalize)(void **);
    void (*free)(void *);
    RC (*create_primary)(void *, TR, TR, TR, TR, const void *, const void *, const void *, const void *, TR *, void **,
                         void **, void **, void **);
    RC (*start_auth_session)(void *, TR, TR, TR, TR, TR, const void *, uint8_t, const void *, uint16_t, TR *);
    RC (*session_set_attributes)(void *, TR, uint8_t, uint8_t);
    RC (*create)(void *, TR, TR, TR, TR, const void *, const void *, const void *, const void *, void **, void **,
                 void **, void **, void **);
    RC (*load)(void *, TR, TR, TR, TR, const void *, const void *, TR *);
    RC (*unseal)(void *, TR, TR, TR, TR, void **);
    RC (*set_auth)(void *, TR, const void *);
    RC (*flush_context)(void *, TR);
    RC (*close)(void *, TR *);
    RC (*policy_pcr)(void *, TR, TR, TR, TR, const void *, const void *);
    RC (*policy_auth_value)(void *, TR, TR, TR, TR);
    RC (*policy_get_digest)(void *, TR, TR, TR, TR, void **);
    RC (*get_capability)(void *, TR, TR, TR, uint32_t, uint32_t, uint32_t, uint8_t *, void **);
    RC (*from_tpm_public)(void *, uint32_t, TR, TR, TR, TR *);
    RC (*get_name)(void *, TR, void **);
    RC (*unmarshal_public)(const uint8_t *, size_t, size_t *, void *);
    RC (*unmarshal_private)(const uint8_t *, size_t, size_t *, void *);
    RC (*unmarshal_sensitive_create)(const uint8_t *, size_t, size_t *, void *);
    RC (*unmarshal_pcr_selection)(const uint8_t *, size_t, size_t *, void *);
    RC (*unmarshal_sym_def)(const uint8_t *, size_t, size_t *, void *);
    RC (*marshal_public)(const void *, uint8_t *, size_t, size_t *);
    RC (*marshal_private)(const void *, uint8_t *, size_t, size_t *);
    RC (*marshal_name)(const void *, uint8_t *, size_t, size_t *);
    RC (*marshal_digest)(const void *, uint8_t *, size_t, size_t *);
    RC (*marshal_capability)(const void *, uint8_t *, size_t, size_t *);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;

#define BIND(library, field, name)                                                                  \
    do {                                                                                            \
        *(void **)(&api.field) = dlsym(library, name);                                              \
        if (api.field == NULL) {                                                                    \
            load_failure = "tpm2-tss was found but lacks " name "; install tpm2-tss 3.x "          \
                           "(Debian/Ubuntu: apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0)"; \
            return;                                                                                 \
        }                                                                                           \
    } while (0)

static void *open_library(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

static void load_libraries(void) {
    // tpm2-tss logs to standard error (or TSS2_LOGFILE) unless told otherwise, and at its
    // trace level it logs the unsealed key. Coffer reports errors itself, with what to do, so
    // the logging is off whatever TSS2_LOG said.
    setenv("TSS2_LOG", "all+none", 1);
    void *esys = open_library("libtss2-esys.so.0");
    void *loader = open_library("libtss2-tctildr.so.0");
    void *mu = open_library("libtss2-mu.so.0");
    if (esys == NULL || loader == NULL || mu == NULL) {
        load_failure = "tpm2-tss is not installed; install it (Debian/Ubuntu: apt-get install "
                       "libtss2-esys-3.0.2-0 libtss2-tctildr0 libtss2-tcti-device0; Fedora: dnf install tpm2-tss)";
        return;
    }
    BIND(loader, tctildr_initialize, "Tss2_TctiLdr_Initialize");
    BIND(loader, tctildr_finalize, "Tss2_TctiLdr_Finalize");
    BIND(esys, initialize, "Esys_Initialize");
    BIND(esys, finalize, "Esys_Finalize");
    BIND(esys, free, "Esys_Free");
    BIND(esys, create_primary, "Esys_CreatePrimary");
    BIND(esys, start_auth_session, "Esys_StartAuthSession");
    BIND(esys, session_set_attributes, "Esys_TRSess_SetAttributes");
    BIND(esys, create, "Esys_Create");
    BIND(esys, load, "Esys_Load");
    BIND(esys, unseal, "Esys_Unseal");
    BIND(esys, set_auth, "Esys_TR_SetAuth");
    BIND(esys, flush_context, "Esys_FlushContext");
    BIND(esys, close, "Esys_TR_Close");
    BIND(esys, policy_pcr, "Esys_PolicyPCR");
    BIND(esys, policy_auth_value, "Esys_PolicyAuthValue");
    BIND(esys, policy_get_digest, "Esys_PolicyGetDigest");
    BIND(esys, get_capability, "Esys_GetCapability");
    BIND(esys, from_tpm_public, "Esys_TR_FromTPMPublic");
    BIND(esys, get_name, "Esys_TR_GetName");
    BIND(mu, unmarshal_public, "Tss2_MU_TPM2B_PUBLIC_Unmarshal");
    BIND(mu, unmarshal_private, "Tss2_MU_TPM2B_PRIVATE_Unmarshal");
    BIND(mu, unmarshal_sensitive_create, "Tss2_MU_TPM2B_SENSITIVE_CREATE_Unmarshal");
    BIND(mu, unmarshal_pcr_selection, "Tss2_MU_TPML_PCR_SELECTION_Unmarshal");
    BIND(mu, unmarshal_sym_def, "Tss2_MU_TPMT_SYM_DEF_Unmarshal");
    BIND(mu, marshal_public, "Tss2_MU_TPM2B_PUBLIC_Marshal");
    BIND(mu, marshal_private, "Tss2_MU_TPM2B_PRIVATE_Marshal");
    BIND(mu, marshal_name, "Tss2_MU_TPM2B_NAME_Marshal");
    BIND(mu, marshal_digest, "Tss2_MU_TPM2B_DIGEST_Marshal");
    BIND(mu, marshal_capability, "Tss2_MU_TPMS_CAPABILITY_DATA_Marshal");
}

const char *coffer_tpm_load(void) {
    pthread_once(&load_once, load_libraries);
    return load_failure;
}

void coffer_tpm_wipe(void *bytes, size_t length) {
    if (bytes) explicit_bzero(bytes, length);
}

struct coffer_tpm {
    void *esys;
    void *tcti;
    TR flushed[MAX_HANDLES];  // transient objects and sessions, flushed on close
    int flushed_count;
    TR closed[MAX_HANDLES];   // persistent objects' handles, only forgotten on close
    int closed_count;
};

/// The start of every TCTI context (TSS2_TCTI_CONTEXT_COMMON_V1, TCG TSS 2.0 TCTI specification):
/// only get_poll_handles is used, to reach the descriptors the TCTI holds.
typedef struct {
    uint64_t magic;
    uint32_t version;
    void *transmit, *receive, *finalize, *cancel;
    RC (*get_poll_handles)(void *, struct pollfd *, size_t *);
    void *set_locality;
} tcti_common;

/// Marks the descriptors the TCTI holds open (the device TCTI's /dev/tpm0 or /dev/tpmrm0) close-on-exec:
/// tpm2-tss opens them without it, and a child process the application starts meanwhile would
/// keep them — on /dev/tpm0, which only one process may open, every other TPM user waits for
/// that child. (TCTIs that connect per command, such as swtpm's, do not list their socket; the
/// window there is one command long.)
static void close_on_exec(void *tcti) {
    tcti_common *common = tcti;
    if (common == NULL || common->version < 1 || common->get_poll_handles == NULL) return;
    struct pollfd handles[4];
    size_t count = 4;
    if (common->get_poll_handles(tcti, handles, &count) != 0) return;
    for (size_t i = 0; i < count && i < 4; i++) {
        int flags = fcntl(handles[i].fd, F_GETFD);
        if (flags >= 0) fcntl(handles[i].fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

uint32_t coffer_tpm_open(const char *tcti, coffer_tpm **out) {
    *out = NULL;
    if (coffer_tpm_load()) return COFFER_TPM_NOT_LOADED;
    coffer_tpm *tpm = calloc(1, sizeof *tpm);
    if (tpm == NULL) return COFFER_TPM_BUFFER_TOO_SMALL;
    RC rc = api.tctildr_initialize(tcti, &tpm->tcti);
    if (rc == 0) close_on_exec(tpm->tcti);
    if (rc == 0) rc = api.initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != 0) {
        coffer_tpm_close(tpm);
        return rc;
    }
    *out = tpm;
    return 0;
}

void coffer_tpm_close(coffer_tpm *tpm) {
    if (tpm == NULL) return;
    if (tpm->esys) {
        for (int i = tpm->flushed_count - 1; i >= 0; i--) api.flush_context(tpm->esys, tpm->flushed[i]);
        for (int i = 0; i < tpm->closed_count; i++) api.close(tpm->esys, &tpm->closed[i]);
        api.finalize(&tpm->esys);
    }
    if (tpm->tcti) api.tctildr_finalize(&tpm->tcti);
    free(tpm);
}

/// Remembers a transient handle to flush on close.
static void track(coffer_tpm *tpm, TR handle) {
    if (tpm->flushed_count < MAX_HANDLES) tpm->flushed[tpm->flushed_count++] = handle;
}

/// Flushes a handle now, and forgets it.
static void flush_now(coffer_tpm *tpm, TR handle) {
    for (int i = 0; i < tpm->flushed_count; i++) {
        if (tpm->flushed[i] != handle) continue;
        api.flush_context(tpm->esys, handle);
        memmove(&tpm->flushed[i], &tpm->flushed[i + 1], sizeof(TR) * (size_t)(tpm->flushed_count - i - 1));
        tpm->flushed_count--;
        return;
    }
}

/// Turns marshalled bytes into a tpm2-tss structure in a fresh buffer (free with free_struct).
static RC unmarshal(RC (*function)(const uint8_t *, size_t, size_t *, void *), const uint8_t *bytes, size_t length,
                    void **out) {
    *out = calloc(1, STRUCT_BUFFER);
    if (*out == NULL) return COFFER_TPM_BUFFER_TOO_SMALL;
    size_t offset = 0;
    RC rc = function(bytes, length, &offset, *out);
    if (rc == 0 && offset != length) rc = COFFER_TPM_BUFFER_TOO_SMALL;
    return rc;
}

/// A TPM2B_DIGEST of size 0 ("the PCRs as they are now" for PolicyPCR).
static RC empty_digest(void **out) {
    *out = calloc(1, STRUCT_BUFFER);
    return *out ? 0 : COFFER_TPM_BUFFER_TOO_SMALL;
}

static void free_struct(void *value) {
    if (value == NULL) return;
    explicit_bzero(value, STRUCT_BUFFER);
    free(value);
}

/// Writes a tpm2-tss structure (allocated by ESYS) as bytes, and frees it.
static RC marshal_and_free(RC (*function)(const void *, uint8_t *, size_t, size_t *), void *value, uint8_t *bytes,
                           size_t capacity, size_t *length) {
    size_t offset = 0;
    RC rc = value ? function(value, bytes, capacity, &offset) : COFFER_TPM_BUFFER_TOO_SMALL;
    *length = offset;
    api.free(value);
    return rc;
}

/// An HMAC session salted with `salt_key`'s key, with AES-128-CFB parameter encryption.
static RC start_session(coffer_tpm *tpm, TR salt_key, uint8_t type, TR *session) {
    void *symmetric = NULL;
    RC rc = unmarshal(api.unmarshal_sym_def, session_symmetric, sizeof session_symmetric, &symmetric);
    if (rc == 0)
        rc = api.start_auth_session(tpm->esys, salt_key, TR_NONE, TR_NONE, TR_NONE, TR_NONE, NULL, type, symmetric,
                                    ALG_SHA256, session);
    free_struct(symmetric);
    if (rc == 0) track(tpm, *session);
    return rc;
}

uint32_t coffer_tpm_parent(coffer_tpm *tpm, const uint8_t *template_, size_t template_length,
                           uint32_t persistent_handle, uint32_t *parent, uint8_t *name, size_t name_capacity,
                           size_t *name_length) {
    RC rc;
    if (persistent_handle != 0) {
        rc = api.from_tpm_public(tpm->esys, persistent_handle, TR_NONE, TR_NONE, TR_NONE, parent);
        if (rc != 0) return rc;
        if (tpm->closed_count < MAX_HANDLES) tpm->closed[tpm->closed_count++] = *parent;
    } else {
        void *in_public = NULL, *in_sensitive = NULL;
        static const uint8_t empty_sensitive[] = {0x00, 0x04, 0x00, 0x00, 0x00, 0x00};
        rc = unmarshal(api.unmarshal_public, template_, template_length, &in_public);
        if (rc == 0) rc = unmarshal(api.unmarshal_sensitive_create, empty_sensitive, sizeof empty_sensitive, &in_sensitive);
        if (rc == 0)
            rc = api.create_primary(tpm->esys, TR_RH_OWNER, TR_PASSWORD, TR_NONE, TR_NONE, in_sensitive, in_public,
                                    zeroes, zeroes, parent, NULL, NULL, NULL, NULL);
        free_struct(in_public);
        free_struct(in_sensitive);
        if (rc != 0) return rc;
        track(tpm, *parent);
    }
    void *tpm_name = NULL;
    rc = api.get_name(tpm->esys, *parent, &tpm_name);
    if (rc != 0) return rc;
    return marshal_and_free(api.marshal_name, tpm_name, name, name_capacity, name_length);
}

uint32_t coffer_tpm_policy_digest(coffer_tpm *tpm, const uint8_t *pcrs, size_t pcrs_length, int with_auth_value,
                                  uint8_t *digest, size_t digest_capacity, size_t *digest_length) {
    TR session = TR_NONE;
    void *selection = NULL, *value = NULL;
    void *pcr_digest = NULL;
    RC rc = start_session(tpm, TR_NONE, SE_TRIAL, &session);
    if (rc == 0) rc = unmarshal(api.unmarshal_pcr_selection, pcrs, pcrs_length, &selection);
    if (rc == 0) rc = empty_digest(&pcr_digest);
    if (rc == 0) rc = api.policy_pcr(tpm->esys, session, TR_NONE, TR_NONE, TR_NONE, pcr_digest, selection);
    if (rc == 0 && with_auth_value) rc = api.policy_auth_value(tpm->esys, session, TR_NONE, TR_NONE, TR_NONE);
    if (rc == 0) rc = api.policy_get_digest(tpm->esys, session, TR_NONE, TR_NONE, TR_NONE, &value);
    if (rc == 0) rc = marshal_and_free(api.marshal_digest, value, digest, digest_capacity, digest_length);
    free_struct(selection);
    free_struct(pcr_digest);
    if (session != TR_NONE) flush_now(tpm, session);
    return rc;
}

uint32_t coffer_tpm_create_sealed(coffer_tpm *tpm, uint32_t parent, const uint8_t *template_,
                                  size_t template_length, const uint8_t *sensitive, size_t sensitive_length,
                                  uint8_t *public_, size_t public_capacity, size_t *public_length,
                                  uint8_t *private_, size_t private_capacity, size_t *private_length) {
    TR session = TR_NONE;
    void *in_public = NULL, *in_sensitive = NULL, *out_private = NULL, *out_public = NULL;
    RC rc = start_session(tpm, parent, SE_HMAC, &session);
    // The command's first parameter (the sensitive part, with the data) travels encrypted.
    if (rc == 0) rc = api.session_set_attributes(tpm->esys, session, SESSION_CONTINUE | SESSION_DECRYPT, 0xff);
    if (rc == 0) rc = unmarshal(api.unmarshal_public, template_, template_length, &in_public);
    if (rc == 0) rc = unmarshal(api.unmarshal_sensitive_create, sensitive, sensitive_length, &in_sensitive);
    if (rc == 0)
        rc = api.create(tpm->esys, parent, session, TR_NONE, TR_NONE, in_sensitive, in_public, zeroes, zeroes, &out_private,
                        &out_public, NULL, NULL, NULL);
    if (rc == 0) {
        rc = marshal_and_free(api.marshal_public, out_public, public_, public_capacity, public_length);
        out_public = NULL;
    }
    if (rc == 0) {
        rc = marshal_and_free(api.marshal_private, out_private, private_, private_capacity, private_length);
        out_private = NULL;
    }
    if (out_public) api.free(out_public);
    if (out_private) api.free(out_private);
    free_struct(in_public);
    free_struct(in_sensitive);
    if (session != TR_NONE) flush_now(tpm, session);
    return rc;
}

uint32_t coffer_tpm_unseal(coffer_tpm *tpm, uint32_t parent, const uint8_t *public_, size_t public_length,
                           const uint8_t *private_, size_t private_length, const uint8_t *auth, size_t auth_length,
                           const uint8_t *pcrs, size_t pcrs_length, int with_auth_value, uint8_t *data,
                           size_t data_capacity, size_t *data_length) {
    TR object = TR_NONE, session = TR_NONE;
    void *in_public = NULL, *in_private = NULL, *selection = NULL, *pcr_digest = NULL, *out_data = NULL;
    uint8_t auth_value[2 + 64] = {0};
    *data_length = 0;
    if (auth_length > 64) return COFFER_TPM_BUFFER_TOO_SMALL;
    RC rc = unmarshal(api.unmarshal_public, public_, public_length, &in_public);
    if (rc == 0) rc = unmarshal(api.unmarshal_private, private_, private_length, &in_private);
    // Nothing secret in the load: the parent's auth value is empty.
    if (rc == 0) rc = api.load(tpm->esys, parent, TR_PASSWORD, TR_NONE, TR_NONE, in_private, in_public, &object);
    if (rc == 0) {
        track(tpm, object);
        // TPM2B_AUTH: a 16-bit size (in host order), then the bytes.
        uint16_t size = (uint16_t)auth_length;
        memcpy(auth_value, &size, sizeof size);
        if (auth_length) memcpy(auth_value + 2, auth, auth_length);
        rc = api.set_auth(tpm->esys, object, auth_value);
        explicit_bzero(auth_value, sizeof auth_value);
    }
    if (rc == 0) rc = start_session(tpm, parent, pcrs ? SE_POLICY : SE_HMAC, &session);
    if (rc == 0 && pcrs) {
        rc = unmarshal(api.unmarshal_pcr_selection, pcrs, pcrs_length, &selection);
        if (rc == 0) rc = empty_digest(&pcr_digest);
        if (rc == 0) rc = api.policy_pcr(tpm->esys, session, TR_NONE, TR_NONE, TR_NONE, pcr_digest, selection);
        if (rc == 0 && with_auth_value) rc = api.policy_auth_value(tpm->esys, session, TR_NONE, TR_NONE, TR_NONE);
    }
    // The response's first parameter (the unsealed data) travels encrypted.
    if (rc == 0) rc = api.session_set_attributes(tpm->esys, session, SESSION_CONTINUE | SESSION_ENCRYPT, 0xff);
    if (rc == 0) rc = api.unseal(tpm->esys, object, session, TR_NONE, TR_NONE, &out_data);
    if (rc == 0) {
        // TPM2B_SENSITIVE_DATA: a 16-bit size (in host order, in tpm2-tss's structures), then the bytes.
        const uint8_t *sensitive = out_data;
        uint16_t host_size;
        memcpy(&host_size, sensitive, sizeof host_size);
        size_t size = host_size;
        if (size > data_capacity) {
            rc = COFFER_TPM_BUFFER_TOO_SMALL;
        } else {
            memcpy(data, sensitive + 2, size);
            *data_length = size;
        }
        explicit_bzero(out_data, 2 + size);
        api.free(out_data);
    }
    free_struct(in_public);
    free_struct(in_private);
    free_struct(selection);
    free_struct(pcr_digest);
    if (session != TR_NONE) flush_now(tpm, session);
    if (object != TR_NONE) flush_now(tpm, object);
    return rc;
}

uint32_t coffer_tpm_capability(coffer_tpm *tpm, uint32_t capability, uint32_t property, uint32_t count,
                               uint8_t *data, size_t data_capacity, size_t *data_length) {
    uint8_t more = 0;
    void *value = NULL;
    RC rc = api.get_capability(tpm->esys, TR_NONE, TR_NONE, TR_NONE, capability, property, count, &more, &value);
    if (rc != 0) return rc;
    return marshal_and_free(api.marshal_capability, value, data, data_capacity, data_length);
}
