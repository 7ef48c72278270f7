import Foundation

/// Moves a data directory's key from one key store to another without re-sealing anything, as
/// a small state machine that every later open of the directory sees: a move killed at any
/// instruction leaves the key where the record says it is and nowhere else, once the next
/// command has opened the directory.
///
/// The steps, all under one lock per directory (`.key-move.lock`):
/// 1. `<record>.move` is written, naming both places (the *journal*);
/// 2. the key ring is copied to the new place (an identical copy already there is taken as it
///    is; a different one stops the move before anything is written);
/// 3. `verify` checks that the copy opens the store;
/// 4. the record is changed to the new place: the move happens here;
/// 5. the key is deleted from the old place;
/// 6. the journal is removed.
///
/// ``finishInterrupted(waitingAtMost:)`` (which `DefaultAuthenticatorStorage.open` and
/// ``move(to:into:verify:)`` call first) reads a journal a killed move left: when the record
/// names the new place, the old copy is deleted (the move is finished); when it still names the
/// old one, the new copy is deleted (the move is rolled back). Either way no copy of the key is
/// left where the record does not say it is — a key file in the clear beside a
/// passphrase-sealed key, say. A copy is deleted only once it is shown to be the same key ring
/// as the one kept: a different key a journal names (crafted, or another directory's) stays.
/// ``strayCopies(among:)`` finds copies no journal explains (left by a version of Coffer
/// before this one) for `coffer doctor`.
///
/// The OS keyring is one place for every data directory of the user (its key items are named
/// by alias only), so a move never deletes a key from it: moving out of the keyring leaves the
/// item there (``Outcome/keptIn``), for the caller to say so.
///
/// Commands that use the key hold the lock shared (``holdAgainstMoves()``) from before they read
/// the record until they are done, so a move never takes the key away from under a command that
/// is about to seal with it (which would then make a second key).
public struct KeyMove: Sendable {
    /// The data directory.
    public let directory: URL
    /// The record file in it that names where the key is (`authenticator.keystore`).
    public let record: String
    /// The key ring's alias.
    public let alias: String
    /// The key store of each place.
    public let stores: @Sendable (KeyStoreSelection.Location) -> any KeyRingStore

    /// A move of `alias`'s key ring in `directory`, whose record file is `record`; `stores`
    /// gives the key store of each place (with what it needs to ask for a PIN or passphrase).
    public init(directory: URL, record: String, alias: String,
                stores: @escaping @Sendable (KeyStoreSelection.Location) -> any KeyRingStore) {
        self.directory = directory
        self.record = record
        self.alias = alias
        self.stores = stores
    }

    /// A move that was interrupted, as its journal names it.
    public struct Interrupted: Sendable, Equatable {
        /// Where the key was.
        public let from: KeyStoreSelection.Location
        /// Where it was going.
        public let to: KeyStoreSelection.Location
    }

    /// The places shared by every data directory, never deleted from by a move.
    public static let sharedPlaces: Set<KeyStoreSelection.Location> = [.secretService]

    /// What ``move(to:into:verify:)`` did.
    public struct Outcome: Sendable, Equatable {
        /// Where the key was.
        public let from: KeyStoreSelection.Location
        /// A shared place the key was left in as well (the keyring), or `nil`.
        public let keptIn: KeyStoreSelection.Location?
    }

    /// What ``finishInterrupted(waitingAtMost:)`` did.
    public struct Recovery: Sendable, Equatable {
        /// Whether the record named the new place (the move is finished: the old place's copy
        /// goes) or still the old one (the move is undone: the new place's copy goes).
        public let finished: Bool
        /// The move the journal named.
        public let move: Interrupted
        /// What became of the copy that was to go.
        public let copy: Copy

        /// What became of the copy in the place the key is not recorded in.
        public enum Copy: Sendable, Equatable {
            /// Deleted: it was the same key ring as the one kept.
            case deleted
            /// There was none.
            case absent
            /// Kept: the place is shared by every data directory (the keyring).
            case keptShared
            /// Kept: it is not the key ring kept (another key, or one that does not open).
            case keptDifferent
        }

        /// The place whose copy was to go.
        public var place: KeyStoreSelection.Location { finished ? move.from : move.to }
    }

    /// Why a move cannot go on, or a journal cannot be read.
    public enum Failure: Error, Sendable, LocalizedError {
        /// There is no key yet.
        case noKey
        /// The record names `place`, which holds no key (its file moved aside, say).
        case keyMissing(KeyStoreSelection.Location)
        /// Another command held the store for longer than a move waits: `seconds`.
        case busy(seconds: Int)
        /// The key is already where it was asked to go.
        case alreadyThere(KeyStoreSelection.Location)
        /// The journal names places the record is at neither of: left as it is for a person.
        case inconsistent(journal: String, recorded: KeyStoreSelection.Location?, Interrupted)
        /// The journal is not one this version writes.
        case unreadableJournal(path: String, text: String)

