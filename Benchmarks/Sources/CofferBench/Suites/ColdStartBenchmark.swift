import CofferAuthenticator
import Foundation

/// P6: `coffer code QUERY` as a new process on a store of `accounts` TOTP accounts, against
/// `oathtool` computing one TOTP code from a secret on its command line.
///
/// Both run without a session bus, so Coffer's key store is its 0600 key file: the figure is
/// start-up, opening SQLite, one key read, one decryption and one code, not the keyring.
struct ColdStartBenchmark {
    var coffer: String
    var oathtool: String
    var directory: URL
    var accounts: Int
    var runs: Int

    func run(into report: Report) throws {
        let home = directory.appendingPathComponent("p6-home")
        try? FileManager.default.removeItem(at: home)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["COFFER_HOME"] = home.path
        environment["COFFER_LOG_LEVEL"] = "error"

        let secret = "JBSWY3DPEHPK3PXP"
        let vault = directory.appendingPathComponent("p6-vault.json")
        let entries = (0..<accounts).compactMap { index in
            let account = Account(issuer: "Issuer\(index)", accountName: "user\(index)@example.com")
            return AegisVault.entry(account: account, mechanism: Mechanism(
                issuer: account.issuer, accountName: account.accountName, type: .totp, secret: secret))
        }
        try AegisVault.write(entries, password: nil).write(to: vault)
        try Subprocess.run([coffer, "import", vault.path], environment: environment)

        let query = "Issuer\(accounts / 2):user\(accounts / 2)@example.com"
        let cofferCommand = [coffer, "code", query]
        let oathCommand = [oathtool, "--totp", "-b", secret]
        // Check both print the same code before timing them.
        let ours = try Subprocess.run(cofferCommand, environment: environment)
        let theirs = try Subprocess.run(oathCommand, environment: environment).trimmingCharacters(in: .whitespacesAndNewlines)
        guard ours.contains(theirs) else { throw BenchFailure("coffer printed \(ours), oathtool \(theirs)") }

        var cofferTimes = Timings()
        var oathTimes = Timings()
        for _ in 0..<runs {
            cofferTimes.append(try Subprocess.wallTime(cofferCommand, environment: environment))
            oathTimes.append(try Subprocess.wallTime(oathCommand, environment: environment))
        }
        report.add(Row(id: "P6", measurement: "coffer code, 1 of \(Format.count(accounts)) accounts (new process)",
                       coffer: cofferTimes, referenceName: "oathtool --totp", reference: oathTimes, target: .ratioAtMost(10)))
    }
}
