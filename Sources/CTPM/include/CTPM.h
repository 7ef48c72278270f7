// CTPM: the few TPM 2.0 operations Coffer needs, reached through tpm2-tss (libtss2-esys.so.0,
// libtss2-tctildr.so.0, libtss2-mu.so.0) loaded with dlopen at run time. Building needs no TPM
// headers; running without the libraries makes coffer_tpm_load() say what is missing.
//
// TPM structures cross this boundary only in the TPM's own wire format (TPM 2.0 Part 2
// marshalling): Swift writes templates as bytes, libtss2-mu turns them into tpm2-tss's
// structures, and the TPM's answers come back as bytes. No structure layout is assumed here
// beyond "TPM2B: a 16-bit size, then the bytes".
//
// Every call is synchronous and blocks the calling thread until the TPM answers.
#ifndef COFFER_CTPM_H
#define COFFER_CTPM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads tpm2-tss. Returns NULL when everything is there, or a static message naming what is
/// missing. Safe to call from any thread, any number of times. tpm2-tss's own logging is turned
/// off (TSS2_LOG is set to all+none): its trace level logs the unsealed key.
const char *coffer_tpm_load(void);

/// One connection to a TPM, with the transient objects and sessions opened through it; closing
/// it flushes them all.
typedef struct coffer_tpm coffer_tpm;

/// Return codes: 0 is success; otherwise a TSS2_RC (layer in bits 16-23: 0 the TPM itself,
/// 7 ESAPI, 9 marshalling, 10 the TCTI), or COFFER_TPM_NOT_LOADED.
enum { COFFER_TPM_NOT_LOADED = 0xC0FF0001, COFFER_TPM_BUFFER_TOO_SMALL = 0xC0FF0002 };

/// Connects, in tpm2-tss's TCTI syntax (`device:/dev/tpmrm0`, `swtpm:path=/run/swtpm.sock`);
/// NULL lets the TCTI loader choose (the kernel's resource manager first).
uint32_t coffer_tpm_open(const char *tcti, coffer_tpm **tpm);

/// Flushes every transient object and session opened through `tpm`, and disconnects.
void coffer_tpm_close(coffer_tpm *tpm);

/// Creates a primary key in the owner hierarchy from `template_` (a marshalled TPM2B_PUBLIC),
/// or, when `persistent_handle` is not 0, uses the key at that persistent handle. *parent
/// receives a handle for the calls below; *name (a marshalled TPM2B_NAME) the key's name.
uint32_t coffer_tpm_parent(coffer_tpm *tpm, const uint8_t *template_, size_t template_length,
                           uint32_t persistent_handle, uint32_t *parent, uint8_t *name, size_t name_capacity,
                           size_t *name_length);

/// The policy digest of "these PCRs as they are now" (a marshalled TPML_PCR_SELECTION) and,
/// with `with_auth_value`, "and the object's auth value", from a trial session.
uint32_t coffer_tpm_policy_digest(coffer_tpm *tpm, const uint8_t *pcrs, size_t pcrs_length, int with_auth_value,
                                  uint8_t *digest, size_t digest_capacity, size_t *digest_length);

/// Creates a sealed data object under `parent`: `template_` a marshalled TPM2B_PUBLIC,
/// `sensitive` a marshalled TPM2B_SENSITIVE_CREATE (the auth value and the data). Sent in a
/// session salted with the parent's key, with the sensitive part encrypted. The object's public
/// and private blobs come back marshalled (TPM2B_PUBLIC, TPM2B_PRIVATE).
uint32_t coffer_tpm_create_sealed(coffer_tpm *tpm, uint32_t parent, const uint8_t *template_,
                                  size_t template_length, const uint8_t *sensitive, size_t sensitive_length,
                                  uint8_t *public_, size_t public_capacity, size_t *public_length,
                                  uint8_t *private_, size_t private_capacity, size_t *private_length);

/// Loads a sealed object under `parent` and unseals it, in a session salted with the parent's
/// key whose response is encrypted. With `pcrs` (a marshalled TPML_PCR_SELECTION) a policy
/// session satisfies "these PCRs" (and, with `with_auth_value`, the auth value); otherwise the
/// auth value alone authorizes. The data (at most `data_capacity` bytes) goes to `data`.
uint32_t coffer_tpm_unseal(coffer_tpm *tpm, uint32_t parent, const uint8_t *public_, size_t public_length,
                           const uint8_t *private_, size_t private_length, const uint8_t *auth, size_t auth_length,
                           const uint8_t *pcrs, size_t pcrs_length, int with_auth_value, uint8_t *data,
                           size_t data_capacity, size_t *data_length);

/// TPM2_GetCapability, the answer as a marshalled TPMS_CAPABILITY_DATA.
uint32_t coffer_tpm_capability(coffer_tpm *tpm, uint32_t capability, uint32_t property, uint32_t count,
                               uint8_t *data, size_t data_capacity, size_t *data_length);

/// Overwrites `length` bytes at `bytes` with zeros in a way the compiler keeps.
void coffer_tpm_wipe(void *bytes, size_t length);

#ifdef __cplusplus
}
#endif

#endif
