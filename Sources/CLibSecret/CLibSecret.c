// See include/CLibSecret.h. The GLib and libsecret declarations below mirror their stable C ABI
// (GError and GList layouts, flag values from libsecret's public headers); no headers are needed
// to build.
#define _GNU_SOURCE
#include "CLibSecret.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint32_t domain; int code; char *message; } GErrorABI;
typedef struct GListABI { void *data; struct GListABI *next; struct GListABI *prev; } GListABI;

enum {
    SERVICE_OPEN_SESSION = 1 << 1,
    SEARCH_ALL = 1 << 1,
    COLLECTION_NONE = 0,
};

static struct {
    void *(*hash_table_new)(unsigned (*)(const void *), int (*)(const void *, const void *));
    void (*hash_table_insert)(void *, void *, void *);
    void *(*hash_table_lookup)(void *, const void *);
    void (*hash_table_unref)(void *);
    unsigned (*str_hash)(const void *);
    int (*str_equal)(const void *, const void *);
    void (*list_free)(GListABI *);
    void (*object_unref)(void *);
    void (*error_free)(GErrorABI *);
    const char *(*quark_to_string)(uint32_t);
    void *(*cancellable_new)(void);
    void (*cancellable_cancel)(void *);
    int (*cancellable_is_cancelled)(void *);

