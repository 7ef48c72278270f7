import Crypto
import Foundation
import Synchronization

/// The key-store engine of ``TPMKeyStore`` and ``PassphraseKeyStore``: each alias's ring in
/// `<directory>/<alias>.<extension>` (0600, in a 0700 directory checked like ``FileKeyStore``'s),
/// sealed under a wrapping key that `wrapping` gets back.
///
/// A process gets the wrapping key once and keeps the ring in memory while the file stays the
/// same (device, inode, size, times). Changes hold the file's lock only for the file work: the
/// wrapping key (a TPM call, a passphrase) is got before, and when another process changed the
/// header meanwhile, the change starts over. Rotation re-seals the ring under the same wrapping
/// key. Errors are typed and delete nothing.
struct WrappedKeyRingStore<Wrapping: KeyWrapping>: Sendable {
    typealias File = WrappedKeyRingFile<Wrapping.Header>

    let directory: URL
    let wrapping: Wrapping
    private let cache = Cache()

    init(directory: URL, wrapping: Wrapping) {
        self.directory = directory
        self.wrapping = wrapping
    }

    // MARK: - Reading

    func ring(_ alias: String) async throws -> KeyRing? {
        let file = try file(for: alias)
        let stamp = FileStamp.of(file.path)
        switch stamp {
        case .missing:
            cache.forget(alias)
            return nil
        case .found(let found):
            if let ring = cache.ring(alias, stamp: found) { return ring }
        case .unknown:
            break
        }
        guard let contents = try read(file, alias: alias) else { return nil }
        let key = try await wrappingKey(for: contents.header, alias: alias)
        let ring = try open(contents, with: key, alias: alias, file: file)
        wrapping.opened(contents.header, key: key, alias: alias)
        if case .found(let found) = stamp {
            cache.store(alias, Cache.Entry(stamp: found, ring: ring, header: contents.header, wrappingKey: key))
        }
        return ring
    }

    /// The header of `alias`'s file, read without any key; `nil` when it has none.
    func header(_ alias: String) throws -> Wrapping.Header? {
        let file = try file(for: alias)
        return try read(file, alias: alias)?.header
    }

    private func wrappingKey(for header: Wrapping.Header, alias: String) async throws -> SymmetricKey {
        if let known = cache.wrappingKey(alias, header: header) { return known }
        return try await wrapping.wrappingKey(for: header, alias: alias)
    }

    private func open(_ contents: File, with key: SymmetricKey, alias: String, file: DurableFile) throws -> KeyRing {
        let bytes: Data
        do {
            let box = try AES.GCM.SealedBox(combined: contents.ring)
            bytes = try AES.GCM.open(box, using: key, authenticating: Self.authenticatedData(alias, contents.header))
        } catch {
            throw WrappedKeyRingError.doesNotOpen(alias: alias, location: file.path)
        }
        do {
            return try KeyRing(serialized: bytes)
        } catch {
            throw KeyStoreError.corrupted(alias: alias, location: file.path, reason: error.reason)
        }
    }

    private static func authenticatedData(_ alias: String, _ header: Wrapping.Header) -> Data {
        Data("\(Wrapping.formatName)/1\0\(alias)\0".utf8) + Wrapping.authenticatedData(header)
    }

    // MARK: - Changing

    private enum Outcome {
        /// Changed: the key asked for, and the ring now in the file.
        case done(VersionedKey, KeyRing?)
        case retry
    }

