import CofferStorage

extension StorageDelegate where T == Token {
    /// `get()`, called through the storage's own final class when it is one of Coffer's
    /// backends (none of which overrides `get()`), so the compiler calls and inlines the
    /// version specialised for ``Token``; any other storage is called as it is.
    ///
    /// The client holds its storage as a `StorageDelegate<Token>`, whose `get()` is open: a call
    /// through it runs generic code that looks up type metadata at run time, which for a cached
    /// token cost twice the read itself (docs/performance.md, P12).
    @inline(__always)
    func tokenGet() async throws -> Token? {
        switch ObjectIdentifier(type(of: self)) {
        case ObjectIdentifier(EncryptedFileStorage<Token>.self): try await unsafeDowncast(self, to: EncryptedFileStorage<Token>.self).get()
        case ObjectIdentifier(KeychainStorage<Token>.self): try await unsafeDowncast(self, to: KeychainStorage<Token>.self).get()
        case ObjectIdentifier(MemoryStorage<Token>.self): try await unsafeDowncast(self, to: MemoryStorage<Token>.self).get()
        default: try await get()
        }
    }
}