    void *(*service_get_sync)(int, void *, GErrorABI **);
    GListABI *(*service_search_sync)(void *, const void *, void *, int, void *, GErrorABI **);
    int (*service_search_for_dbus_paths_sync)(void *, const void *, void *, void *, char ***, char ***, GErrorABI **);
    void (*strfreev)(char **);
    int (*service_store_sync)(void *, const void *, void *, const char *, const char *, void *, void *, GErrorABI **);
    int (*service_lock_sync)(void *, GListABI *, void *, GListABI **, GErrorABI **);
    void (*service_disconnect)(void);
    void *(*collection_for_alias_sync)(void *, const char *, int, void *, GErrorABI **);
    void *(*collection_new_for_dbus_path_sync)(void *, const char *, int, void *, GErrorABI **);
    int (*collection_get_locked)(void *);
    int (*item_get_locked)(void *);
    int (*item_delete_sync)(void *, void *, GErrorABI **);
    void *(*item_new_for_dbus_path_sync)(void *, const char *, int, void *, GErrorABI **);
    int (*item_set_secret_sync)(void *, void *, void *, GErrorABI **);
    int (*item_set_label_sync)(void *, const char *, void *, GErrorABI **);
    void *(*value_new)(const char *, long, const char *);
    const char *(*value_get)(void *, size_t *);
    void (*value_unref)(void *);
    void *(*bus_get_sync)(int, void *, GErrorABI **);
    void *(*connection_call_sync)(void *, const char *, const char *, const char *, const char *, void *, const void *, int, int,
                                  void *, GErrorABI **);
    void *(*variant_get_child_value)(void *, size_t);
    const char *(*variant_get_string)(void *, size_t *);
    void (*variant_unref)(void *);
    void *(*proxy_get_connection)(void *);
    const char *(*proxy_get_name)(void *);
    void *(*variant_new)(const char *, ...);
    size_t (*variant_n_children)(void *);
    int (*variant_get_boolean)(void *);
    int (*variant_is_of_type)(void *, const void *);
    void *(*service_get_secrets_for_dbus_paths_sync)(void *, const char **, void *, GErrorABI **);
    void (*connection_call)(void *, const char *, const char *, const char *, const char *, void *, const void *, int, int, void *,
                            void (*)(void *, void *, void *), void *);
    void *(*connection_call_finish)(void *, void *, GErrorABI **);
    void *(*main_context_new)(void);
    void (*main_context_push_thread_default)(void *);
    void (*main_context_pop_thread_default)(void *);
    int (*main_context_iteration)(void *, int);
    void (*main_context_unref)(void *);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;

#define BIND(field, name)                                                                        \
    do {                                                                                         \
        *(void **)(&api.field) = dlsym(library, name);                                           \
        if (api.field == NULL) {                                                                 \
            load_failure = "libsecret-1.so.0 was found but lacks " name                          \
                           "; install a current libsecret-1-0 (apt-get install libsecret-1-0)"; \
            return;                                                                              \
        }                                                                                        \
    } while (0)

static void load_library(void) {
    // COFFER_LIBSECRET names another library file: for unusual installations, and for tests that
    // check what happens when libsecret is missing.
    // Only an absolute path: a bare or relative name would be looked up in the working
    // directory or the search path.
    const char *name = getenv("COFFER_LIBSECRET");
    if (name && *name && name[0] != '/') {
        load_failure = "COFFER_LIBSECRET must be an absolute path to the library file";
        return;
    }
    void *library = dlopen(name && *name ? name : "libsecret-1.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (library == NULL) {
        load_failure = "libsecret-1.so.0 is not installed; install it (Debian/Ubuntu: apt-get install "
                       "libsecret-1-0, Fedora: dnf install libsecret) or use the file backend";
        return;
    }
    // libsecret links GLib, GObject and GIO, so their symbols resolve through its handle.
    BIND(hash_table_new, "g_hash_table_new");
    BIND(hash_table_insert, "g_hash_table_insert");
    BIND(hash_table_lookup, "g_hash_table_lookup");
    BIND(hash_table_unref, "g_hash_table_unref");
    BIND(str_hash, "g_str_hash");
    BIND(str_equal, "g_str_equal");
    BIND(list_free, "g_list_free");
    BIND(object_unref, "g_object_unref");
    BIND(error_free, "g_error_free");
    BIND(quark_to_string, "g_quark_to_string");
    BIND(cancellable_new, "g_cancellable_new");
    BIND(cancellable_cancel, "g_cancellable_cancel");
    BIND(cancellable_is_cancelled, "g_cancellable_is_cancelled");
    BIND(service_get_sync, "secret_service_get_sync");
    BIND(service_search_sync, "secret_service_search_sync");
    BIND(service_search_for_dbus_paths_sync, "secret_service_search_for_dbus_paths_sync");
    BIND(strfreev, "g_strfreev");
    BIND(service_store_sync, "secret_service_store_sync");
    BIND(service_lock_sync, "secret_service_lock_sync");
    BIND(service_disconnect, "secret_service_disconnect");
    BIND(collection_for_alias_sync, "secret_collection_for_alias_sync");
    BIND(collection_new_for_dbus_path_sync, "secret_collection_new_for_dbus_path_sync");
    BIND(collection_get_locked, "secret_collection_get_locked");
    BIND(item_get_locked, "secret_item_get_locked");
    BIND(item_delete_sync, "secret_item_delete_sync");
    BIND(item_new_for_dbus_path_sync, "secret_item_new_for_dbus_path_sync");
    BIND(item_set_secret_sync, "secret_item_set_secret_sync");
    BIND(item_set_label_sync, "secret_item_set_label_sync");
    BIND(value_new, "secret_value_new");
    BIND(value_get, "secret_value_get");
    BIND(value_unref, "secret_value_unref");
    BIND(bus_get_sync, "g_bus_get_sync");
    BIND(connection_call_sync, "g_dbus_connection_call_sync");
    BIND(variant_get_child_value, "g_variant_get_child_value");
    BIND(variant_get_string, "g_variant_get_string");
    BIND(variant_unref, "g_variant_unref");
    BIND(proxy_get_connection, "g_dbus_proxy_get_connection");
    BIND(proxy_get_name, "g_dbus_proxy_get_name");
    BIND(variant_new, "g_variant_new");
    BIND(variant_n_children, "g_variant_n_children");
    BIND(variant_get_boolean, "g_variant_get_boolean");
    BIND(variant_is_of_type, "g_variant_is_of_type");
    BIND(service_get_secrets_for_dbus_paths_sync, "secret_service_get_secrets_for_dbus_paths_sync");
    BIND(connection_call, "g_dbus_connection_call");
    BIND(connection_call_finish, "g_dbus_connection_call_finish");
    BIND(main_context_new, "g_main_context_new");
    BIND(main_context_push_thread_default, "g_main_context_push_thread_default");
    BIND(main_context_pop_thread_default, "g_main_context_pop_thread_default");
    BIND(main_context_iteration, "g_main_context_iteration");
    BIND(main_context_unref, "g_main_context_unref");
}

const char *coffer_secret_load(void) {
    pthread_once(&load_once, load_library);
    return load_failure;
}

void *coffer_secret_cancellable_new(void) {
    return coffer_secret_load() ? NULL : api.cancellable_new();
}

void coffer_secret_cancellable_cancel(void *cancellable) {
    if (cancellable) api.cancellable_cancel(cancellable);
}

int coffer_secret_cancellable_is_cancelled(void *cancellable) {
    return cancellable ? api.cancellable_is_cancelled(cancellable) : 0;
}

void coffer_secret_cancellable_free(void *cancellable) {
    if (cancellable) api.object_unref(cancellable);
}

void coffer_secret_error_clear(coffer_secret_error *error) {
    if (!error) return;
    free(error->domain);
    free(error->message);
    error->domain = NULL;
    error->message = NULL;
    error->code = 0;
}

void coffer_secret_disconnect(void) {
    if (!coffer_secret_load()) api.service_disconnect();
}

// Copies a GError into *out, frees it, and returns COFFER_SECRET_ERROR.
static int take_error(GErrorABI *gerror, coffer_secret_error *out) {
    if (out) {
        const char *domain = gerror ? api.quark_to_string(gerror->domain) : NULL;
        out->domain = strdup(domain ? domain : "coffer");
        out->code = gerror ? gerror->code : 0;
        out->message = strdup(gerror && gerror->message ? gerror->message : "unknown error");
    }
    if (gerror) api.error_free(gerror);
    return COFFER_SECRET_ERROR;
}

static int static_error(const char *message, coffer_secret_error *out) {
    if (out) {
        out->domain = strdup("coffer");
        out->code = 0;
        out->message = strdup(message);
    }
    return COFFER_SECRET_ERROR;
}

static void *attribute_table(const coffer_secret_attribute *attributes, size_t count) {
    void *table = api.hash_table_new(api.str_hash, api.str_equal);
    for (size_t i = 0; i < count; i++) {
        // The table borrows the strings; they outlive every call that uses it.
        api.hash_table_insert(table, (void *)attributes[i].key, (void *)attributes[i].value);
    }
    return table;
}

static void *connect_service(void *cancellable, coffer_secret_error *error) {
    GErrorABI *gerror = NULL;
    // Only a session: SERVICE_LOAD_COLLECTIONS would load a proxy for every item of every
    // collection, which is slow on large keyrings and fails outright when another process
    // deletes an item meanwhile. The default collection is looked up by alias when needed.
    void *service = api.service_get_sync(SERVICE_OPEN_SESSION, cancellable, &gerror);
    if (service == NULL) take_error(gerror, error);
    return service;
}

static void *reply_value(void *reply);

static char *copy_string(const char *text) { return strdup(text ? text : ""); }

typedef struct {
    void *reply;
    GErrorABI *error;
    size_t *in_flight;
} property_call;

static void property_answered(void *connection, void *result, void *data) {
    property_call *call = data;
    call->reply = api.connection_call_finish(connection, result, &call->error);
    (*call->in_flight)--;
}

// The state a "(v)" answer to Properties.Get(Collection, "Locked") gives: OK or LOCKED, or -1 when
// it holds no boolean (ask another way). Takes the reply.
static int locked_state(void *reply) {
    void *locked = reply_value(reply);
    int state = api.variant_is_of_type(locked, "b") ? (api.variant_get_boolean(locked) ? COFFER_SECRET_LOCKED : COFFER_SECRET_OK) : -1;
    api.variant_unref(locked);
    api.variant_unref(reply);
    return state;
}

static int collection_state(void *service, void *cancellable, coffer_secret_error *error) {
    GErrorABI *gerror = NULL;
    // Fastest, one cheap round trip: the Locked property of the provider's object for the alias
    // (a proxy object would fetch every property, the collection's list of items included).
    void *reply = api.connection_call_sync(api.proxy_get_connection(service), api.proxy_get_name(service),
                                           "/org/freedesktop/secrets/aliases/default", "org.freedesktop.DBus.Properties", "Get",
                                           api.variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"), "(v)",
                                           0 /* G_DBUS_CALL_FLAGS_NONE */, -1, cancellable, &gerror);
    if (reply) {
        int state = locked_state(reply);
        if (state >= 0) return state;  // otherwise ask the slower way below
    } else {
        api.error_free(gerror);
        gerror = NULL;
    }
    // Otherwise the provider's object for the alias itself (what store uses). Any failure falls
    // back to resolving the alias, which tells "no collection" from an error.
    void *collection = api.collection_new_for_dbus_path_sync(service, "/org/freedesktop/secrets/aliases/default",
                                                             COLLECTION_NONE, cancellable, &gerror);
    if (collection == NULL || gerror) {
        if (gerror) api.error_free(gerror);
        gerror = NULL;
        if (collection) api.object_unref(collection);
        collection = api.collection_for_alias_sync(service, "default", COLLECTION_NONE, cancellable, &gerror);
        if (gerror) return take_error(gerror, error);
        if (collection == NULL) return COFFER_SECRET_NO_COLLECTION;
    }
    int locked = api.collection_get_locked(collection);
    api.object_unref(collection);
    return locked ? COFFER_SECRET_LOCKED : COFFER_SECRET_OK;
}

int coffer_secret_default_collection_state(void *cancellable, coffer_secret_error *error) {
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    void *service = connect_service(cancellable, error);
    if (!service) return COFFER_SECRET_ERROR;
    int state = collection_state(service, cancellable, error);
    api.object_unref(service);
    return state;
}

// One string answer of the bus daemon itself (GetId, GetNameOwner), copied out.
static int ask_bus(void *connection, const char *method, void *arguments, void *cancellable, char **answer, coffer_secret_error *error) {
    GErrorABI *gerror = NULL;
    void *reply = api.connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
                                           arguments, NULL, 0 /* G_DBUS_CALL_FLAGS_NONE */, -1, cancellable, &gerror);
    if (!reply) return take_error(gerror, error);
    void *value = api.variant_get_child_value(reply, 0);
    const char *found = value && api.variant_is_of_type(value, "s") ? api.variant_get_string(value, NULL) : NULL;
    *answer = found ? strdup(found) : NULL;
    if (value) api.variant_unref(value);
    api.variant_unref(reply);
    return *answer ? COFFER_SECRET_OK : static_error("the session bus gave no answer", error);
}

