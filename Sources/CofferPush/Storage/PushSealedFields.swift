import CofferMFAEngine

// What the SQL storages (SQLite, PostgreSQL) seal a push record's secret fields under: the
// record's id and the columns that decide what the field is used for. A sealed value copied to
// another row, or a row whose endpoint was redirected, no longer opens. PostgreSQL puts the
// owner in front.

extension PushCredential {
    /// The identity of the shared secret: bound to the issuer, account, endpoint, platform,
    /// policies and lock.
    package var sealedSecretIdentity: String {
        RowBinding.identity("push/credential/\(id)/secret", columns: [
            issuer, accountName, serverEndpoint, platform.rawValue, RowBinding.optional(policies), String(isLocked),
        ])
    }
}

extension PushNotification {
    /// The identities of the challenge and of the load balancer cookie: bound to the
    /// notification, its credential, its message id and what decides how it is shown and
    /// answered (type, numbers, context, time to live, time, whether pending or approved), so
    /// an old prompt cannot be revived or its numbers changed by editing its row.
    package var sealedFieldIdentities: (challenge: String, cookie: String) {
        let base = "push/notification/\(id)"
        let columns = [credentialId, messageId, pushType.rawValue, RowBinding.optional(numbersChallenge), RowBinding.optional(contextInfo),
                       String(ttl), String(createdAt.timeIntervalSinceReferenceDate), String(pending), String(approved)]
        return (RowBinding.identity(base + "/challenge", columns: columns), RowBinding.identity(base + "/amlb", columns: columns))
    }
}

extension PushDeviceToken {
    /// The identity of the token.
    package var sealedIdentity: String { Self.sealedIdentity(id: id) }

    /// The identity of the token stored with `id` (read before the token is opened).
    package static func sealedIdentity(id: String) -> String { "push/token/\(id)" }
}
