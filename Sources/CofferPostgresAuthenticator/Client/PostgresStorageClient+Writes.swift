import CofferPostgres
import CofferAuthenticator
import CofferStorage
import Foundation
import PostgresNIO

extension PostgresStorageClient {
    // MARK: - Accounts

    /// Stores the account, or updates the stored one with the same issuer and account name.
    public func save(_ account: Account) async throws {
        guard account.details != nil else { try await execute("save an account", try Self.upsert(account, details: nil, owner: owner)); return }
        let owner = self.owner, keyAlias = self.keyAlias, logger = database.logger
        try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: "save an account") {
            let details = try await self.sealedDetails([account])
            try await self.transaction("save an account") { connection in
                try await KeyRingCheck.require(details.compactMap { $0 }, alias: keyAlias, of: self.keys, on: connection, logger: logger)
                try await connection.rows(try Self.upsert(account, details: details[0], owner: owner), logger: logger)
            }
        }
    }

    /// Removes the account. One that still owns mechanisms is refused
    /// (`StorageClientError.stillOwnsRecords`) unless `withItsRecords`: then it
    /// is removed with its mechanisms and their notifications in one transaction, provided every
    /// one of them can be read. Returns whether there was such an account.
    @discardableResult
    public func delete(_ account: Account, withItsRecords: Bool = false) async throws -> Bool {
        let owner = self.owner, what = "The account \(account.issuer): \(account.accountName)"
        if withItsRecords {
            return try await transaction("remove an account with its records") { connection in
                // Locking the account row first makes a mechanism being added to it wait (its
                // foreign key check needs the row): nothing joins what is being removed.
                let found = try await connection.rows("""
                    SELECT 1 FROM coffer_accounts WHERE owner = \(owner) AND issuer = \(account.issuer)
                    AND account_name = \(account.accountName) FOR UPDATE
                    """, logger: self.database.logger)
                guard !found.isEmpty else { return false }
                let uuids = try await self.lockReadable(mechanisms: """
                    \(unescaped: StoredMechanism.select)WHERE owner = \(owner) AND issuer = \(account.issuer)
                    AND account_name = \(account.accountName) FOR UPDATE
                    """, what: what, on: connection)
                try await self.deleteLocked(mechanisms: uuids, on: connection)
                try await connection.rows("""
                    DELETE FROM coffer_accounts WHERE owner = \(owner) AND issuer = \(account.issuer) AND account_name = \(account.accountName)
                    """, logger: self.database.logger)
                return true
            }
        }
        let deleted = try await execute("remove an account", """
            DELETE FROM coffer_accounts a WHERE owner = \(owner) AND issuer = \(account.issuer) AND account_name = \(account.accountName)
            AND NOT EXISTS (SELECT 1 FROM coffer_mechanisms m WHERE m.owner = a.owner AND m.issuer = a.issuer AND m.account_name = a.account_name)
            RETURNING 1
            """)
        if !deleted.isEmpty { return true }
        let owned = try await count("""
            SELECT count(*) FROM coffer_mechanisms WHERE owner = \(owner) AND issuer = \(account.issuer) AND account_name = \(account.accountName)
            """)
        if owned > 0 { throw StorageClientError.stillOwnsRecords(what: what, count: owned) }
        return false
    }

    /// Replaces the stored account `old` with `new` (same issuer and account name) only if the
    /// row still holds exactly `old`: a compare-and-swap in one statement. Returns `false`,
    /// changing nothing, when the row changed or is gone; read it again and retry.
    public func update(_ old: Account, to new: Account) async throws -> Bool {
        guard new.identifier == old.identifier else { throw StorageClientError.identityChanged(identifier: old.identifier) }
        if new.details != old.details { return try await updateWithDetails(old, to: new) }
        let owner = self.owner
        let rows = try await execute("update an account", """
            UPDATE coffer_accounts SET display_issuer = \(new.displayIssuer), display_account_name = \(new.displayAccountName),
                image_url = \(new.imageURL), background_color = \(new.backgroundColor),
                time_added = \(new.timeAdded.timeIntervalSinceReferenceDate), policies = \(new.policies),
                locking_policy = \(new.lockingPolicy), is_locked = \(new.isLocked)
            WHERE owner = \(owner) AND issuer = \(old.issuer) AND account_name = \(old.accountName)
            AND display_issuer IS NOT DISTINCT FROM \(old.displayIssuer)
            AND display_account_name IS NOT DISTINCT FROM \(old.displayAccountName)
            AND image_url IS NOT DISTINCT FROM \(old.imageURL) AND background_color IS NOT DISTINCT FROM \(old.backgroundColor)
            AND time_added = \(old.timeAdded.timeIntervalSinceReferenceDate) AND policies IS NOT DISTINCT FROM \(old.policies)
            AND locking_policy IS NOT DISTINCT FROM \(old.lockingPolicy) AND is_locked = \(old.isLocked)
            RETURNING 1
            """)
        return !rows.isEmpty
    }

    /// ``update(_:to:)`` when the details change: the row is locked and read (details opened),
    /// compared with `old`, then written with the new details sealed.
    private func updateWithDetails(_ old: Account, to new: Account) async throws -> Bool {
        let owner = self.owner, keyAlias = self.keyAlias, logger = database.logger
        return try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: "update an account") {
            let details = try await self.sealedDetails([new])
            return try await self.transaction("update an account") { connection in
                try await KeyRingCheck.require(details.compactMap { $0 }, alias: keyAlias, of: self.keys, on: connection, logger: logger)
                let rows = try await connection.rows("""
                    \(unescaped: AccountColumns.select)WHERE owner = \(owner) AND issuer = \(old.issuer) AND account_name = \(old.accountName) FOR UPDATE
                    """, logger: logger)
                guard try await self.accounts(rows, "updateAccount").first == old else { return false }
                try await connection.rows(try Self.upsert(new, details: details[0], owner: owner), logger: logger)
                return true
            }
        }
    }

    // MARK: - Mechanisms

    /// Stores a new mechanism (and its account, with no display details, when there is none),
    /// never replacing anything: a mechanism with its UUID, or one of its type for its account,
    /// readable or not, makes it fail with `StorageClientError.uuidTaken` or
    /// `StorageClientError.mechanismExists`, writing nothing.
    public func insert(_ mechanism: Mechanism) async throws {
        try await write([mechanism], insertOnly: true, operation: "add a mechanism")
    }

    /// Stores the mechanism: a new one, or an update of the stored one with the same UUID,
    /// account and type. A clash with any other object fails as ``insert(_:)`` does.
    public func save(_ mechanism: Mechanism) async throws {
        try await write([mechanism], insertOnly: false, operation: "save a mechanism")
    }

    /// Removes the mechanism. One that still owns notifications is refused unless
    /// `withItsNotifications`: then they go with it, in one transaction, provided every one can
    /// be read. Returns whether there was such a mechanism.
    @discardableResult
    public func delete(_ mechanism: Mechanism, withItsNotifications: Bool = false) async throws -> Bool {
        let owner = self.owner, uuid = mechanism.mechanismUUID, what = "The mechanism \(uuid)"
        if withItsNotifications {
            return try await transaction("remove a mechanism with its notifications") { connection in
                let uuids = try await self.lockReadable(mechanisms: """
                    \(unescaped: StoredMechanism.select)WHERE owner = \(owner) AND mechanism_uuid = \(uuid) FOR UPDATE
                    """, what: what, on: connection)
                try await self.deleteLocked(mechanisms: uuids, on: connection)
                return !uuids.isEmpty
            }
        }
        return try await deleteOwningNothing(uuid, ifCounterIs: nil, what: what)
    }

    /// Removes the mechanism, in one statement, only if its counter is still
    /// `mechanism.counter` and it owns no notification; returns `false` when the counter moved.
    public func deleteIfUnchanged(_ mechanism: Mechanism) async throws -> Bool {
        let owner = self.owner, uuid = mechanism.mechanismUUID
        if try await deleteOwningNothing(uuid, ifCounterIs: Int64(bitPattern: mechanism.counter), what: "The mechanism \(uuid)") { return true }
        guard try await count("SELECT count(*) FROM coffer_mechanisms WHERE owner = \(owner) AND mechanism_uuid = \(uuid)") > 0 else {
            throw StorageClientError.mechanismNotFound(uuid: uuid)
        }
        return false
    }

    /// Deletes the mechanism if it owns no notification (and, given `counter`, only if its
    /// counter is that); one that owns some is refused with
    /// ``StorageClientError/stillOwnsRecords(what:count:)``. Returns whether a row was deleted.
    private func deleteOwningNothing(_ uuid: String, ifCounterIs counter: Int64?, what: String) async throws -> Bool {
        let owner = self.owner
        let deleted = try await execute("remove a mechanism", """
            DELETE FROM coffer_mechanisms m WHERE owner = \(owner) AND mechanism_uuid = \(uuid)
            AND (\(counter)::bigint IS NULL OR counter = \(counter))
            AND NOT EXISTS (SELECT 1 FROM coffer_notifications n WHERE n.owner = m.owner AND n.mechanism_uuid = m.mechanism_uuid)
            RETURNING 1
            """)
        if !deleted.isEmpty { return true }
        let owned = try await count("SELECT count(*) FROM coffer_notifications WHERE owner = \(owner) AND mechanism_uuid = \(uuid)")
        if owned > 0 { throw StorageClientError.stillOwnsRecords(what: what, count: owned) }
        return false
    }

    /// Claims the next value of a HOTP counter: stores the counter plus one and returns the
    /// mechanism as it was, whose `counter` is the value to compute the code with.
    ///
    /// A compare-and-swap in one statement (`UPDATE … WHERE counter = old AND secret = old
    /// RETURNING`), retried when another caller moved the counter first: no two callers, on any
    /// instance, ever get the same value, and none is skipped.
    public func advanceCounter(of uuid: String) async throws -> Mechanism {
        let owner = self.owner
        var unmoved = 0  // failed swaps that found the row as it was: nobody else claimed
        var previous: StoredMechanism?
        while true {
            let rows = try await query("read a HOTP counter", "\(unescaped: StoredMechanism.select)WHERE owner = \(owner) AND mechanism_uuid = \(uuid)")
            guard let row = rows.first else { throw StorageClientError.mechanismNotFound(uuid: uuid) }
            let record = try StoredMechanism(row, owner: owner)
            if let previous, previous.counter == record.counter, previous.secret == record.secret {
                // The update matched nothing, yet nobody moved the row. Once can be a key
                // rotation (sealed again now); twice, the update is being swallowed.
                unmoved += 1
                guard unmoved < 2 else {
                    throw PostgresStorageError(.server, "The HOTP counter of \(uuid) could not be advanced: the update matched no row "
                        + "although nobody else moved it (a row security policy or a trigger on coffer_mechanisms?); no code was issued.")
                }
            }
            previous = record
            let fields = record.sealedFields(owner: owner)
            let current = try record.mechanism(owner: owner, checked(fields, await sealer.opening(fields)))
            var advanced = current
            advanced.counter = try current.nextCounter()
            let secret = try await sealing([(advanced.secret, OwnerBinding.secret(owner, advanced))])[0]
            let swapped = try await execute("advance a HOTP counter", """
                UPDATE coffer_mechanisms SET counter = \(Int64(bitPattern: advanced.counter)), secret = \(secret)
                WHERE owner = \(owner) AND mechanism_uuid = \(uuid) AND counter = \(record.counter) AND secret = \(record.secret)
                AND (SELECT coalesce(max(id), 0) FROM coffer_keys WHERE owner = \(keys.ringOwner) AND alias = \(keyAlias))
                    = \(Int(try KeyRingCheck.keyID(of: secret)))
                RETURNING counter
                """)
            if let stored = swapped.first {
                // What the row holds now must be what was written: a trigger or rule that keeps
                // the old counter would otherwise let the same value be claimed again.
                guard try stored.decode(Int64.self) == Int64(bitPattern: advanced.counter) else {
                    throw PostgresStorageError(.server, "The database did not store the advanced HOTP counter of \(uuid) "
                        + "(a trigger or rule changed the update); no code was issued. Check the table coffer_mechanisms.")
                }
                return current
            }
            // Another caller moved the counter first, or the key ring has a newer key: read again.
            keys.forgetPrimary(keyAlias)
        }
    }

    // MARK: - Notifications

    /// Stores the notification, or updates the stored one with the same message id for the same
    /// mechanism. Its mechanism must be stored (`StorageClientError.mechanismNotFound`).
    public func save(_ notification: PushNotification) async throws {
        try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: "save a notification") {
            let challenge = try await sealing([(notification.challenge, OwnerBinding.challenge(
                owner, mechanism: notification.mechanismUUID, messageId: notification.messageId))])[0]
            do {
                let saved = try await execute("save a notification", try Self.upsert(notification, challenge: challenge, owner: owner, keyAlias: keyAlias, ringOwner: keys.ringOwner))
                guard !saved.isEmpty else { throw KeyRingCheck.stale }
            } catch let error as PostgresStorageError where error.sqlState == "23503" {
                throw StorageClientError.mechanismNotFound(uuid: notification.mechanismUUID)
            }
        }
    }

    /// Removes the notification; returns whether it was stored.
    @discardableResult
    public func delete(_ notification: PushNotification) async throws -> Bool {
        try await !execute("remove a notification", """
            DELETE FROM coffer_notifications WHERE owner = \(owner) AND mechanism_uuid = \(notification.mechanismUUID)
            AND message_id = \(notification.messageId) RETURNING 1
            """).isEmpty
    }

    // MARK: - Push device token

    /// Stores the owner's push device token, replacing the previous one.
    public func save(_ token: PushDeviceToken) async throws {
        try await execute("save the push device token", """
            INSERT INTO coffer_push_tokens (owner, token_id, time_added) VALUES (\(owner), \(token.tokenId), \(token.timeAdded.timeIntervalSinceReferenceDate))
            ON CONFLICT (owner) DO UPDATE SET token_id = excluded.token_id, time_added = excluded.time_added
            """)
    }

    /// Removes the owner's push device token; returns whether there was one.
    @discardableResult
    public func deletePushDeviceToken() async throws -> Bool {
        try await !execute("remove the push device token", "DELETE FROM coffer_push_tokens WHERE owner = \(owner) RETURNING 1").isEmpty
    }

    // MARK: - Many records at once

    /// Writes many records in one transaction: all of them or none, and the error says why.
    /// Each is written as ``save(_:)-(Account)``, ``save(_:)-(Mechanism)`` and
    /// ``save(_:)-(PushNotification)`` would write it; accounts first, then mechanisms, then
    /// notifications. For imports and migrations.
    public func saveAll(accounts: [Account] = [], mechanisms: [Mechanism] = [], notifications: [PushNotification] = []) async throws {
        let owner = self.owner, keyAlias = self.keyAlias
        try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: "save many records") {
            let secrets = try await seal(mechanisms)
            let challenges = try await sealing(notifications.map {
                ($0.challenge, OwnerBinding.challenge(owner, mechanism: $0.mechanismUUID, messageId: $0.messageId))
            })
            let details = try await sealedDetails(accounts)
            try await writeMechanisms(secrets, alsoSealed: challenges + details.compactMap { $0 }, insertOnly: false,
                                      operation: "save many records") { connection in
                for (account, sealed) in zip(accounts, details) {
                    try await connection.rows(try Self.upsert(account, details: sealed, owner: owner), logger: self.database.logger)
                }
            } after: { connection in
                for (notification, challenge) in zip(notifications, challenges) {
                    let saved = try await connection.rows(try Self.upsert(notification, challenge: challenge, owner: owner, keyAlias: keyAlias, ringOwner: self.keys.ringOwner),
                                                          logger: self.database.logger)
                    guard !saved.isEmpty else { throw KeyRingCheck.stale }  // rotated since the check above
                }
            }
        }
    }

    // MARK: - Writing rows

    /// Seals fields; the database failing to give the key is thrown as the database's error.
    func sealing(_ fields: [(text: String, field: String)]) async throws -> [Data] {
        do {
            return try await sealer.sealing(fields)
        } catch {
            throw PostgresStorageError.databaseCause(of: error) ?? error
        }
    }

    /// A mechanism with its secret and challenge sealed.
    struct SealedMechanism: Sendable {
        let mechanism: Mechanism
        let secret: Data
        let challenge: Data?
    }

    /// Seals the mechanisms' fields (one key lookup for them all).
    func seal(_ mechanisms: [Mechanism]) async throws -> [SealedMechanism] {
        var fields: [(text: String, field: String)] = []
        for mechanism in mechanisms {
            fields.append((mechanism.secret, OwnerBinding.secret(owner, mechanism)))
            if let challenge = mechanism.challenge { fields.append((challenge, OwnerBinding.challenge(owner, mechanism: mechanism.mechanismUUID))) }
        }
        var sealed = try await sealing(fields)[...]
        return mechanisms.map { mechanism in
            let secret = sealed.removeFirst()
            return SealedMechanism(mechanism: mechanism, secret: secret, challenge: mechanism.challenge.map { _ in sealed.removeFirst() })
        }
    }

    private func write(_ mechanisms: [Mechanism], insertOnly: Bool, operation: String) async throws {
        try await KeyRingCheck.retrying(alias: keyAlias, keys: keys, during: operation) {
            try await writeMechanisms(try await seal(mechanisms), insertOnly: insertOnly, operation: operation)
        }
    }

    /// Writes sealed mechanisms (creating missing accounts) in one transaction, with `before` and
    /// `after` in the same transaction, provided every sealed field (and `alsoSealed`) is under
    /// the newest key (``KeyRingCheck``). A clash is reported as the object it clashes with.
    private func writeMechanisms(
        _ sealed: [SealedMechanism], alsoSealed: [Data] = [], insertOnly: Bool, operation: String,
        before: @escaping @Sendable (PostgresConnection) async throws -> Void = { _ in },
        after: @escaping @Sendable (PostgresConnection) async throws -> Void = { _ in }
    ) async throws {
        let owner = self.owner, logger = database.logger, keyAlias = self.keyAlias
        let fields = sealed.flatMap { [$0.secret] + ($0.challenge.map { [$0] } ?? []) } + alsoSealed
        do {
            try await transaction(operation) { connection in
                try await KeyRingCheck.require(fields, alias: keyAlias, of: self.keys, on: connection, logger: logger)
                try await before(connection)
                for item in sealed {
                    let mechanism = item.mechanism
                    try await connection.rows("""
                        INSERT INTO coffer_accounts (owner, issuer, account_name, time_added, is_locked)
                        VALUES (\(owner), \(mechanism.issuer), \(mechanism.accountName), \(mechanism.timeAdded.timeIntervalSinceReferenceDate), false)
                        ON CONFLICT (owner, issuer, account_name) DO NOTHING
                        """, logger: logger)
                    let written = try await connection.rows(try Self.insert(item, owner: owner, insertOnly: insertOnly), logger: logger)
                    // The update's WHERE did not hold: the UUID belongs to another account or type.
                    if written.isEmpty { throw StorageClientError.uuidTaken(uuid: mechanism.mechanismUUID) }
                }
                try await after(connection)
            }
        } catch let error as PostgresStorageError where error.sqlState == "23505" {
            // A unique constraint: find which object, now that the transaction is rolled back.
            for item in sealed {
                if let clash = try await clash(for: item.mechanism) { throw clash }
            }
            throw error
        } catch let error as PostgresStorageError where error.sqlState == "23503" {
            // A notification whose mechanism is not stored (in saveAll).
            throw StorageClientError.failed(operation: operation, cause: error)
        }
    }

    /// Which stored row `mechanism` clashes with, if any.
    private func clash(for mechanism: Mechanism) async throws -> StorageClientError? {
        let rows = try await query("find a clashing mechanism", """
            SELECT EXISTS (SELECT 1 FROM coffer_mechanisms WHERE owner = \(owner) AND issuer = \(mechanism.issuer)
                           AND account_name = \(mechanism.accountName) AND type = \(mechanism.type.rawValue)
                           AND mechanism_uuid <> \(mechanism.mechanismUUID)),
                   EXISTS (SELECT 1 FROM coffer_mechanisms WHERE owner = \(owner) AND mechanism_uuid = \(mechanism.mechanismUUID))
            """)
        guard let (sameType, taken) = try rows.first?.decode((Bool, Bool).self) else { return nil }
        if sameType { return .mechanismExists(issuer: mechanism.issuer, accountName: mechanism.accountName, type: mechanism.type) }
        return taken ? .uuidTaken(uuid: mechanism.mechanismUUID) : nil
    }

    /// Locks the mechanisms `query` selects and their notifications, and opens every sealed
    /// field; throws `StorageClientError.stillOwnsRecords` when any cannot be
    /// read (so nothing unseen is deleted). Returns the mechanisms' UUIDs.
    private func lockReadable(mechanisms query: PostgresQuery, what: String, on connection: PostgresConnection) async throws -> [String] {
        let owner = self.owner, logger = database.logger
        let rows = try await connection.rows(query, logger: logger)
        let records = rows.compactMap { try? StoredMechanism($0, owner: owner) }
        // Every mechanism row, decodable or not, by its key column alone.
        let uuids = rows.compactMap { try? $0.makeRandomAccess()[0].decode(String.self) }
        let notificationRows = try await connection.rows("""
            \(unescaped: NotificationRecord.select)WHERE owner = \(owner) AND mechanism_uuid = ANY(\(uuids)) FOR UPDATE
            """, logger: logger)
        let notifications = notificationRows.compactMap { try? NotificationRecord($0, owner: owner) }
        let fields = records.flatMap { $0.sealedFields(owner: owner) } + notifications.map { ($0.sealedChallenge, $0.field(owner: owner)) }
        let opened = await sealer.opening(fields)
        _ = try checked(fields, opened)  // the database failing is not a record being unreadable
        let unreadable = (rows.count - records.count) + (notificationRows.count - notifications.count)
            + opened.filter { if case .failure = $0 { true } else { false } }.count
        if unreadable > 0 || uuids.count != rows.count { throw StorageClientError.stillOwnsRecords(what: what, count: max(unreadable, 1)) }
        return uuids
    }

    /// Deletes locked mechanisms and their notifications.
    private func deleteLocked(mechanisms uuids: [String], on connection: PostgresConnection) async throws {
        try await connection.rows("DELETE FROM coffer_notifications WHERE owner = \(owner) AND mechanism_uuid = ANY(\(uuids))", logger: database.logger)
        try await connection.rows("DELETE FROM coffer_mechanisms WHERE owner = \(owner) AND mechanism_uuid = ANY(\(uuids))", logger: database.logger)
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        try await self.query("count records", query).first?.decode(Int.self) ?? 0
    }

    // MARK: - Statements

    /// Writes the account row; `details` is its sealed `AccountDetails` (``sealedDetails(_:)``).
    static func upsert(_ account: Account, details: Data?, owner: String) throws -> PostgresQuery {
        try """
        INSERT INTO coffer_accounts (owner, issuer, account_name, display_issuer, display_account_name, image_url, background_color,
                                     time_added, policies, locking_policy, is_locked, details)
        VALUES (\(owner), \(account.issuer), \(account.accountName), \(account.displayIssuer), \(account.displayAccountName),
                \(account.imageURL), \(account.backgroundColor), \(account.timeAdded.timeIntervalSinceReferenceDate),
                \(account.policies), \(account.lockingPolicy), \(account.isLocked), \(details))
        ON CONFLICT (owner, issuer, account_name) DO UPDATE SET
            display_issuer = excluded.display_issuer, display_account_name = excluded.display_account_name,
            image_url = excluded.image_url, background_color = excluded.background_color, time_added = excluded.time_added,
            policies = excluded.policies, locking_policy = excluded.locking_policy, is_locked = excluded.is_locked,
            details = excluded.details
        """
    }

    static func insert(_ sealed: SealedMechanism, owner: String, insertOnly: Bool) throws -> PostgresQuery {
        let mechanism = sealed.mechanism
        let update = insertOnly ? "" : """
             ON CONFLICT (owner, mechanism_uuid) DO UPDATE SET
                secret = excluded.secret, algorithm = excluded.algorithm, digits = excluded.digits, period = excluded.period,
                counter = excluded.counter, uid = excluded.uid, resource_id = excluded.resource_id, time_added = excluded.time_added,
                registration_endpoint = excluded.registration_endpoint, authentication_endpoint = excluded.authentication_endpoint,
                message_id = excluded.message_id, challenge = excluded.challenge
             WHERE coffer_mechanisms.issuer = excluded.issuer AND coffer_mechanisms.account_name = excluded.account_name
               AND coffer_mechanisms.type = excluded.type
            """
        return try """
            INSERT INTO coffer_mechanisms (owner, mechanism_uuid, issuer, account_name, type, secret, algorithm, digits, period, counter,
                uid, resource_id, time_added, registration_endpoint, authentication_endpoint, message_id, challenge)
            VALUES (\(owner), \(mechanism.mechanismUUID), \(mechanism.issuer), \(mechanism.accountName), \(mechanism.type.rawValue),
                \(sealed.secret), \(mechanism.algorithm.rawValue), \(mechanism.digits), \(mechanism.period),
                \(Int64(bitPattern: mechanism.counter)), \(mechanism.uid), \(mechanism.resourceId),
                \(mechanism.timeAdded.timeIntervalSinceReferenceDate), \(mechanism.registrationEndpoint?.absoluteString),
                \(mechanism.authenticationEndpoint?.absoluteString), \(mechanism.messageId), \(sealed.challenge))
            \(unescaped: update) RETURNING 1
            """
    }

    /// Stores the notification only if `challenge` is sealed under the newest key of `keyAlias`
    /// (no row returned otherwise).
    static func upsert(_ notification: PushNotification, challenge: Data, owner: String, keyAlias: String, ringOwner: String) throws -> PostgresQuery {
        try """
        INSERT INTO coffer_notifications (owner, mechanism_uuid, message_id, challenge, ttl, time_added, pending, approved,
            load_balance_key, message, custom_payload, numbers_challenge, context_info, push_type)
        SELECT \(owner), \(notification.mechanismUUID), \(notification.messageId), \(challenge), \(notification.ttl),
            \(notification.timeAdded.timeIntervalSinceReferenceDate), \(notification.pending), \(notification.approved),
            \(notification.loadBalanceKey), \(notification.message), \(notification.customPayload),
            \(notification.numbersChallenge), \(notification.contextInfo), \(notification.pushType)
        WHERE (SELECT coalesce(max(id), 0) FROM coffer_keys WHERE owner = \(ringOwner) AND alias = \(keyAlias))
            = \(Int(try KeyRingCheck.keyID(of: challenge)))
        ON CONFLICT (owner, mechanism_uuid, message_id) DO UPDATE SET
            challenge = excluded.challenge, ttl = excluded.ttl, time_added = excluded.time_added, pending = excluded.pending,
            approved = excluded.approved, load_balance_key = excluded.load_balance_key, message = excluded.message,
            custom_payload = excluded.custom_payload, numbers_challenge = excluded.numbers_challenge,
            context_info = excluded.context_info, push_type = excluded.push_type
        RETURNING 1
        """
    }
}