        /// What is wrong and what to do.
        public var errorDescription: String? {
            switch self {
            case .noKey:
                "There is no key yet; the first account added makes one."
            case .keyMissing(let place):
                "The record says the key is in \(place.rawValue), which holds none: restore it there from a backup "
                    + "(coffer doctor says what is missing). Nothing was moved."
            case .busy(let seconds):
                "Another command kept using the accounts for \(seconds) s (a `coffer code --watch`, or an app): stop it, "
                    + "then move the key. Nothing was moved."
            case .alreadyThere(let location):
                "The key is already in \(location.rawValue)."
            case let .inconsistent(journal, recorded, interrupted):
                "\(journal) says a key move from \(interrupted.from.rawValue) to \(interrupted.to.rawValue) was interrupted, but the "
                    + "record names \(recorded?.rawValue ?? "no place"); it was left as it is. Check where the key is "
                    + "(coffer doctor), then remove \(journal)."
            case let .unreadableJournal(path, _):
                "\(path) is not a key move's journal. Check where the key is (coffer doctor), then remove it."
            }
        }
    }

    private var journal: RecordFile { RecordFile(directory.appendingPathComponent(record + ".move")) }

    /// The interrupted move the journal names, or `nil` when no move was interrupted.
    public func interrupted() throws -> Interrupted? {
        let file = journal
        guard let text = try file.read() else { return nil }
        let parts = text.split(separator: " ").map(String.init)
        guard parts.count == 2, let from = KeyStoreSelection.Location(rawValue: parts[0]),
              let to = KeyStoreSelection.Location(rawValue: parts[1]), from != to else {
            throw Failure.unreadableJournal(path: file.path, text: text)
        }
        return Interrupted(from: from, to: to)
    }

    private var lock: FileLock { FileLock(path: directory.appendingPathComponent(".key-move.lock").path) }

    /// How long a move waits for commands using the store to finish.
    public static let patience: Duration = .seconds(30)

    /// Runs `body` holding the directory's move lock exclusively, which every move and every
    /// recovery takes, waiting at most `limit` for it.
    private func locked<R>(waitingAtMost limit: Duration = patience, _ body: () async throws -> R) async throws -> R {
        try FileTrust.prepareDirectory(directory)
        guard let held = try await lock.exclusive(waitingAtMost: limit) else {
            throw Failure.busy(seconds: max(1, Int(limit.components.seconds)))
        }
        defer { held.release() }
        return try await body()
    }

    /// Runs `body` holding the move lock exclusively: for a store's first use, where the key's
    /// place is chosen and its first key made, so two first commands at once agree on one key
    /// (the second finds the first's record and key check).
    public func exclusively<R>(_ body: () async throws -> R) async throws -> R {
        try await locked(body)
    }

    /// Holds the move lock shared until the result is released: no move starts meanwhile (one
    /// under way is waited for). A command takes it before it reads where the key is and keeps
    /// it until it is done. Call ``finishInterrupted(waitingAtMost:)`` first, not while holding this.
    public func holdAgainstMoves() async throws -> FileLock.Held {
        try FileTrust.prepareDirectory(directory)
        return try await lock.shared()
    }

    /// Finishes or rolls back a move a killed process left (see the type's discussion); `nil`
    /// when there was none. Cheap when there is none: one `stat`.
    ///
    /// - Parameter limit: How long to wait for the lock: commands pass a short time, since a
    ///   journal may belong to a move under way, which they then leave to finish.
    /// - Throws: ``Failure/busy(seconds:)`` when a move is under way (or a command holds the
    ///   store) for longer than `limit`; ``Failure/inconsistent(journal:recorded:_:)`` when the
    ///   record names neither place; the key store's error when the leftover copy cannot be
    ///   deleted now (the keyring not answering): the journal stays, and the next open tries
    ///   again.
    @discardableResult
    public func finishInterrupted(waitingAtMost limit: Duration = patience) async throws -> Recovery? {
        guard FileManager.default.fileExists(atPath: journal.path) else { return nil }
        return try await locked(waitingAtMost: limit) { try await recoverLocked() }
    }

    private func recoverLocked() async throws -> Recovery? {
        guard let pending = try interrupted() else { return nil }
        let recorded = try KeyStoreSelection.recordedLocation(in: directory, record: record)
        let recovery: Recovery
        switch recorded {
        case pending.to?:
            recovery = Recovery(finished: true, move: pending, copy: try await deleteCopy(in: pending.from, keeping: pending.to))
        case pending.from?:
            recovery = Recovery(finished: false, move: pending, copy: try await deleteCopy(in: pending.to, keeping: pending.from))
        default:
            throw Failure.inconsistent(journal: journal.path, recorded: recorded, pending)
        }
        try journal.remove()
        return recovery
    }

