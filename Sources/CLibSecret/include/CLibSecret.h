// CLibSecret: the few Secret Service calls Coffer needs, reached through libsecret-1.so.0
// loaded with dlopen at run time. Building needs no libsecret or GLib headers; running without
// the library makes coffer_secret_load() say what is missing.
//
// Every call is synchronous (it blocks the calling thread) and takes an optional cancellable
// made by coffer_secret_cancellable_new(); cancelling it from another thread makes the call
// return COFFER_SECRET_ERROR with a G_IO_ERROR_CANCELLED error.
#ifndef COFFER_CLIBSECRET_H
#define COFFER_CLIBSECRET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Results of the calls below.
enum {
    COFFER_SECRET_OK = 0,            ///< done (for state: the default collection is unlocked)
    COFFER_SECRET_ERROR = 1,         ///< failed; the error says why
    COFFER_SECRET_LOCKED = 2,        ///< the collection or an item is locked (no prompt is shown)
    COFFER_SECRET_NO_COLLECTION = 3, ///< there is no default collection to store into
};

/// A GError, copied out: domain name, code and message. Free with coffer_secret_error_clear().
typedef struct {
    char *domain;
    int code;
    char *message;
} coffer_secret_error;

/// One attribute of an item.
typedef struct {
    const char *key;
    const char *value;
} coffer_secret_attribute;

/// One item found by a search, copied out of libsecret.
typedef struct {
    char *path;                 ///< the item's D-Bus object path
    int locked;                 ///< 1 when the item is locked (then secret is NULL)
    unsigned char *secret;      ///< the secret's bytes, or NULL when not loaded or locked
    size_t secret_length;
    char *label;
    size_t attribute_count;
    char **keys;
    char **values;
} coffer_secret_item;

/// Loads libsecret and the GLib symbols Coffer uses. Returns NULL when everything is there, or a
/// static message naming what is missing. Safe to call from any thread, any number of times.
const char *coffer_secret_load(void);

void *coffer_secret_cancellable_new(void);
void coffer_secret_cancellable_cancel(void *cancellable);
/// Whether the cancellable was cancelled (its call's deadline passed); 0 for NULL.
int coffer_secret_cancellable_is_cancelled(void *cancellable);
void coffer_secret_cancellable_free(void *cancellable);

/// Whether the default collection exists and is unlocked: OK, LOCKED, NO_COLLECTION or ERROR.
int coffer_secret_default_collection_state(void *cancellable, coffer_secret_error *error);

/// Stores (creating or replacing the item with exactly these attributes) into the default
/// collection; or, when the default collection has no such item and exactly one other collection
/// item has them, changes that item in place (LOCKED when it is locked). Returns LOCKED or
/// NO_COLLECTION instead of prompting.
int coffer_secret_store(const coffer_secret_attribute *attributes, size_t attribute_count,
                        const char *label, const unsigned char *secret, size_t secret_length,
                        const char *content_type, void *cancellable, coffer_secret_error *error);

/// Finds every item (in every collection) that has these attributes. With load_secrets, the
/// secrets of unlocked items are copied out; without load_attributes or load_labels, the
/// attributes or labels are empty (one call per item fewer each). Free the result with
/// coffer_secret_items_free().
int coffer_secret_search(const coffer_secret_attribute *attributes, size_t attribute_count,
                         int load_secrets, int load_attributes, int load_labels, void *cancellable, coffer_secret_item **items,
                         size_t *item_count, coffer_secret_error *error);

void coffer_secret_items_free(coffer_secret_item *items, size_t item_count);

/// Reads the attributes and labels of the items at these object paths (found by a search made
/// without them): one Properties.Get per item and property, sent together. Their secrets are
/// not loaded and `locked` is 0. An item deleted meanwhile makes the call fail. Free the result
/// with coffer_secret_items_free().
int coffer_secret_read(const char *const *paths, size_t path_count, void *cancellable, coffer_secret_item **items,
                       coffer_secret_error *error);

/// Who answers for the Secret Service now: the session bus's id and the unique name of the
/// process that owns org.freedesktop.secrets, as "<bus id> <unique name>". Neither is ever given
/// to another bus or process, so the text changes whenever the provider is restarted. Free *id
/// with free().
int coffer_secret_provider(void *cancellable, char **id, coffer_secret_error *error);

/// Deletes every item with these attributes. Returns LOCKED (deleting nothing) when one of them
/// is locked. *deleted receives the number of items removed.
int coffer_secret_clear(const coffer_secret_attribute *attributes, size_t attribute_count,
                        void *cancellable, size_t *deleted, coffer_secret_error *error);

/// Counts the items (locked or not, in every collection) that have these attributes, without
/// loading them: one search call, however many items match.
int coffer_secret_count(const coffer_secret_attribute *attributes, size_t attribute_count, void *cancellable,
                        size_t *count, coffer_secret_error *error);

/// Locks the default collection (used by tests and `coffer doctor`).
int coffer_secret_lock_default(void *cancellable, coffer_secret_error *error);

/// The id of the session bus the Secret Service is reached on (org.freedesktop.DBus.GetId: the
/// bus daemon's own id, the same for every process connected to it, whichever of its addresses
/// and however spelled). Free *id with free().
int coffer_secret_bus_id(void *cancellable, char **id, coffer_secret_error *error);

/// Drops libsecret's cached connection so the next call connects afresh (after the provider
/// went away and came back, for example).
void coffer_secret_disconnect(void);

void coffer_secret_error_clear(coffer_secret_error *error);

#ifdef __cplusplus
}
#endif

#endif
