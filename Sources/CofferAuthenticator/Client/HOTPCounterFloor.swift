import CofferMFAEngine
import CofferStorage
import Foundation
import Synchronization

/// The rule that a HOTP counter never goes back: a mechanism added, restored or imported with a
/// secret seen before starts at the highest counter that secret was seen with — in the store,
/// in what a trash keeps, or in the store's `HOTPCounterLedger` — so no code the server has
/// seen is issued again. And its companion: a HOTP secret another account holds now is refused,
/// since each account's counter would issue the same codes. One secret is one HMAC key in every
/// spelling (`OathKeyIdentity`).
///
/// ``AuthenticatorClient/init(storage:ledger:remembered:trash:enableCredentialCache:logger:clock:)``
/// applies it to every mechanism the client stores, and records each HOTP mechanism's counter
/// in the ledger before the client takes it out.
public final class HOTPCounterFloor: @unchecked Sendable {
    // @unchecked Sendable: `storage` (a StorageClient need not be Sendable) is only called from
    // `floor(for:)` with `reading` held; the other properties are immutable and Sendable.
    private let reading = Mutex(())
    private let storage: any StorageClient
    private let ledger: (any HOTPCounterLedger)?
    private let remembered: (@Sendable () throws -> [Mechanism])?

    /// The floor over `storage`'s live mechanisms, `ledger`'s counters and the mechanisms
    /// `remembered` returns (what a trash keeps).
    public init(storage: any StorageClient, ledger: (any HOTPCounterLedger)?, remembered: (@Sendable () throws -> [Mechanism])? = nil) {
        self.storage = storage
        self.ledger = ledger
        self.remembered = remembered
    }

    /// The lowest counter `mechanism` may be stored with: the highest its secret was seen with,
    /// read afresh each time (a long-lived client sees what it and other processes removed since).
    ///
    /// - Throws: ``HOTPCounterFloorError`` when another account holds the secret, or the ledger
    ///   or the remembered mechanisms cannot be read: a floor that is not known stops the add,
    ///   it is never taken for 0.
    public func floor(for mechanism: Mechanism) throws(HOTPCounterFloorError) -> UInt64 {
        guard mechanism.type == .hotp, let identity = mechanism.keyIdentity else { return 0 }
        return try reading.withLock { _ throws(HOTPCounterFloorError) in
            let live = storage.getAllAccounts().map { ($0, storage.getMechanismsForAccount(account: $0)) }
            for (account, mechanisms) in live where account.issuer != mechanism.issuer || account.accountName != mechanism.accountName {
                if mechanisms.contains(where: { $0.type == .hotp && $0.keyIdentity == identity }) { throw .secretHeldBy(account) }
            }
            return HOTPCounters.floor(for: mechanism, in: try collect(live.flatMap(\.1)))
        }
    }

    private func collect(_ stored: [Mechanism]) throws(HOTPCounterFloorError) -> [String: UInt64] {
        var counters: [String: UInt64] = [:]
        if let ledger {
            do { counters = try ledger.rememberedCountersBlocking() } catch { throw .ledgerUnreadable(ledger, cause: error) }
        }
        var kept: [Mechanism] = []
        if let remembered {
            do { kept = try remembered() } catch { throw .rememberedUnreadable(cause: error) }
        }
        return counters.raised(by: HOTPCounters.of(stored + kept))
    }
}

/// Why ``HOTPCounterFloor`` cannot give a floor.
public enum HOTPCounterFloorError: Error, LocalizedError, Sendable {
    /// Another account holds this HOTP secret now: two accounts with one HOTP secret would each
    /// issue the same codes.
    case secretHeldBy(Account)
    /// The ledger cannot be read; no HOTP mechanism is stored until it can.
    case ledgerUnreadable(any HOTPCounterLedger, cause: any Error)
    /// What a trash keeps cannot be read; no HOTP mechanism is stored until it can.
    case rememberedUnreadable(cause: any Error)

    /// What is wrong and what to do.
    public var errorDescription: String? {
        switch self {
        case .secretHeldBy(let account):
            return "The account \(account.issuer): \(account.accountName) holds this HOTP secret already, and two accounts with one "
                + "HOTP secret would issue the same codes: use that account, or remove it first."
        case let .ledgerUnreadable(ledger, cause):
            let place = (ledger as? SealedCounterLedgerFile).map { " (\($0.file.path))" } ?? ""
            return "The record of HOTP counters\(place) cannot be read (\(Self.reason(cause))); restore it from a backup. "
                + "No HOTP account is added until then."
        case .rememberedUnreadable(let cause):
            return "The trash cannot be read (\(Self.reason(cause))), and the HOTP counters it keeps are needed before a HOTP "
                + "account is added."
        }
    }

    private static func reason(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }
}