// The session bus (loading libsecret first), or NULL with the error set. The caller unrefs it.
static void *session_bus(void *cancellable, coffer_secret_error *error) {
    const char *failure = coffer_secret_load();
    if (failure) {
        static_error(failure, error);
        return NULL;
    }
    GErrorABI *gerror = NULL;
    void *connection = api.bus_get_sync(2 /* G_BUS_TYPE_SESSION */, cancellable, &gerror);
    if (!connection) take_error(gerror, error);
    return connection;
}

int coffer_secret_bus_id(void *cancellable, char **id, coffer_secret_error *error) {
    *id = NULL;
    void *connection = session_bus(cancellable, error);
    if (!connection) return COFFER_SECRET_ERROR;
    // org.freedesktop.DBus.GetId: the bus's own id, shared by every address it listens on (the
    // connection's GUID is the address's, and differs between two addresses of one bus).
    int status = ask_bus(connection, "GetId", NULL, cancellable, id, error);
    api.object_unref(connection);
    return status;
}

static size_t path_count(char **paths) {
    size_t count = 0;
    while (paths && paths[count]) count++;
    return count;
}

static int read_items(void *service, char **paths, size_t count, int locked, int load_attributes, int load_labels,
                      void *cancellable, coffer_secret_item *out, coffer_secret_error *error);