    func modify(_ alias: String, _ change: @escaping (KeyRing?) throws -> (KeyRing?, VersionedKey)) async throws -> VersionedKey {
        let file = try file(for: alias)
        for _ in 0..<8 {
            let expected: Wrapping.Header?
            let sealer: (header: Wrapping.Header, key: SymmetricKey)
            if let contents = try read(file, alias: alias) {
                expected = contents.header
                sealer = (contents.header, try await wrappingKey(for: contents.header, alias: alias))
            } else {
                expected = nil
                do {
                    sealer = try await wrapping.newWrappingKey(alias: alias)
                } catch let error as KeyRingFormatError {
                    throw KeyStoreError.storageFailed(alias: alias, cause: error)
                }
            }
            let outcome: Outcome = try Self.updating(file, alias: alias) { data in
                let current = try data.map { try self.decode($0, alias: alias, file: file) }
                guard current?.header == expected else { return (nil, .retry) }
                let ring = try current.map { try self.open($0, with: sealer.key, alias: alias, file: file) }
                let (newRing, result) = try change(ring)
                let contents = try newRing.map { try Self.seal($0, alias: alias, header: sealer.header, key: sealer.key) }
                return (contents, .done(result, newRing ?? ring))
            }
            if case let .done(key, ring) = outcome {
                wrapping.opened(sealer.header, key: sealer.key, alias: alias)
                // This process knows the wrapping key now: the next change or read needs no TPM
                // call or passphrase while the header stays the same. (Not the ring: another
                // process may have changed the file since.)
                if ring != nil { cache.remember(alias, header: sealer.header, key: sealer.key) }
                return key
            }
        }
        throw KeyStoreError.storageFailed(alias: alias, cause: WrappedKeyRingError.keptChanging(alias: alias))
    }

