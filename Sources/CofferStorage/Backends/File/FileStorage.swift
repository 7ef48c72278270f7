import Foundation
import Logging

/// Keeps a value as plain JSON in a file: the spec's Android `DataStoreStorage`.
///
/// The data is **not encrypted**; use ``EncryptedFileStorage`` for anything secret. Writes are
/// atomic and durable and safe between processes; the file is 0600 in a directory created 0700.
///
/// ```swift
/// let storage = FileStorage<Dog>(fileName: "dog.json", directory: folder)
/// try await storage.save(item: Dog(name: "Lucky", type: "Golden Retriever"))
/// ```
public final class FileStorage<T: Codable & Sendable>: StorageDelegate<T>, @unchecked Sendable {
    // @unchecked Sendable: adds only immutable properties to StorageDelegate (which is safe).

    /// The file that holds the value.
    public let fileURL: URL

    /// Creates a plain-file storage.
    ///
    /// - Parameters:
    ///   - fileName: The file's name inside `directory`. It must not contain `/` or start with `.`.
    ///   - directory: Where the file lives. Defaults to ``DataDirectory/default``.
    ///   - cacheStrategy: How to keep a memory copy. Defaults to ``CacheStrategy/noCache``.
    ///   - logger: Receives warnings about absorbed failures.
    public init(
        fileName: String,
        directory: URL? = nil,
        cacheStrategy: CacheStrategy = .noCache,
        logger: Logger = Logger(label: "org.coffer.storage.file")
    ) {
        let item = FileItem<T>(directory: directory ?? DataDirectory.default, fileName: fileName, sealing: .plain)
        self.fileURL = item.file.url
        super.init(delegate: item, cacheStrategy: cacheStrategy, logger: logger)
    }
}