// gnome-keyring shows the attributes of an item in a keyring that is still locked as loaded from
// disk only hashed: "gkr:compat:hashed:<name>" = a digest of the value. The search matched those
// digests already, so a hashed attribute counts as holding its name's value.
static const char hashed_prefix[] = "gkr:compat:hashed:";

// Whether `item` holds exactly these attributes (gnome-keyring's xdg:schema left out, as
// read_items leaves it out; a hashed attribute stands for its name, see above).
static int has_exactly(const coffer_secret_item *item, const coffer_secret_attribute *attributes, size_t attribute_count) {
    if (item->attribute_count != attribute_count) return 0;
    for (size_t a = 0; a < attribute_count; a++) {
        int found = 0;
        for (size_t k = 0; k < item->attribute_count && !found; k++) {
            const char *key = item->keys[k];
            if (strncmp(key, hashed_prefix, sizeof hashed_prefix - 1) == 0) {
                found = strcmp(key + sizeof hashed_prefix - 1, attributes[a].key) == 0;
            } else {
                found = strcmp(key, attributes[a].key) == 0 && strcmp(item->values[k], attributes[a].value) == 0;
            }
        }
        if (!found) return 0;
    }
    return 1;
}

// Whether the item at `item_path` is in the collection at `collection` (NULL: in none).
static int in_collection(const char *item_path, const char *collection) {
    size_t length = collection ? strlen(collection) : 0;
    return collection && strncmp(item_path, collection, length) == 0 && item_path[length] == '/';
}

// gnome-keyring's "session" collection lives in the daemon's memory only: it is gone when the
// daemon stops.
static const char volatile_collection[] = "/org/freedesktop/secrets/collection/session";

// The default collection's Locked property and its path (ReadAlias), asked together so that a
// store waits one round trip for both. Each answer (or error) is left in its call.
static void default_locked_and_path(void *service, void *cancellable, property_call *locked, property_call *alias) {
    void *context = api.main_context_new();
    api.main_context_push_thread_default(context);
    size_t in_flight = 2;
    locked->in_flight = alias->in_flight = &in_flight;
    api.connection_call(api.proxy_get_connection(service), api.proxy_get_name(service), "/org/freedesktop/secrets/aliases/default",
                        "org.freedesktop.DBus.Properties", "Get", api.variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"),
                        "(v)", 0 /* G_DBUS_CALL_FLAGS_NONE */, -1, cancellable, property_answered, locked);
    api.connection_call(api.proxy_get_connection(service), api.proxy_get_name(service), "/org/freedesktop/secrets",
                        "org.freedesktop.Secret.Service", "ReadAlias", api.variant_new("(s)", "default"), "(o)",
                        0 /* G_DBUS_CALL_FLAGS_NONE */, -1, cancellable, property_answered, alias);
    while (in_flight > 0) api.main_context_iteration(context, 1);
    api.main_context_pop_thread_default(context);
    api.main_context_unref(context);
}