    /// Seals `alias`'s ring again under a new wrapping key that `newWrapping` makes (a new
    /// passphrase, a new PIN); the wrapping key `opening` gets back (the current passphrase or
    /// PIN, asked afresh, never a remembered key) must open it first. The keys themselves do not
    /// change, so nothing sealed with them is touched.
    ///
    /// One durable, atomic replacement of the file under its lock, made only if the file is
    /// still the one that was opened: a process killed at any point leaves the old file (the old
    /// passphrase opens it) or the new one, never neither; a change by another process meanwhile
    /// is ``WrappedKeyRingError/keptChanging(alias:)``, and nothing is written.
    ///
    /// - Returns: `false` when `alias` has no file (nothing to change).
    func rewrap(_ alias: String, opening: Wrapping, with newWrapping: Wrapping) async throws -> Bool {
        let file = try file(for: alias)
        guard let contents = try read(file, alias: alias) else { return false }
        let oldKey = try await opening.wrappingKey(for: contents.header, alias: alias)
        _ = try open(contents, with: oldKey, alias: alias, file: file)  // the current key, checked before a new one is made
        let new: (header: Wrapping.Header, key: SymmetricKey)
        do {
            new = try await newWrapping.newWrappingKey(alias: alias)
        } catch let error as KeyRingFormatError {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
        let written: Bool = try Self.updating(file, alias: alias) { data in
            guard let data, try self.decode(data, alias: alias, file: file) == contents else { return (nil, false) }
            let ring = try self.open(contents, with: oldKey, alias: alias, file: file)
            return (try Self.seal(ring, alias: alias, header: new.header, key: new.key), true)
        }
        guard written else { throw KeyStoreError.storageFailed(alias: alias, cause: WrappedKeyRingError.keptChanging(alias: alias)) }
        cache.forget(alias)
        wrapping.retired(contents.header, alias: alias)
        newWrapping.opened(new.header, key: new.key, alias: alias)
        return true
    }

    /// `file.update(transform)`, its errors typed: this store's own as they are, any other as
    /// ``KeyStoreError/storageFailed(alias:cause:)``.
    private static func updating<R>(_ file: DurableFile, alias: String, _ transform: (Data?) throws -> (newContents: Data?, result: R)) throws -> R {
        do {
            return try file.update(transform)
        } catch let error as KeyStoreError {
            throw error
        } catch let error as WrappedKeyRingError {
            throw error
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
    }

    func insert(_ ring: KeyRing, for alias: String) async throws {
        let location = try file(for: alias).path
        _ = try await modify(alias) { existing in
            guard existing == nil else { throw KeyStoreError.alreadyExists(alias: alias, location: location) }
            return (ring, ring.primary)
        }
    }

    func delete(_ alias: String) throws {
        let file = try file(for: alias)
        do {
            try file.remove()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
        cache.forget(alias)
    }

    private static func seal(_ ring: KeyRing, alias: String, header: Wrapping.Header, key: SymmetricKey) throws -> Data {
        let box = try AES.GCM.seal(ring.serialized(), using: key, authenticating: authenticatedData(alias, header))
        // A random 12-byte nonce always yields a combined representation.
        return File(format: Wrapping.formatName, header: header, ring: box.combined!).serialized()
    }

    // MARK: - Files

    func fileURL(for alias: String) throws -> URL { try file(for: alias).url }

    private func file(for alias: String) throws(KeyStoreError) -> DurableFile {
        guard !alias.isEmpty else { throw .invalidAlias(alias, reason: "it is empty") }
        let name = FileKeyStore.escapedName(for: alias) + "." + Wrapping.fileExtension
        return DurableFile(url: directory.appendingPathComponent(name, isDirectory: false), requirement: .privateFile,
                           sizeLimit: 1 << 20)
    }

    private func read(_ file: DurableFile, alias: String) throws -> File? {
        let data: Data?
        do {
            data = try file.read()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
        return try data.map { try decode($0, alias: alias, file: file) }
    }

    private func decode(_ data: Data, alias: String, file: DurableFile) throws(KeyStoreError) -> File {
        do {
            return try File(serialized: data, for: Wrapping.self)
        } catch {
            throw .corrupted(alias: alias, location: file.path, reason: error.reason)
        }
    }

    /// Rings and wrapping keys this process has opened, by alias; shared by copies of the store.
    private final class Cache: Sendable {
        struct Entry {
            var stamp: FileStamp
            var ring: KeyRing
            var header: Wrapping.Header
            var wrappingKey: SymmetricKey
        }

        private let rings = Mutex<[String: (stamp: FileStamp, ring: KeyRing)]>([:])
        private let keys = Mutex<[String: (header: Wrapping.Header, key: SymmetricKey)]>([:])

        func ring(_ alias: String, stamp: FileStamp) -> KeyRing? {
            rings.withLock { $0[alias].flatMap { $0.stamp == stamp ? $0.ring : nil } }
        }

        func wrappingKey(_ alias: String, header: Wrapping.Header) -> SymmetricKey? {
            keys.withLock { $0[alias].flatMap { $0.header == header ? $0.key : nil } }
        }

        func store(_ alias: String, _ entry: Entry) {
            rings.withLock { $0[alias] = (entry.stamp, entry.ring) }
            remember(alias, header: entry.header, key: entry.wrappingKey)
        }

        func remember(_ alias: String, header: Wrapping.Header, key: SymmetricKey) {
            keys.withLock { $0[alias] = (header, key) }
        }

        func forget(_ alias: String) {
            _ = rings.withLock { $0.removeValue(forKey: alias) }
            _ = keys.withLock { $0.removeValue(forKey: alias) }
        }
    }
}

/// Why a wrapped key ring (TPM- or passphrase-sealed) cannot be opened.
public enum WrappedKeyRingError: Error, Sendable, Equatable {
    /// The wrapping key does not open the ring: the file was changed.
    case doesNotOpen(alias: String, location: String)
    /// Other processes kept changing the file while this one tried to change it.
    case keptChanging(alias: String)
    /// The passphrase given is not the one the keys are sealed under.
    case wrongPassphrase(alias: String)
}

extension WrappedKeyRingError: LocalizedError {
    /// What went wrong and what to do; never a key or a passphrase.
    public var errorDescription: String? {
        switch self {
        case let .doesNotOpen(alias, location):
            return "The keys for '\(alias)' in \(location) do not open under their key: the file was changed; restore it "
                + "from a backup. Nothing was deleted."
        case .wrongPassphrase(let alias):
            return "The passphrase is wrong for the keys of '\(alias)'; try again. Nothing was deleted."
        case .keptChanging(let alias):
            return "The keys for '\(alias)' kept changing while they were being changed; try again."
        }
    }
}

extension WrappedKeyRingError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "WrappedKeyRingError" }
}
