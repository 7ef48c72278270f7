import ArgumentParser
import CofferAuthenticator
import CofferStorage
import Foundation

extension KeyCommand {
    /// `coffer key passwd`: a new passphrase (or TPM PIN) for the accounts' key, in place.
    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd",
            abstract: "Change the passphrase (or the TPM's PIN) that seals the accounts' key.",
            discussion: """
                With the key under a passphrase: asks for the current one (a remembered key is not \
                enough), then the new one twice, and seals the key under it. --remember 8h keeps \
                the derived key in the kernel's user keyring that long after each use from now on; \
                --remember off stops it (and forgets what is kept). To change only --remember, type \
                the same passphrase as the new one.

                With the key in the TPM: asks for the current PIN (when there is one) and a new one \
                twice; --no-pin removes the PIN. The PCRs it is bound to stay.

                The key itself does not change, so nothing is sealed again. The key file is replaced \
                in one atomic, durable step under the key's lock: a process killed at any point \
                leaves the old passphrase working or the new one, never neither. For scripts, the \
                current passphrase comes from $COFFER_KEY_PASSWORD_FILE (the current PIN from \
                $COFFER_TPM_PIN_FILE) and the new one from --password-file (--pin-file).

                Examples:
                  coffer key passwd
                  coffer key passwd --remember 8h
                  coffer key passwd --remember off
                  coffer key passwd --no-pin          # the TPM's PIN
                """)

        @Option(help: ArgumentHelp("Keep the derived key in the kernel's user keyring this long after each use (30m, 8h, 1d; at most 7d), or off.",
                                   valueName: "duration|off"))
        var remember: String?
        @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the new passphrase from this file (first line).", valueName: "path"))
        var passwordFile: String?
        @Option(name: .customLong("pin-file"), help: ArgumentHelp("TPM: read the new PIN from this file (first line).", valueName: "path"))
        var pinFile: String?
        @Flag(help: "TPM: remove the PIN.") var noPin = false
        @OptionGroup var data: DataOptions

        func validate() throws {
            if noPin, pinFile != nil { throw ValidationError("choose one of --no-pin and --pin-file") }
        }

        func run() async throws {
            try await reportingErrors {
                let directory = data.directory
                let move = DefaultAuthenticatorStorage.keyMove(in: directory, tpmPIN: TPMPIN.ask, passphrase: KeyPassphrase.ask)
                if let recovery = try await move.finishInterrupted() { StandardStreams.note("coffer: \(KeyCommand.describe(recovery))") }
                let alias = DefaultAuthenticatorStorage.keyAlias
                let keys = directory.appendingPathComponent("keys", isDirectory: true)
                switch try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory) {
                case .passphrase?:
                    if pinFile != nil || noPin { throw CommandFailure.usage("--pin-file and --no-pin are for a key in the TPM; this one is under a passphrase") }
                    let kept = try rememberSetting()
                    // Both asked before the key's lock is taken: other commands wait for it, not
                    // for someone typing.
                    let current = try await KeyPassphrase.askCurrent()
                    let new = try KeyPassphrase.chooseNew(file: passwordFile)
                    let store = PassphraseKeyStore(directory: keys, passphrase: KeyPassphrase.ask)
                    try await move.exclusively {
                        try Self.stillIn(.passphrase, directory)
                        guard try await store.changePassphrase(for: alias, current: { current }, to: { new }, remember: kept) else {
                            throw KeyMove.Failure.keyMissing(.passphrase)
                        }
                    }
                    let sealing = try store.sealing(for: alias)
                    print("Changed the passphrase of the accounts' key; nothing was sealed again."
                        + (sealing.map { $0.remember > .zero ? " The derived key is remembered for \($0.remember.components.seconds) s after each use." : "" } ?? ""))
                case .tpm?:
                    if remember != nil || passwordFile != nil {
                        throw CommandFailure.usage("--remember and --password-file are for a key under a passphrase; this one is in the TPM")
                    }
                    TPMNetworkWarning.warnIfNetwork()
                    let store = TPMKeyStore(directory: keys)
                    let hasPIN = try store.sealing(for: alias)?.hasPIN ?? false
                    let current: String? = hasPIN ? try await TPMPIN.ask() : nil
                    let new: String? = noPin ? nil : try TPMPIN.chooseNew(file: pinFile)
                    try await move.exclusively {
                        try Self.stillIn(.tpm, directory)
                        guard try await store.changePIN(for: alias, current: current.map { pin in { @Sendable in pin } },
                                                        to: new.map { pin in { @Sendable in pin } }) else {
                            throw KeyMove.Failure.keyMissing(.tpm)
                        }
                    }
                    print(new == nil ? "The accounts' key in the TPM has no PIN now; nothing was sealed again."
                                     : "Changed the TPM PIN of the accounts' key; nothing was sealed again.")
                case let other?:
                    throw CommandFailure("the accounts' key is in \(try KeyCommand.describe(other, in: directory)), which no passphrase or PIN "
                        + "seals; coffer key move --to passphrase (or --to tpm --pin) puts it under one")
                case nil:
                    throw CommandFailure("there is no key yet; coffer add makes one")
                }
            }
        }

        /// Under the move lock: the key is still where it was when the passphrase was asked for.
        private static func stillIn(_ location: KeyStoreSelection.Location, _ directory: URL) throws {
            let now = try DefaultAuthenticatorStorage.recordedKeyLocation(in: directory)
            guard now == location else {
                let place = try now.map { try KeyCommand.describe($0, in: directory) } ?? "nowhere"
                throw CommandFailure("the key was moved to \(place) meanwhile "
                    + "(coffer key move); nothing was changed: run coffer key passwd again if it is still needed")
            }
        }

        /// `--remember` as a duration: `nil` keeps the current setting, `off` is zero.
        private func rememberSetting() throws -> Duration? {
            guard let remember else { return nil }
            if ["off", "0", "no", "never"].contains(remember.lowercased()) { return .zero }
            guard let seconds = HumanDuration.seconds(remember), seconds <= 7 * 86400 else {
                throw CommandFailure.usage("--remember takes a duration up to 7d, such as 30m, 8h or 1d, or off; '\(remember)' is not one")
            }
            return .seconds(seconds)
        }
    }
}
