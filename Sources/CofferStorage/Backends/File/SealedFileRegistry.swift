import Foundation
import Synchronization

/// The names of the files in one directory that were sealed under one key alias:
/// `.sealed-under.<alias>` beside them (the alias escaped as ``FileKeyStore`` escapes key file
/// names), a JSON array of file names.
///
/// It lets a file storage tell "this alias never had a key" from "its key is gone": before a
/// first key is made for the alias, every file named here is looked at, and one still sealed
/// under the alias refuses the new key (``StorageError/keyMissing(location:keyAlias:keyID:)``),
/// though the file being saved has no value yet. Names are added, never removed: a name whose
/// file was deleted, or is no longer sealed, refuses nothing.
struct SealedFileRegistry: Sendable {
    /// The registry file.
    let file: DurableFile
    /// The directory of the files it names.
    let directory: URL

    /// A registry file lists names of at most 200 bytes; 1 MiB is thousands of them.
    static let sizeLimit = 1 << 20

    init(directory: URL, keyAlias: String) {
        self.directory = directory
        let name = ".sealed-under." + FileKeyStore.escapedName(for: keyAlias)
        self.file = DurableFile(url: directory.appendingPathComponent(name, isDirectory: false), sizeLimit: Self.sizeLimit)
    }

    /// Adds `name`, under the registry's lock; writes nothing when it is there already.
    func register(_ name: String) throws {
        try file.update { data in
            var names = try decode(data)
            guard !names.contains(name) else { return (nil, ()) }
            names.append(name)
            return (try JSONEncoder().encode(names), ())
        }
    }

    /// The registered names that can be file names here (a hand-edited entry such as `../x` is
    /// skipped, never followed).
    func names() throws -> [String] {
        try decode(try file.read()).filter { FileName.validate($0) == nil }
    }

    private func decode(_ data: Data?) throws(StorageError) -> [String] {
        guard let data else { return [] }
        do {
            return try JSONDecoder().decode([String].self, from: data)
        } catch {
            throw .corrupted(location: file.path, reason: "it is not the list of sealed file names Coffer keeps there. "
                + "It holds no secret: move it aside, and each storage lists its file again when it next saves")
        }
    }
}

/// Whether a ``FileItem`` has put its name in the registry: once per storage, so only its
/// first save pays for it.
final class RegistrationMark: Sendable {
    private let done = Atomic<Bool>(false)

    var isSet: Bool { done.load(ordering: .acquiring) }
    func set() { done.store(true, ordering: .releasing) }
}