// Where a store goes. The Secret Service's CreateItem replaces an item of the same attributes
// only in the collection it is sent to, the default one; an item left in another collection
// (the default changed since it was written) would stay beside a new copy, and readers would
// find two. So when the default collection (`home`) holds no item with exactly these attributes
// and one other collection holds exactly one, that item is the one to change: *path is set (the
// caller frees it) and *locked says whether it is locked; *move is set when that collection is
// gnome-keyring's in-memory "session" one, which a changed in place item would not outlive: the
// caller stores into the default collection and then deletes it. Otherwise *path stays NULL:
// store into the default collection. Two or more copies elsewhere are left as they are (readers
// report them); a new one goes to the default collection, as before.
static int item_to_replace(void *service, const char *home, const coffer_secret_attribute *attributes, size_t attribute_count,
                           void *cancellable, char **path, int *locked, int *move, char **label, coffer_secret_error *error) {
    *path = NULL;
    *move = 0;
    *label = NULL;
    void *table = attribute_table(attributes, attribute_count);
    GErrorABI *gerror = NULL;
    char **unlocked_paths = NULL, **locked_paths = NULL;
    api.service_search_for_dbus_paths_sync(service, NULL, table, cancellable, &unlocked_paths, &locked_paths, &gerror);
    api.hash_table_unref(table);
    if (gerror) return take_error(gerror, error);
    size_t unlocked_count = path_count(unlocked_paths), count = unlocked_count + path_count(locked_paths);
    int status = COFFER_SECRET_OK;
    char **paths = calloc(count ? count : 1, sizeof(char *));
    size_t outside = 0;
    for (size_t i = 0; i < count; i++) {
        paths[i] = i < unlocked_count ? unlocked_paths[i] : locked_paths[i - unlocked_count];
        if (!in_collection(paths[i], home)) outside++;
    }
    // Only items outside the default collection need a closer look (their attributes and label);
    // when every item found is in it, the store goes there, as it always did.
    if (home && outside > 0) {
        coffer_secret_item *items = calloc(count, sizeof(coffer_secret_item));
        status = read_items(service, paths, count, 0, 1, 1, cancellable, items, error);
        size_t in_default = 0, elsewhere = 0, chosen = 0;
        for (size_t i = 0; status == COFFER_SECRET_OK && i < count; i++) {
            if (!has_exactly(&items[i], attributes, attribute_count)) continue;
            if (in_collection(paths[i], home)) {
                in_default++;
            } else {
                elsewhere++;
                chosen = i;
            }
        }
        if (status == COFFER_SECRET_OK && in_default == 0 && elsewhere == 1) {
            *path = strdup(paths[chosen]);
            *locked = chosen >= unlocked_count;
            *move = in_collection(paths[chosen], volatile_collection) && strcmp(home, volatile_collection) != 0;
            *label = strdup(items[chosen].label ? items[chosen].label : "");
        }
        coffer_secret_items_free(items, count);  // entries not reached are still zeroed
    }
    free(paths);
    api.strfreev(unlocked_paths);
    api.strfreev(locked_paths);
    return status;
}

// Changes the item at `path` in place: its label when that differs, then its secret (so that a
// failure reported never follows a value already written).
static int replace_item(void *service, const char *path, const char *old_label, const char *label, void *value, void *cancellable,
                        coffer_secret_error *error) {
    GErrorABI *gerror = NULL;
    void *item = api.item_new_for_dbus_path_sync(service, path, 0 /* SECRET_ITEM_NONE */, cancellable, &gerror);
    if (!item) return take_error(gerror, error);
    int done = strcmp(old_label, label) == 0 || api.item_set_label_sync(item, label, cancellable, &gerror);
    if (done) done = api.item_set_secret_sync(item, value, cancellable, &gerror);
    api.object_unref(item);
    return done ? COFFER_SECRET_OK : take_error(gerror, error);
}

int coffer_secret_store(const coffer_secret_attribute *attributes, size_t attribute_count, const char *label,
                        const unsigned char *secret, size_t secret_length, const char *content_type,
                        void *cancellable, coffer_secret_error *error) {
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    void *service = connect_service(cancellable, error);
    if (!service) return COFFER_SECRET_ERROR;
    property_call locked_call = {0}, alias_call = {0};
    default_locked_and_path(service, cancellable, &locked_call, &alias_call);
    int state = -1;
    if (locked_call.reply) {
        state = locked_state(locked_call.reply);
    } else if (locked_call.error) {
        api.error_free(locked_call.error);
    }
    char *home = NULL;
    if (alias_call.reply) {
        void *alias = api.variant_get_child_value(alias_call.reply, 0);
        home = strdup(api.variant_get_string(alias, NULL));
        api.variant_unref(alias);
        api.variant_unref(alias_call.reply);
    } else if (alias_call.error) {
        api.error_free(alias_call.error);
    }
    if (state < 0) state = collection_state(service, cancellable, error);  // the slower ways
    if (state != COFFER_SECRET_OK) {
        free(home);
        api.object_unref(service);
        return state;
    }
    char *path = NULL, *old_label = NULL;
    int path_locked = 0, move = 0;
    state = item_to_replace(service, home, attributes, attribute_count, cancellable, &path, &path_locked, &move, &old_label, error);
    if (state != COFFER_SECRET_OK || (path && path_locked)) {
        free(home);
        free(path);
        free(old_label);
        api.object_unref(service);
        return state != COFFER_SECRET_OK ? state : COFFER_SECRET_LOCKED;  // the one copy sits in a locked collection
    }
    void *value = api.value_new((const char *)secret, (long)secret_length, content_type);
    int status;
    if (path && !move) {
        status = replace_item(service, path, old_label, label, value, cancellable, error);
    } else {
        // Into the collection looked at above, not whatever "default" names by now: a default
        // moved meanwhile would otherwise get a second copy.
        void *table = attribute_table(attributes, attribute_count);
        GErrorABI *gerror = NULL;
        int stored = api.service_store_sync(service, NULL, table, home ? home : "default", label, value, cancellable, &gerror);
        api.hash_table_unref(table);
        status = stored ? COFFER_SECRET_OK : take_error(gerror, error);
        // Out of the in-memory collection, once the value is safe in the default one (a process
        // stopped in between leaves two copies, which readers report; none is lost).
        if (status == COFFER_SECRET_OK && path && move) {
            void *item = api.item_new_for_dbus_path_sync(service, path, 0 /* SECRET_ITEM_NONE */, cancellable, &gerror);
            if (!item || !api.item_delete_sync(item, cancellable, &gerror)) status = take_error(gerror, error);
            if (item) api.object_unref(item);
        }
    }
    free(home);
    api.value_unref(value);
    free(path);
    free(old_label);
    api.object_unref(service);
    return status;
}




