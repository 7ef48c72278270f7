import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer verify`: whether a code is one the account would accept, as `oathtool CODE` checks.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a code against one account (TOTP within a window of time steps, HOTP ahead of its counter).",
        discussion: """
            TOTP and Steam: the code must be the current one, or within --window steps before or \
            after it. HOTP: the code must be one of the next --window + 1 counter values; \
            verifying never moves the counter unless --resync is given, and then moves it past \
            the value that matched (never back), so the codes up to it are not issued again. \
            Exits with status 0 when the code is valid, 1 when it is not, 2 or 3 when QUERY \
            matches no account or several.

            Examples:
              coffer verify 123456 github
              coffer verify 123456 github --window 1        # one step either side (±30 s)
              coffer verify 755224 bank --window 10 --resync
            """)

    @Argument(help: ArgumentHelp("The code to check.", valueName: "code")) var code: String
    @Argument(help: ArgumentHelp("Which account (must match exactly one).", valueName: "query"), completion: .custom(AccountCompletion.titles))
    var query: String
    @Option(name: .shortAndLong, help: "TOTP: time steps accepted before and after now. HOTP: counter values accepted after the next one.")
    var window: Int = 0
    @Flag(help: "HOTP: move the counter past the value that matched.") var resync = false
    @Option(help: ArgumentHelp("Check at this time instead of now (as code --at).", valueName: "time")) var at: CodeTime?
    @OptionGroup var options: AuthenticatorOptions

    /// The most steps or counter values looked at either way: a window is a search, and a wide
    /// one accepts guesses.
    static let maximumWindow = 1000

    func validate() throws {
        guard (0...Self.maximumWindow).contains(window) else { throw ValidationError("--window takes 0 to \(Self.maximumWindow)") }
        guard !code.isEmpty, code.count <= 10, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw ValidationError("a code is 5 to 10 letters or digits")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, storage) = try options.open()
            let entry = try AccountQuery.one(AccountQuery.entries(matching: query, authenticator, storage, whole: options.data.directory), query: query)
            let title = AccountQuery.title(entry.account)
            let mechanisms = entry.mechanisms.filter { $0.type.generatesCodes }
            guard !mechanisms.isEmpty else {
                // A mechanism that could not be read is not an absent one: say why, with its status.
                if let unreadable = UnreadableRecords.failure(storage, directory: options.data.directory) { throw unreadable }
                throw CommandFailure("\(title) has no mechanism that makes codes")
            }
            if resync, !mechanisms.contains(where: { $0.type == .hotp }) { throw CommandFailure.usage("--resync is for HOTP accounts") }
            if entry.account.isLocked { throw CommandFailure("\(title) is locked; unlock it before checking its codes") }
            for mechanism in mechanisms {
                if let found = try match(mechanism) {
                    try report(found, mechanism, title: title, storage)
                    return
                }
            }
            let hint = mechanisms.contains { $0.type == .hotp }
                ? " (--window N also accepts the N codes after the next one)"
                : " \(at == nil ? "now" : "at the time given") (--window N also accepts codes N steps either side)"
            throw CommandFailure("\(code) is not a valid code for \(title)" + (window == 0 ? hint : " within a window of \(window)"))
        }
    }

    /// Where `code` matched: the time step offset (TOTP, Steam) or the counter value (HOTP).
    private enum Match { case step(Int), counter(UInt64) }

    private func match(_ mechanism: Mechanism) throws -> Match? {
        let secret = try Base32.decode(mechanism.secret)
        if mechanism.type == .hotp {
            for offset in 0...UInt64(window) {
                let (value, overflow) = mechanism.counter.addingReportingOverflow(offset)
                guard !overflow else { break }
                let expected = try OathGenerator.hotp(secret: secret, counter: value, digits: mechanism.digits, algorithm: mechanism.algorithm)
                if constantTimeEqual(expected, code) { return .counter(value) }
            }
            return nil
        }
        let now = at?.date ?? Date()
        let period = mechanism.type == .steam ? 30 : mechanism.period
        // Nearest first: the current step, then one before and after, and so on.
        for distance in 0...window {
            for step in distance == 0 ? [0] : [-distance, distance] {
                let time = now.addingTimeInterval(TimeInterval(step * period))
                if constantTimeEqual(try CodeWatch.code(mechanism, at: time).code, code) { return .step(step) }
            }
        }
        return nil
    }

    private func report(_ found: Match, _ mechanism: Mechanism, title: String, _ storage: any StorageClient) throws {
        switch found {
        case .step(let step):
            let moment = at == nil ? "now" : "the time given"
            let steps = "\(abs(step)) step\(abs(step) == 1 ? "" : "s") \(step < 0 ? "before" : "after") \(moment)"
            print(step == 0 && at == nil ? "Valid: the current code of \(title)."
                  : "Valid: the code of \(title) \(step == 0 ? "at \(moment)" : steps).")
        case .counter(let value):
            guard resync else {
                print("Valid: the code for HOTP counter \(value) of \(title) (the next is \(mechanism.counter)); the counter was not moved, --resync moves it.")
                return
            }
            // Claimed one value at a time, each an atomic step of the store: the counter only
            // moves forward, and a code issued meanwhile by another process is still never
            // issued twice.
            var stored = mechanism.counter
            while stored <= value {
                stored = try storage.advanceCounter(mechanismUUID: mechanism.mechanismUUID).counter + 1
            }
            print("Valid: the code for HOTP counter \(value) of \(title); the counter now stands at \(stored).")
        }
    }

    /// Compares two codes without an early exit: a wrong guess takes as long as a near one.
    private func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
