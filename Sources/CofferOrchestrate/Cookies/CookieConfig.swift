import CofferStorage
import Foundation
import Synchronization

/// Ping's cookie storage type: Coffer's `Cookie`, whose `description` and `dump` never show a
/// value. Code written for Ping's `StorageDelegate<[CustomHTTPCookie]>` compiles unchanged.
public typealias CustomHTTPCookie = Cookie

/// Which cookies a ``CookieModule`` keeps across runs, and where: Ping's `CookieConfig`, and the
/// spec's `module(Cookie) { persist = …; storage { … } }`.
///
/// Cookies named in ``persist`` are kept in ``cookieStorage``, sealed; all others only in
/// ``inMemoryStorage``, for the life of the process.
///
/// ```swift
/// let cookies = CookieConfig()
/// cookies.persist = ["ST", "ST-NO-SS"]
/// cookies.storage { file in
///     file.fileName = "com.example.cookies"
/// }
/// ```
public final class CookieConfig: Sendable {
    private struct Settings: Sendable {
        var persist: [String] = []
        var cookieStorage: StorageDelegate<[Cookie]>?
    }

    private let settings = Mutex(Settings())
    private let account: String
    private let fileName: String

    /// Ping's keychain account for cookies: `COOKIE_STORAGE`.
    public static let defaultAccount = "COOKIE_STORAGE"
    /// The spec's file name for cookies: `com.pingidentity.sdk.v1.cookies`.
    public static let defaultFileName = "com.pingidentity.sdk.v1.cookies"

    /// The cookies kept for this process only.
    public let inMemoryStorage = InMemoryCookieStorage()

    /// The names of the cookies to keep across runs (none by default), for example
    /// `["iPlanetDirectoryPro"]` or the spec's `["ST", "ST-NO-SS"]`.
    public var persist: [String] {
        get { settings.withLock { $0.persist } }
        set { settings.withLock { $0.persist = newValue } }
    }

    /// Where the cookies named in ``persist`` are kept. By default Ping's: the OS keyring under
    /// `COOKIE_STORAGE` (or the account given to ``init(account:)``), and on a machine without
    /// a usable keyring an encrypted file, `com.pingidentity.sdk.v1.cookies`
    /// (`PlatformDefaultStorage`). Made when first used.
    public var cookieStorage: StorageDelegate<[Cookie]> {
        get {
            if let storage = settings.withLock({ $0.cookieStorage }) { return storage }
            // Made outside the lock (checking the keyring can take seconds); the first one kept wins.
            let made: StorageDelegate<[Cookie]> = PlatformDefaultStorage.make(account: account, fileName: fileName)
            return settings.withLock { settings in
                if let storage = settings.cookieStorage { return storage }
                settings.cookieStorage = made
                return made
            }
        }
        set { settings.withLock { $0.cookieStorage = newValue } }
    }

    /// A configuration with Ping's defaults.
    public init() {
        account = Self.defaultAccount
        fileName = Self.defaultFileName
    }

    /// A configuration whose default storage is the keyring account `account` (or, without a
    /// usable keyring, the encrypted file `com.pingidentity.sdk.v1.cookies.<account>`): one per
    /// user of a multi-user app. An account that cannot be part of a file name (a `/`, say)
    /// gives a storage whose every call fails, saying why.
    public init(account: String) {
        self.account = account
        // Namespaced: an account never names another file of the data directory (`keystore`,
        // `authenticator.sqlite`, the token file), which the storage would otherwise adopt.
        self.fileName = Self.defaultFileName + "." + account
    }

    /// Keeps the persisted cookies in an `EncryptedFileStorage` set up with the spec's Android
    /// options (`fileName`, `keyAlias`, `strongBoxPreferred`, `cacheStrategy`); the file name
    /// defaults to `com.pingidentity.sdk.v1.cookies`, or `…cookies.<account>` for ``init(account:)``.
    public func storage(_ configure: (inout FileStorageConfiguration) -> Void) {
        let fileName = self.fileName
        cookieStorage = EncryptedFileStorage<[Cookie]> { file in
            file.fileName = fileName
            configure(&file)
        }
    }
}