/// Every item, in every collection, with these attributes (a list of SecretItem the caller
/// unrefs and frees), for deleting them. Never SEARCH_UNLOCK: locked items are returned locked,
/// nothing prompts.
static int find_items(const coffer_secret_attribute *attributes, size_t attribute_count, void *cancellable, GListABI **found,
                      coffer_secret_error *error) {
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    void *service = connect_service(cancellable, error);
    if (!service) return COFFER_SECRET_ERROR;
    void *table = attribute_table(attributes, attribute_count);
    GErrorABI *gerror = NULL;
    *found = api.service_search_sync(service, NULL, table, SEARCH_ALL, cancellable, &gerror);
    api.hash_table_unref(table);
    api.object_unref(service);
    return gerror ? take_error(gerror, error) : COFFER_SECRET_OK;
}

// Reading an item's properties: libsecret's search makes a proxy object per item, whose
// Properties.GetAll gnome-keyring answers slowly (about 0.85 ms an item, computing every
// property), plus a signal subscription each; a listing of a thousand items took more than a
// second. Coffer asks for the two properties it uses, Attributes and Label, with plain
// Properties.Get calls, many in flight at once on a main context of this thread's own.

// Sends Properties.Get(name) for every path, at most 64 waiting at a time; calls[i] receives
// path i's answer (a "(v)" reply, or an error).
static void get_properties(void *service, char **paths, size_t count, const char *name, void *cancellable, property_call *calls) {
    void *context = api.main_context_new();
    api.main_context_push_thread_default(context);
    size_t in_flight = 0, sent = 0;
    while (sent < count || in_flight > 0) {
        while (sent < count && in_flight < 64) {
            calls[sent].in_flight = &in_flight;
            in_flight++;
            api.connection_call(api.proxy_get_connection(service), api.proxy_get_name(service), paths[sent],
                                "org.freedesktop.DBus.Properties", "Get", api.variant_new("(ss)", "org.freedesktop.Secret.Item", name),
                                "(v)" /* a GVariantType is its type string */, 0 /* G_DBUS_CALL_FLAGS_NONE */, -1, cancellable,
                                property_answered, &calls[sent]);
            sent++;
        }
        api.main_context_iteration(context, 1);
    }
    api.main_context_pop_thread_default(context);
    api.main_context_unref(context);
}

// The value inside a "(v)" reply; the caller unrefs it.
static void *reply_value(void *reply) {
    void *boxed = api.variant_get_child_value(reply, 0);
    void *value = api.variant_get_child_value(boxed, 0);
    api.variant_unref(boxed);
    return value;
}

