import Crypto
import Foundation
import Synchronization

/// The names of the files in one directory that were sealed under one key alias:
/// `.sealed-under.<alias>.list` beside them, a JSON array of file names, sorted.
///
/// It lets a file storage tell "this alias never had a key" from "its key is gone": before a
/// first key is made for the alias, every file named here is looked at, and one still sealed
/// under the alias refuses the new key (``StorageError/keyMissing(location:keyAlias:keyID:)``),
/// though the file being saved has no value yet. A name is added before its file's first write
/// and never taken off (see ``register(_:)``).
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

    /// Lists `name`, under the registry's lock; writes nothing when it is listed already.
    ///
    /// Names are never taken off: a name whose file was deleted refuses nothing, and dropping
    /// one safely would need to know that no save is about to write it (the attack reviews of
    /// 2026-11-29 broke two ways of guessing). A file saved under another alias stays listed
    /// here too, and keeps refusing a first key for this alias while it is sealed.
    func register(_ name: String) throws {
        try file.update { data in
            let listed = try decode(data)
            guard !listed.contains(name) else { return (nil, ()) }
            return (try JSONEncoder().encode((listed + [name]).sorted()), ())
        }
    }

    /// The registered names that can be file names here (a hand-edited entry such as `../x` is
    /// skipped, never followed), sorted.
    func names() throws -> [String] {
        try decode(try file.read()).filter { FileName.validate($0) == nil }.sorted()
    }

    /// Runs `body` holding the first-key lock of this directory and alias (an `flock`, so other
    /// processes wait too).
    func firstKeySection<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try FileTrust.prepareDirectory(directory)
        let held = try await section.exclusive()
        defer { held.release() }
        return try await body()
    }

    /// The listed names.
    private func decode(_ data: Data?) throws(StorageError) -> [String] {
        guard let data else { return [] }
        do {
            return try JSONDecoder().decode([String].self, from: data)
        } catch {
            throw .corrupted(location: file.path, reason: "it is not the list of sealed file names Coffer keeps there. "
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
