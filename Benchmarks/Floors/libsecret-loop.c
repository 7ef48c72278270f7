// The P1 floor: the two libsecret calls Coffer's KeychainStorage makes per save + get
// (secret_service_store_sync, then secret_service_search_sync loading the secret), in a plain C
// loop with no checks. Prints one line per save+get: the time it took, in nanoseconds.
//
//   libsecret-loop OPERATIONS PAYLOAD_BYTES
#include <libsecret/secret.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void fail(const char *what, GError *error) {
    fprintf(stderr, "%s: %s\n", what, error ? error->message : "failed");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s OPERATIONS PAYLOAD_BYTES\n", argv[0]);
        return 2;
    }
    int operations = atoi(argv[1]);
    size_t payload = (size_t)atol(argv[2]);
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (!service) fail("connect", error);

    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, "service", "org.coffer.bench");
    g_hash_table_insert(attributes, "account", "bench-c");
    char *secret = malloc(payload);

    for (int i = 0; i < operations; i++) {
        memset(secret, 'a' + i % 26, payload);
        unsigned long long start = now_ns();
        SecretValue *value = secret_value_new(secret, (gssize)payload, "application/json");
        if (!secret_service_store_sync(service, NULL, attributes, "default", "bench-c (Coffer floor)", value, NULL, &error))
            fail("store", error);
        secret_value_unref(value);
        GList *found = secret_service_search_sync(service, NULL, attributes,
                                                  SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS, NULL, &error);
        if (error || !found) fail("search", error);
        SecretValue *read = secret_item_get_secret(found->data);
        gsize length = 0;
        const gchar *bytes = read ? secret_value_get(read, &length) : NULL;
        if (!bytes || length != payload || bytes[0] != secret[0]) fail("read back", NULL);
        secret_value_unref(read);
        g_list_free_full(found, g_object_unref);
        printf("%llu\n", now_ns() - start);
    }
    secret_service_clear_sync(service, NULL, attributes, NULL, NULL);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    free(secret);
    return 0;
}