    /// Deletes the key ring in `place` when it is the one `kept` holds (a copy the move made or
    /// left); a different one, or one in a shared place, stays.
    private func deleteCopy(in place: KeyStoreSelection.Location, keeping kept: KeyStoreSelection.Location) async throws -> Recovery.Copy {
        guard let copy = try await stores(place).keyRing(for: alias) else { return .absent }
        guard !Self.sharedPlaces.contains(place) else { return .keptShared }
        guard let original = try await stores(kept).keyRing(for: alias), original.serialized() == copy.serialized() else { return .keptDifferent }
        try await stores(place).deleteKeys(for: alias)
        return .deleted
    }

    /// Moves the key to `location`, whose key store is `target` (made with what it needs: a new
    /// passphrase, a PIN, PCRs), after `verify` has shown that the copy opens the store. Returns
    /// where the key was. An interrupted move is finished or rolled back first.
    ///
    /// - Throws: ``Failure/noKey``, ``Failure/alreadyThere(_:)``;
    ///   ``KeyStoreError/alreadyExists(alias:location:)`` when `target` holds another key ring;
    ///   `verify`'s error, after the copy was deleted again (the key stays where it was).
    @discardableResult
    public func move(to location: KeyStoreSelection.Location, into target: any KeyRingStore,
                     verify: @Sendable (any KeyRingStore) async throws -> Void) async throws -> Outcome {
        try await locked {
            _ = try await recoverLocked()  // a move left by a killed process is finished first
            guard let from = try KeyStoreSelection.recordedLocation(in: directory, record: record) else { throw Failure.noKey }
            guard from != location else { throw Failure.alreadyThere(from) }
            let source = stores(from)
            guard let ring = try await source.keyRing(for: alias) else { throw Failure.keyMissing(from) }
            // Another key ring where the key is going is never replaced, nor deleted by a rollback.
            let existing = try await target.keyRing(for: alias)
            if let existing, existing.serialized() != ring.serialized() {
                throw KeyStoreError.alreadyExists(alias: alias, location: location.rawValue)
            }
            try journal.write("\(from.rawValue) \(location.rawValue)")
            do {
                if existing == nil { try await target.insertKeyRing(ring, for: alias) }
                try await verify(target)
            } catch {
                // Rolled back now (a shared place keeps what it had); if this fails too, the
                // journal makes the next open do it.
                if !Self.sharedPlaces.contains(location) { try? await target.deleteKeys(for: alias) }
                try? journal.remove()
                throw error
            }
            try RecordFile(directory.appendingPathComponent(record)).write(location.rawValue)
            let shared = Self.sharedPlaces.contains(from)
            if !shared { try await source.deleteKeys(for: alias) }
            try journal.remove()
            return Outcome(from: from, keptIn: shared ? from : nil)
        }
    }

    /// The places other than the recorded one that hold keys for the alias while no move is under
    /// way: left by a move a version of Coffer before this one interrupted, or copied by hand.
    /// By default the places in this directory (the keyring is every directory's, so keys there
    /// may be another directory's). Places that cannot be asked now are left out.
    public func strayCopies(among places: [KeyStoreSelection.Location] = [.file, .tpm, .passphrase]) async throws
        -> [KeyStoreSelection.Location] {
        guard try interrupted() == nil,
              let recorded = try KeyStoreSelection.recordedLocation(in: directory, record: record) else { return [] }
        var found: [KeyStoreSelection.Location] = []
        for place in places where place != recorded {
            if (try? await holdsKeys(place)) == true { found.append(place) }
        }
        return found
    }

    /// Removes a copy ``strayCopies(among:)`` found in `place`, when it is the same key ring as
    /// the recorded one (which opens it here, asking for a PIN or passphrase if it needs one).
    /// A different key ring, or one that cannot be read, is left where it is.
    ///
    /// - Returns: Whether it was removed.
    public func removeStrayCopy(in place: KeyStoreSelection.Location) async throws -> Bool {
        try await locked {
            guard let recorded = try KeyStoreSelection.recordedLocation(in: directory, record: record), recorded != place,
                  let kept = try await stores(recorded).keyRing(for: alias),
                  let stray = try? await stores(place).keyRing(for: alias),  // unreadable: not the store's key
                  stray.serialized() == kept.serialized() else { return false }
            try await stores(place).deleteKeys(for: alias)
            return true
        }
    }

    /// Whether `place` holds keys for the alias, asked without a PIN or passphrase: the file
    /// stores by their file, the keyring by a lookup.
    private func holdsKeys(_ place: KeyStoreSelection.Location) async throws -> Bool {
        let store = stores(place)
        switch store {
        case let file as FileKeyStore: return FileManager.default.fileExists(atPath: try file.fileURL(for: alias).path)
        case let tpm as TPMKeyStore: return FileManager.default.fileExists(atPath: try tpm.fileURL(for: alias).path)
        case let passphrase as PassphraseKeyStore: return FileManager.default.fileExists(atPath: try passphrase.fileURL(for: alias).path)
        default:
            // The keyring only when it answers at once: a session without one is not held up.
            if store is SecretServiceKeyStore, SecretService(timeout: .seconds(3)).usabilityProblem() != nil { return false }
            return try await store.keyRing(for: alias) != nil
        }
    }
}
