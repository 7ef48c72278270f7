import Foundation

/// The storage behind ``FileStorage`` and ``EncryptedFileStorage``: one value in one
/// ``DurableFile``, as JSON, optionally bound to its file name and sealed (see ``ItemSealing``).
///
/// A file sealed under a key alias is listed in the directory's ``SealedFileRegistry`` for the
/// alias before its first write, so that a sibling sharing the alias never makes a new key while
/// this file is sealed under the missing one.
struct FileItem<T: Codable & Sendable>: Storage {
    let file: DurableFile
    let name: String
    let sealing: ItemSealing
    /// The files sealed under the encryptor's key alias here; `nil` when nothing is sealed or the
    /// encryptor's keys cannot be looked at.
    let registry: SealedFileRegistry?
    private let registered = RegistrationMark()
    /// Why `name` cannot be a file name here, worked out once (the name never changes): every
    /// operation throws it.
    private let nameProblem: StorageError?

    init(directory: URL, fileName: String, sealing: ItemSealing) {
        self.file = DurableFile(url: directory.appendingPathComponent(fileName))
        self.name = fileName
        self.nameProblem = FileName.validate(fileName)
        self.sealing = sealing
        if case .sealed(let encryptor) = sealing, let keyed = encryptor as? any KeyAwareEncryptor {
            registry = SealedFileRegistry(directory: directory, keyAlias: keyed.keyAlias)
        } else {
            registry = nil
        }
    }

    func save(item: T) async throws {
        try checkName()
        if let registry, !registered.isCurrent(registry.file.path) {
            try registry.register(name)
            registered.remember(registry.file.path)
        }
        if let data = try await sealing.sealUnderExistingKey(item, identity: name) {
            return try file.write(data)
        }
        // No key yet: one first save at a time in this directory, each writing its value before
        // the next looks (a second one then finds this file sealed and uses its key).
        try await firstKeySection {
            try file.write(try await sealing.seal(item, identity: name, sealedUnder: sealedValue(under:)))
        }
    }

    /// This file's value if it is sealed, else the first other file the registry names that is:
    /// what a first key for `keyAlias` would strand. Only each file's header is read.
    func sealedValue(under keyAlias: String) throws -> SealedValue? {
        if let own = SealedValue(try file.read(prefix: SealedEnvelope.minimumSize), at: file.path) { return own }
        guard let registry else { return nil }
        for sibling in try registry.names() where sibling != name {
            let other = DurableFile(url: registry.directory.appendingPathComponent(sibling, isDirectory: false))
            if let sealed = SealedValue(try other.read(prefix: SealedEnvelope.minimumSize), at: other.path) { return sealed }
        }
        return nil
    }

    /// Runs `body` as the only first save of this directory and alias (see
    /// ``SealedFileRegistry/firstKeySection(_:)``); plainly for a file that is not sealed.
    func firstKeySection<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        guard let registry else { return try await body() }
        return try await registry.firstKeySection(body)
    }

    func get() async throws -> T? {
        try checkName()
        guard let data = try file.read() else { return nil }
        return try await sealing.open(data, as: T.self, identity: name, location: file.path)
    }

    func delete() async throws {
        try checkName()
        try file.remove()
    }

    private func checkName() throws(StorageError) {
        if let nameProblem { throw nameProblem }
    }
}

/// JSON encoding of stored values, with errors that never quote the data.
package enum ValueCoding {
    /// `value` as JSON: written in one pass (``StreamingJSONEncoder``), or by Foundation's
    /// `JSONEncoder` when the value needs what that does not write (and for its errors).
    package static func encode<T: Encodable>(_ value: T) throws(StorageError) -> Data {
        if let json = try? StreamingJSONEncoder.encode(value) { return json }
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw .encodingFailed(type: String(describing: T.self), reason: summary(of: error))
        }
    }

    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, location: String) throws(StorageError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw .corrupted(location: location, reason: "not a valid \(T.self): \(summary(of: error))")
        }
    }

    /// What went wrong, by coding path and kind only: the error's own text can quote the data.
    package static func summary(of error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = names(context.codingPath)
            return keys.isEmpty ? "at the top level" : "at '\(keys)'"
        }
        switch error {
        case DecodingError.typeMismatch(let type, let context): return "expected \(type) \(path(context))"
        case DecodingError.valueNotFound(let type, let context): return "missing \(type) value \(path(context))"
        case DecodingError.keyNotFound(let key, let context): return "missing key '\(names([key]))' \(path(context))"
        case DecodingError.dataCorrupted(let context): return "malformed JSON \(path(context))"
        case EncodingError.invalidValue(_, let context):
            let keys = names(context.codingPath)
            return "a value cannot be encoded" + (keys.isEmpty ? "" : " at '\(keys)'")
        default: return String(describing: type(of: error))
        }
    }

    /// A coding path as `field.[2].<key>`: a type's own field names (its `CodingKeys`, an enum)
    /// and array positions are shown; any other key (a dictionary's, which is part of the data
    /// and may be secret) is shown as `<key>`.
    package static func names(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { key in
            if Mirror(reflecting: key).displayStyle == .enum { return key.stringValue }
            if let index = key.intValue, key.stringValue == "Index \(index)" { return "[\(index)]" }
            return "<key>"
        }.joined(separator: ".")
    }
}

extension FileItem: ExclusiveSection {
    /// An `flock` on `.<name>.section.lock` beside the file (not the lock each write takes,
    /// which a save inside the section takes in its turn).
    func withExclusiveSection<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let directory = file.url.deletingLastPathComponent()
        try FileTrust.prepareDirectory(directory)
        let held = try await FileLock(path: directory.appendingPathComponent(".\(file.url.lastPathComponent).section.lock").path).exclusive()
        defer { held.release() }
        return try await body()
    }
}