// Fills out[i] from the answers for path i; the first error is returned (and the rest freed).
static int read_items(void *service, char **paths, size_t count, int locked, int load_attributes, int load_labels,
                      void *cancellable, coffer_secret_item *out, coffer_secret_error *error) {
    if (count == 0) return COFFER_SECRET_OK;
    property_call *attributes = calloc(count, sizeof(property_call));
    property_call *labels = calloc(count, sizeof(property_call));
    if (load_attributes) get_properties(service, paths, count, "Attributes", cancellable, attributes);
    if (load_labels) get_properties(service, paths, count, "Label", cancellable, labels);
    int status = COFFER_SECRET_OK;
    for (size_t i = 0; i < count; i++) {
        if (status == COFFER_SECRET_OK && load_attributes && !attributes[i].reply) {
            status = take_error(attributes[i].error, error);
            attributes[i].error = NULL;
        } else if (status == COFFER_SECRET_OK && load_labels && !labels[i].reply) {
            status = take_error(labels[i].error, error);
            labels[i].error = NULL;
        }
        if (status == COFFER_SECRET_OK) {
            coffer_secret_item *item = &out[i];
            memset(item, 0, sizeof *item);
            item->path = copy_string(paths[i]);
            item->locked = locked;
            void *label = load_labels ? reply_value(labels[i].reply) : NULL;
            item->label = copy_string(label && api.variant_is_of_type(label, "s") ? api.variant_get_string(label, NULL) : NULL);
            if (label) api.variant_unref(label);
            void *map = load_attributes ? reply_value(attributes[i].reply) : NULL;
            // A provider that answers with anything but a{ss} has no attributes Coffer can read.
            size_t pairs = map && api.variant_is_of_type(map, "a{ss}") ? api.variant_n_children(map) : 0;
            item->keys = calloc(pairs ? pairs : 1, sizeof(char *));
            item->values = calloc(pairs ? pairs : 1, sizeof(char *));
            for (size_t p = 0; p < pairs; p++) {
                void *entry = api.variant_get_child_value(map, p);
                void *key = api.variant_get_child_value(entry, 0);
                void *value = api.variant_get_child_value(entry, 1);
                // gnome-keyring records xdg:schema on items stored without a schema (as Coffer
                // stores them); it is not one of the item's attributes as given, so it is left out.
                if (strcmp(api.variant_get_string(key, NULL), "xdg:schema") != 0) {
                    item->keys[item->attribute_count] = copy_string(api.variant_get_string(key, NULL));
                    item->values[item->attribute_count] = copy_string(api.variant_get_string(value, NULL));
                    item->attribute_count++;
                }
                api.variant_unref(key);
                api.variant_unref(value);
                api.variant_unref(entry);
            }
            if (map) api.variant_unref(map);
        }
        if (attributes[i].reply) api.variant_unref(attributes[i].reply);
        if (labels[i].reply) api.variant_unref(labels[i].reply);
        if (attributes[i].error) api.error_free(attributes[i].error);
        if (labels[i].error) api.error_free(labels[i].error);
    }
    free(attributes);
    free(labels);
    return status;
}

// Connects, and finds the paths of the items with these attributes in every collection, never
// unlocking (locked items are listed as locked). On return *service is the connection (NULL when
// none could be made), which the caller releases, and the path lists are the caller's to free.
static int find_paths(const coffer_secret_attribute *attributes, size_t attribute_count, void *cancellable, void **service,
                      char ***unlocked, char ***locked, coffer_secret_error *error) {
    *service = NULL;
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    *service = connect_service(cancellable, error);
    if (!*service) return COFFER_SECRET_ERROR;
    void *table = attribute_table(attributes, attribute_count);
    GErrorABI *gerror = NULL;
    api.service_search_for_dbus_paths_sync(*service, NULL, table, cancellable, unlocked, locked, &gerror);
    api.hash_table_unref(table);
    return gerror ? take_error(gerror, error) : COFFER_SECRET_OK;
}

int coffer_secret_search(const coffer_secret_attribute *attributes, size_t attribute_count, int load_secrets,
                         int load_attributes, int load_labels, void *cancellable, coffer_secret_item **items, size_t *item_count,
                         coffer_secret_error *error) {
    *items = NULL;
    *item_count = 0;
    // One call for the paths, two per item for its properties (sent together), one for all the
    // unlocked items' secrets.
    void *service = NULL;
    char **unlocked = NULL, **locked = NULL;
    int status = find_paths(attributes, attribute_count, cancellable, &service, &unlocked, &locked, error);
    if (!service) return status;
    GErrorABI *gerror = NULL;
    size_t count = path_count(unlocked) + path_count(locked);
    *items = calloc(count ? count : 1, sizeof(coffer_secret_item));
    size_t unlocked_count = path_count(unlocked);
    if (status == COFFER_SECRET_OK) status = read_items(service, unlocked, unlocked_count, 0, load_attributes, load_labels, cancellable, *items, error);
    if (status == COFFER_SECRET_OK) status = read_items(service, locked, count - unlocked_count, 1, load_attributes, load_labels, cancellable, *items + unlocked_count, error);
    if (status == COFFER_SECRET_OK && load_secrets && unlocked_count > 0) {
        void *secrets = api.service_get_secrets_for_dbus_paths_sync(service, (const char **)unlocked, cancellable, &gerror);
        if (!secrets) {
            status = take_error(gerror, error);
        } else {
            for (size_t i = 0; i < unlocked_count; i++) {
                void *value = api.hash_table_lookup(secrets, unlocked[i]);
                coffer_secret_item *item = &(*items)[i];
                if (!value) {  // deleted since the search: the caller searches again
                    status = static_error("No such secret item (deleted during the search)", error);
                    break;
                }
                size_t length = 0;
                const char *bytes = api.value_get(value, &length);
                item->secret = malloc(length ? length : 1);
                if (length) memcpy(item->secret, bytes, length);
                item->secret_length = length;
            }
            api.hash_table_unref(secrets);
        }
    }
    api.strfreev(unlocked);
    api.strfreev(locked);
    api.object_unref(service);
    if (status == COFFER_SECRET_OK) {
        *item_count = count;
    } else {
        coffer_secret_items_free(*items, count);  // entries not reached are still zeroed
        *items = NULL;
    }
    return status;
}

