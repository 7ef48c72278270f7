import CofferMFAEngine

// What the SQL storages (SQLite, PostgreSQL) seal a push record's secret fields under: the
// record's id and the columns that decide what the field is used for. A sealed value copied to
// another row, or a row whose endpoint was redirected, no longer opens. PostgreSQL puts the
// owner in front.

extension PushCredential {
    /// The identity of the shared secret: bound to the issuer, account, endpoint and platform.
    package var sealedSecretIdentity: String {
        RowBinding.identity("push/credential/\(id)/secret", columns: [issuer, accountName, serverEndpoint, platform.rawValue])
    }
}

extension PushNotification {
    /// The identities of the challenge and of the load balancer cookie: bound to the
    /// notification, its credential and its message id.
    package var sealedFieldIdentities: (challenge: String, cookie: String) {
        let base = "push/notification/\(id)"
        let columns = [credentialId, messageId]
        return (RowBinding.identity(base + "/challenge", columns: columns), RowBinding.identity(base + "/amlb", columns: columns))
    }
}

extension PushDeviceToken {
    /// The identity of the token.
    package var sealedIdentity: String { Self.sealedIdentity(id: id) }

    /// The identity of the token stored with `id` (read before the token is opened).
    package static func sealedIdentity(id: String) -> String { "push/token/\(id)" }
}
