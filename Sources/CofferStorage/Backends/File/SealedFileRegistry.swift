import Crypto
import Foundation
import Synchronization

/// The names of the files in one directory that were sealed under one key alias:
/// `.sealed-under.<alias>.list` beside them: a JSON object of file names, each with when it was
/// listed.
///
/// It lets a file storage tell "this alias never had a key" from "its key is gone": before a
/// first key is made for the alias, every file named here is looked at, and one still sealed
/// under the alias refuses the new key (``StorageError/keyMissing(location:keyAlias:keyID:)``),
/// though the file being saved has no value yet. A name is added before its file's first write;
/// names whose files are long gone are dropped when a name is added, so the list stays about as
/// long as the directory's files.
///
/// Making a first key happens inside ``firstKeySection(_:)``, a lock of the directory and alias
/// held until the new value is written: a second first save waits, then finds the first one's
/// file sealed, and uses its key (or, if the key went away meanwhile, refuses).
struct SealedFileRegistry: Sendable {
    /// The registry file.
    let file: DurableFile
    /// The directory of the files it names.
    let directory: URL
    /// Held while a first key is made and the value sealed under it is written.
    private let section: FileLock

    /// A registry file lists names of at most 200 bytes; 1 MiB is thousands of them.
    static let sizeLimit = 1 << 20

    init(directory: URL, keyAlias: String) {
        self.directory = directory
        let name = ".sealed-under." + Self.nameComponent(for: keyAlias) + ".list"
        self.file = DurableFile(url: directory.appendingPathComponent(name, isDirectory: false), sizeLimit: Self.sizeLimit)
        // Names beginning with `..` are no data file's lock or temporary file (`.NAME.lock`,
        // `.NAME.tmp`: a data file's name never begins with `.`).
        self.section = FileLock(path: directory.appendingPathComponent("." + name + ".first-key.lock", isDirectory: false).path)
    }

    /// `alias` as a part of a file name: escaped as ``FileKeyStore`` escapes key file names, with
    /// every `.` escaped too (so that the registry's name never ends as a data file's companions
    /// do, `.tmp` or `.lock`); a long alias by its SHA-256 instead, within the file name limit.
    static func nameComponent(for alias: String) -> String {
        let escaped = FileKeyStore.escapedName(for: alias).replacingOccurrences(of: ".", with: "%2E")
        guard escaped.utf8.count > 150 else { return escaped }
        // `=` is never part of an escaped name.
        return "=" + SHA256.hash(data: Data(alias.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Lists `name`, under the registry's lock; writes nothing when it is listed already, unless
    /// `refreshing` and its time is more than ten minutes old (a file about to be written anew:
    /// its name must not be dropped as long gone before the write). Names whose files are
    /// missing and whose time is more than an hour old are dropped when the list is written.
    /// A name listed here for the first time is taken off the other aliases' lists in the
    /// directory: the file is about to be sealed under this alias, not theirs.
    func register(_ name: String, refreshing: Bool = false, now: Date = Date()) throws {
        let added = try file.update { data in
            var listed = try decode(data)
            let time = now.timeIntervalSince1970
            if let seen = listed[name], !refreshing || seen > time - 600 { return (nil, false) }
            let added = listed[name] == nil
            listed = listed.filter { entry in
                entry.value > time - 3600 || access(directory.appendingPathComponent(entry.key, isDirectory: false).path, F_OK) == 0
            }
            listed[name] = time
            return (try Self.encoded(listed), added)
        }
        if added { try unlistFromOtherAliases(name) }
    }

    /// Takes `name` off every other alias's list in the directory, each under its own lock.
    private func unlistFromOtherAliases(_ name: String) throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where entry.hasPrefix(".sealed-under.") && entry.hasSuffix(".list") && entry != file.url.lastPathComponent {
            let other = DurableFile(url: directory.appendingPathComponent(entry, isDirectory: false), sizeLimit: Self.sizeLimit)
            do {
                try other.update { data in
                    var listed = try decode(data, at: other.path)
                    guard listed.removeValue(forKey: name) != nil else { return (nil, ()) }
                    return (try Self.encoded(listed), ())
                }
            } catch StorageError.corrupted {
                // That alias's own saves report its damaged list; it is not this save's to fix.
            }
        }
    }

    private static func encoded(_ listed: [String: Double]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(listed)
    }

    /// The registered names that can be file names here (a hand-edited entry such as `../x` is
    /// skipped, never followed), sorted.
    func names() throws -> [String] {
        try decode(try file.read()).keys.filter { FileName.validate($0) == nil }.sorted()
    }

    /// Runs `body` holding the first-key lock of this directory and alias (an `flock`, so other
    /// processes wait too).
    func firstKeySection<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try FileTrust.prepareDirectory(directory)
        let held = try await section.exclusive()
        defer { held.release() }
        return try await body()
    }

    /// The listed names, each with when it was listed (seconds since 1970).
    private func decode(_ data: Data?) throws(StorageError) -> [String: Double] {
        try decode(data, at: file.path)
    }

    private func decode(_ data: Data?, at path: String) throws(StorageError) -> [String: Double] {
        guard let data else { return [:] }
        do {
            return try JSONDecoder().decode([String: Double].self, from: data)
        } catch {
            throw .corrupted(location: path, reason: "it is not the list of sealed file names Coffer keeps there. "
                + "It holds no secret: move it aside, and each file is listed again at its next save")
        }
    }
}

/// Which version of its directory's registry a ``FileItem`` last saw its name in, so that a
/// save only looks at the registry (one `lstat`) unless it changed: moved aside, replaced, or
/// added to by another storage.
final class RegistrationMark: Sendable {
    private let seen = Mutex<FileStamp?>(nil)

    /// Whether the registry at `path` is still the version seen.
    func isCurrent(_ path: String) -> Bool {
        guard case .found(let stamp) = FileStamp.of(path) else { return false }
        return seen.withLock { $0 == stamp }
    }

    /// Remembers the registry at `path` as it is now.
    func remember(_ path: String) {
        let stamp: FileStamp? = if case .found(let found) = FileStamp.of(path) { found } else { nil }
        seen.withLock { $0 = stamp }
    }
}