int coffer_secret_read(const char *const *paths, size_t path_count, void *cancellable, coffer_secret_item **items,
                       coffer_secret_error *error) {
    *items = NULL;
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    void *service = connect_service(cancellable, error);
    if (!service) return COFFER_SECRET_ERROR;
    *items = calloc(path_count ? path_count : 1, sizeof(coffer_secret_item));
    int status = read_items(service, (char **)paths, path_count, 0, 1, 1, cancellable, *items, error);
    api.object_unref(service);
    if (status != COFFER_SECRET_OK) {
        coffer_secret_items_free(*items, path_count);  // entries not reached are still zeroed
        *items = NULL;
    }
    return status;
}

int coffer_secret_provider(void *cancellable, char **id, coffer_secret_error *error) {
    *id = NULL;
    void *connection = session_bus(cancellable, error);
    if (!connection) return COFFER_SECRET_ERROR;
    // Asked of the bus each time: a proxy's cached owner is only updated by signals, which no
    // main loop of ours delivers.
    char *bus = NULL, *owner = NULL;
    int status = ask_bus(connection, "GetId", NULL, cancellable, &bus, error);
    if (status == COFFER_SECRET_OK) {
        status = ask_bus(connection, "GetNameOwner", api.variant_new("(s)", "org.freedesktop.secrets"), cancellable, &owner, error);
    }
    api.object_unref(connection);
    if (status == COFFER_SECRET_OK) {
        size_t length = strlen(bus) + 1 + strlen(owner) + 1;
        *id = malloc(length);
        snprintf(*id, length, "%s %s", bus, owner);
    }
    free(bus);
    free(owner);
    return status;
}

void coffer_secret_items_free(coffer_secret_item *items, size_t item_count) {
    if (!items) return;
    for (size_t i = 0; i < item_count; i++) {
        if (items[i].secret) {
            memset(items[i].secret, 0, items[i].secret_length);  // do not leave secrets in freed memory
            free(items[i].secret);
        }
        free(items[i].label);
        free(items[i].path);
        for (size_t a = 0; a < items[i].attribute_count; a++) {
            free(items[i].keys[a]);
            free(items[i].values[a]);
        }
        free(items[i].keys);
        free(items[i].values);
    }
    free(items);
}

int coffer_secret_clear(const coffer_secret_attribute *attributes, size_t attribute_count, void *cancellable,
                        size_t *deleted, coffer_secret_error *error) {
    *deleted = 0;
    GListABI *found = NULL;
    int result = find_items(attributes, attribute_count, cancellable, &found, error);
    if (result != COFFER_SECRET_OK) return result;

    GErrorABI *gerror = NULL;
    for (GListABI *node = found; node; node = node->next) {
        if (api.item_get_locked(node->data)) result = COFFER_SECRET_LOCKED;
    }
    for (GListABI *node = found; node && result == COFFER_SECRET_OK; node = node->next) {
        if (api.item_delete_sync(node->data, cancellable, &gerror)) {
            (*deleted)++;
        } else {
            result = take_error(gerror, error);
            gerror = NULL;
        }
    }
    for (GListABI *node = found; node; node = node->next) api.object_unref(node->data);
    api.list_free(found);
    return result;
}


int coffer_secret_count(const coffer_secret_attribute *attributes, size_t attribute_count, void *cancellable,
                        size_t *count, coffer_secret_error *error) {
    *count = 0;
    void *service = NULL;
    char **unlocked = NULL, **locked = NULL;
    int status = find_paths(attributes, attribute_count, cancellable, &service, &unlocked, &locked, error);
    if (service) api.object_unref(service);
    *count = path_count(unlocked) + path_count(locked);
    api.strfreev(unlocked);
    api.strfreev(locked);
    return status;
}

int coffer_secret_lock_default(void *cancellable, coffer_secret_error *error) {
    const char *failure = coffer_secret_load();
    if (failure) return static_error(failure, error);
    void *service = connect_service(cancellable, error);
    if (!service) return COFFER_SECRET_ERROR;
    GErrorABI *gerror = NULL;
    void *collection = api.collection_for_alias_sync(service, "default", COLLECTION_NONE, cancellable, &gerror);
    int result = COFFER_SECRET_OK;
    if (gerror) {
        result = take_error(gerror, error);
    } else if (collection == NULL) {
        result = COFFER_SECRET_NO_COLLECTION;
    } else {
        GListABI node = {collection, NULL, NULL};
        GListABI *locked = NULL;
        api.service_lock_sync(service, &node, cancellable, &locked, &gerror);
        if (locked) {
            for (GListABI *n = locked; n; n = n->next) api.object_unref(n->data);
            api.list_free(locked);
        }
        if (gerror) result = take_error(gerror, error);
        api.object_unref(collection);
    }
    api.object_unref(service);
    return result;
}
