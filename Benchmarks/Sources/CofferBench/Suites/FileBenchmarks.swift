import Crypto
import Foundation
import CofferStorage
import Synchronization

/// P2 durable encrypted save, P3 encrypted get and P4 cached get, each against the least work
/// that gives the same guarantee without Coffer.
struct FileBenchmarks {
    var directory: URL
    var plan: SamplePlan
    var cachedPlan: SamplePlan
    var wanted: Set<String>

    func run(into report: Report) async throws {
        let keyStore = FileKeyStore(directory: directory.appendingPathComponent("keys"))
        let storage = EncryptedFileStorage<Credential>(
            fileName: "bench.credential", directory: directory, keyStore: keyStore, cacheStrategy: .noCache)
        try await storage.save(item: .sample(0))
        let sealed = try Data(contentsOf: storage.fileURL)

        if wanted.contains("P2") { try await measureSave(storage, sealed: sealed, into: report) }
        if wanted.contains("P3") { try await measureGet(storage, keyStore: keyStore, into: report) }
        if wanted.contains("P4") { try await measureCachedGet(keyStore: keyStore, into: report) }
    }

    private func measureSave(_ storage: EncryptedFileStorage<Credential>, sealed: Data, into report: Report) async throws {
        // P2: the floor writes as many bytes as Coffer's file holds: temporary file, fsync,
        // rename, directory fsync. No lock, no encryption, no JSON.
        let floorFile = directory.appendingPathComponent("floor.bin").path
        // The values are made before the clock starts, as the floor's bytes are.
        let values = (0..<(plan.warmup + plan.samples * plan.batch)).map(Credential.sample)
        let saves = try await measureAlternating(plan, subject: { index in
            try await storage.save(item: values[index])
        }, reference: { _ in
            try Floor.durableWrite(sealed, to: floorFile)
        })
        report.add(Row(id: "P2", measurement: "encrypted file save (durable)", coffer: saves.subject,
                       referenceName: "write+fsync+rename+dir fsync", reference: saves.reference, target: .ratioAtMost(1.1),
                       note: "\(sealed.count)-byte file"))

    }

    private func measureGet(_ storage: EncryptedFileStorage<Credential>, keyStore: FileKeyStore, into report: Report) async throws {
        // P3: the floor reads the same file and opens AES-GCM with the same key; Coffer also
        // takes a shared lock, checks the envelope and identity, and decodes JSON.
        try await storage.save(item: .sample(1))
        let key = try await Floor.key(in: keyStore, alias: "bench.credential")
        let reads = try await measureAlternating(plan, subject: { _ in
            guard try await storage.get() != nil else { throw BenchFailure("the stored value vanished") }
        }, reference: { _ in
            _ = try Floor.readAndOpen(storage.fileURL.path, key: key)
        })
        report.add(Row(id: "P3", measurement: "encrypted file get", coffer: reads.subject,
                       referenceName: "read + AES-GCM open", reference: reads.reference,
                       note: "no target: a typed get must also decode the JSON (next row)"))
        // The same floor plus decoding the JSON, which a typed get cannot skip: what is left is
        // Coffer's own work (envelope and identity checks, the lock, the async call).
        let decoded = try await measureAlternating(plan, subject: { _ in
            guard try await storage.get() != nil else { throw BenchFailure("the stored value vanished") }
        }, reference: { _ in
            let json = try Floor.readAndOpen(storage.fileURL.path, key: key)
            _ = try JSONDecoder().decode(Credential.self, from: json.dropFirst(json.firstIndex(of: UInt8(ascii: "{")) ?? 0))
        })
        report.add(Row(id: "P3", measurement: "encrypted file get", coffer: decoded.subject,
                       referenceName: "read + AES-GCM open + JSON decode", reference: decoded.reference, target: .ratioAtMost(1.3)))

    }

    private func measureCachedGet(keyStore: FileKeyStore, into report: Report) async throws {
        // P4: a .cache storage serves repeated gets from memory; the floor is a value behind a mutex.
        let cached = EncryptedFileStorage<Credential>(
            fileName: "bench.credential", directory: directory, keyStore: keyStore, cacheStrategy: .cache)
        let value = try await cached.get()
        let guarded = Mutex<Credential?>(value)
        let cachedReads = try await measureAlternating(cachedPlan, subject: { _ in
            guard try await cached.get() != nil else { throw BenchFailure("the cached value vanished") }
        }, reference: { _ in
            guard guarded.withLock({ $0 }) != nil else { throw BenchFailure("the guarded value vanished") }
        })
        report.add(Row(id: "P4", measurement: "cached get (.cache)", coffer: cachedReads.subject,
                       referenceName: "mutex-guarded read", reference: cachedReads.reference, target: .ratioAtMost(1.2)))
    }
}

/// The floors: the same work done with bare system calls and swift-crypto.
enum Floor {
    static func durableWrite(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchFailure("open \(temporary): errno \(errno)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else { throw BenchFailure("write \(temporary): errno \(errno)") }
        close(fd)
        guard rename(temporary, path) == 0 else { throw BenchFailure("rename: errno \(errno)") }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0, fsync(directory) == 0 else { throw BenchFailure("fsync directory: errno \(errno)") }
        close(directory)
    }

    static func readAndOpen(_ path: String, key: SymmetricKey) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchFailure("open \(path): errno \(errno)") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { throw BenchFailure("read \(path): errno \(errno)") }
        // The envelope's layout (SealedEnvelope): header, nonce, ciphertext, tag; the header
        // is authenticated data.
        let bytes = buffer[0..<count]
        let header = SealedEnvelope.headerSize, nonceEnd = header + SealedEnvelope.nonceSize
        let tagStart = count - SealedEnvelope.tagSize
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: bytes[header..<nonceEnd]), ciphertext: bytes[nonceEnd..<tagStart], tag: bytes[tagStart...])
        return try AES.GCM.open(box, using: key, authenticating: bytes[0..<header])
    }

    static func key(in keyStore: FileKeyStore, alias: String) async throws -> SymmetricKey {
        guard let primary = try await keyStore.primaryKey(for: alias) else { throw BenchFailure("no key for \(alias)") }
        return primary.key
    }
}
