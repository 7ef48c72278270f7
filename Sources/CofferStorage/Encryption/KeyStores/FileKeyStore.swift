import Foundation
import Synchronization

/// A key store that keeps each alias's keys in a file of its own, for machines with no OS keyring.
///
/// Each alias is one file, `<directory>/<alias>.key`, mode 0600, in a directory created 0700.
/// A key file that another user owns, or that group or others can read or write, is refused
/// (``StorageError/untrusted(path:owner:mode:reason:)``), and so is a directory that another
/// user owns or can write to: a key someone else knows or can replace protects nothing.
/// Files are replaced atomically and durably, and creating or rotating keys holds an exclusive
/// `flock`, so several processes sharing the directory agree on the keys.
///
/// The key material is protected only by the file permissions: anyone who can read the file as
/// you (or as root) can read the keys. Prefer the OS keyring where there is one.
public struct FileKeyStore: KeyRingStore {
    /// The directory that holds the key files.
    public let directory: URL
    /// `directory`'s path, worked out once: every seal looks its key file up.
    private let directoryPath: String
    /// Key rings already read, by alias, with the identity of the file they came from; shared by
    /// copies of this value.
    private let cache = KeyRingCache()

    /// Creates a key store in `directory`. The directory is created (0700) when the first key is.
    public init(directory: URL) {
        self.directory = directory
        self.directoryPath = directory.path
    }

    /// A key store in Coffer's default data directory, under `keys/`.
    public static var `default`: FileKeyStore {
        FileKeyStore(directory: DataDirectory.default.appendingPathComponent("keys", isDirectory: true))
    }

    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        try read(alias)?.primary
    }

    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        try read(alias)?.key(id: id)
    }

    @discardableResult
    public func createKey(for alias: String) async throws -> VersionedKey {
        try modify(alias, KeyRing.creatingKey(in:))
    }

    @discardableResult
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        try modify(alias, KeyRing.rotatingKey(in:))
    }

    public func keyRing(for alias: String) async throws -> KeyRing? {
        try read(alias)
    }

    public func insertKeyRing(_ ring: KeyRing, for alias: String) async throws {
        let location = try fileURL(for: alias).path
        _ = try modify(alias) { existing in
            guard existing == nil else { throw KeyStoreError.alreadyExists(alias: alias, location: location) }
            return (ring, ring.primary)
        }
    }

    public func deleteKeys(for alias: String) async throws {
        let file = try file(for: alias)
        do {
            try file.remove()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
    }

    /// The file that holds `alias`'s keys.
    public func fileURL(for alias: String) throws -> URL {
        try file(for: alias).url
    }

    // MARK: - Private

    private func file(for alias: String) throws(KeyStoreError) -> DurableFile {
        DurableFile(url: directory.appendingPathComponent(try Self.checkedFileName(for: alias), isDirectory: false),
                    requirement: .privateFile)
    }

    private static func checkedFileName(for alias: String) throws(KeyStoreError) -> String {
        guard !alias.isEmpty else { throw .invalidAlias(alias, reason: "it is empty") }
        return fileName(for: alias)
    }

    /// A file name that stands for `alias` and only for it: letters, digits, `_`, `-` and
    /// non-leading `.` are kept, every other byte is written as `%XX`.
    static func fileName(for alias: String) -> String {
        escapedName(for: alias) + ".key"
    }

    /// `alias` with every byte but letters, digits, `_`, `-` and non-leading `.` written as `%XX`.
    static func escapedName(for alias: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var name: [UInt8] = []
        name.reserveCapacity(alias.utf8.count)
        for (index, byte) in alias.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.append(byte)
            case UInt8(ascii: ".") where index > 0:
                name.append(byte)
            default:
                name += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// The alias's key ring. A ring read before is served from memory while its file is the same
    /// one (device, inode, size, modification and change times): every save seals with the
    /// primary key, and reading and parsing the file each time would cost as much as the save.
    /// The file is looked at before it is read, so a cached ring is never newer than its stamp:
    /// another process's rotation (a new file, renamed into place) is seen on the next call.
    private func read(_ alias: String) throws -> KeyRing? {
        let cached = cache[alias]
        // The path of a ring read before is kept with it: escaping the alias costs more than
        // the `lstat` it is for.
        let path = try cached?.path ?? directoryPath + "/" + Self.checkedFileName(for: alias)
        let stamp: FileStamp?
        switch FileStamp.of(path) {
        case .missing:
            if cached != nil { cache[alias] = nil }
            return nil
        case .found(let found):
            if let cached, cached.stamp == found { return cached.ring }
            stamp = found
        case .unknown:
            stamp = nil  // cannot tell: read the file, which reports why it cannot be read
        }
        let file = try file(for: alias)
        let data: Data?
        do {
            data = try file.read()
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
        let ring = try data.map { try decode($0, alias: alias, file: file) }
        cache[alias] = stamp.flatMap { stamp in ring.map { KeyRingCache.Entry(path: path, stamp: stamp, ring: $0) } }
        return ring
    }

    private func modify(
        _ alias: String, _ change: (KeyRing?) throws -> (KeyRing?, VersionedKey)
    ) throws -> VersionedKey {
        let file = try file(for: alias)
        do {
            return try file.update { data in
                let ring = try data.map { try decode($0, alias: alias, file: file) }
                let (newRing, key) = try change(ring)
                return (newRing?.serialized(), key)
            }
        } catch let error as KeyStoreError {
            throw error
        } catch {
            throw KeyStoreError.storageFailed(alias: alias, cause: error)
        }
    }

    private func decode(_ data: Data, alias: String, file: DurableFile) throws(KeyStoreError) -> KeyRing {
        do {
            return try KeyRing(serialized: data)
        } catch {
            throw .corrupted(alias: alias, location: file.path, reason: error.reason)
        }
    }
}

/// Which version of a file is on disk, as far as `stat` can tell.
struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec
    var changed: timespec

    enum Lookup {
        case found(FileStamp)
        case missing
        /// `stat` failed for another reason (permissions, say).
        case unknown
    }

    static func of(_ path: String) -> Lookup {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? .missing : .unknown }
        return .found(FileStamp(info))
    }

    private init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = info.st_mtimespec
        changed = info.st_ctimespec
        #else
        modified = info.st_mtim
        changed = info.st_ctim
        #endif
    }

    static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
}

/// Key rings read from files, by alias.
private final class KeyRingCache: Sendable {
    /// A ring, the identity of the file it was read from, and that file's path.
    struct Entry: Sendable {
        var path: String
        var stamp: FileStamp
        var ring: KeyRing
    }

    private let rings = Mutex<[String: Entry]>([:])

    subscript(alias: String) -> Entry? {
        get { rings.withLock { $0[alias] } }
        set { rings.withLock { $0[alias] = newValue } }
    }
}
