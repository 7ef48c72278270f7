import CofferAuthenticator
import CofferStorage
import Foundation

/// P11: what a key the TPM keeps costs. A new `coffer code` process whose key the TPM unseals,
/// beside tpm2-tools doing the same TPM work for the same object (create the storage key, load
/// the object, unseal it: three new processes), and beside the same command with the key in a
/// 0600 file; then a warm `EncryptedFileStorage` get with the TPM key store beside the file key
/// store's. On a software TPM of its own (swtpm), so the TPM's own speed is the same on both sides.
struct TPMBenchmark {
    var coffer: String
    var directory: URL
    var runs: Int
    var plan: SamplePlan

    func run(into report: Report) async throws {
        guard let swtpm = Subprocess.find("swtpm"), let tpm2 = Subprocess.find("tpm2_unseal") else {
            throw BenchFailure("P11 needs swtpm and tpm2-tools (scripts/install-deps)")
        }
        let tools = URL(fileURLWithPath: tpm2).deletingLastPathComponent().path
        // A short path: the socket's must fit in 108 bytes.
        let state = "/tmp/coffer-bench-tpm.\(getpid())"
        try? FileManager.default.removeItem(atPath: state)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Subprocess.startDaemon([swtpm, "socket", "--tpm2", "--tpmstate", "dir=\(state)",
                                     "--server", "type=unixio,path=\(state)/sock", "--ctrl", "type=unixio,path=\(state)/sock.ctrl",
                                     "--flags", "not-need-init,startup-clear", "--daemon", "--pid", "file=\(state)/pid",
                                     "--log", "file=\(state)/log"])
        defer {
            if let pid = try? String(contentsOfFile: "\(state)/pid", encoding: .utf8), let number = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(number, SIGKILL)
            }
            try? FileManager.default.removeItem(atPath: state)
        }
        let tcti = "swtpm:path=\(state)/sock"

        // Two data directories with the same accounts: one key sealed by the TPM, one in a file.
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["COFFER_LOG_LEVEL"] = "error"
        environment["COFFER_TPM_TCTI"] = tcti
        environment["TPM2TOOLS_TCTI"] = tcti
        let vault = directory.appendingPathComponent("p11-vault.json")
        let account = Account(issuer: "Example", accountName: "alice@example.com")
        try AegisVault.write([AegisVault.entry(account: account, mechanism: Mechanism(
            issuer: account.issuer, accountName: account.accountName, type: .totp, secret: "JBSWY3DPEHPK3PXP"))!], password: nil)
            .write(to: vault)
        var sealedHome = environment, fileHome = environment
        sealedHome["COFFER_HOME"] = directory.appendingPathComponent("p11-tpm-home").path
        fileHome["COFFER_HOME"] = directory.appendingPathComponent("p11-file-home").path
        for home in [sealedHome, fileHome] { try Subprocess.run([coffer, "import", vault.path], environment: home) }
        try Subprocess.run([coffer, "key", "move", "--to", "tpm"], environment: sealedHome)

        // The sealed object's blobs, for tpm2_load.
        let keyFile = directory.appendingPathComponent("p11-tpm-home/keys/org.coffer.authenticator.tpm-key")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: keyFile)) as? [String: Any]
        guard let header = json?["header"] as? [String: Any], let pub = (header["publicArea"] as? String).flatMap({ Data(base64Encoded: $0) }),
              let priv = (header["privateArea"] as? String).flatMap({ Data(base64Encoded: $0) }) else {
            throw BenchFailure("the TPM-sealed key file has no object")
        }
        try pub.write(to: URL(fileURLWithPath: "\(state)/object.pub"))
        try priv.write(to: URL(fileURLWithPath: "\(state)/object.priv"))
        let unseal = ["/bin/sh", "-c", """
            set -e
            \(tools)/tpm2_createprimary -Q -C o -G ecc256:aes128cfb -g sha256 \
              -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt' -c \(state)/primary.ctx
            \(tools)/tpm2_flushcontext -t
            \(tools)/tpm2_load -Q -C \(state)/primary.ctx -u \(state)/object.pub -r \(state)/object.priv -c \(state)/object.ctx
            \(tools)/tpm2_flushcontext -t
            \(tools)/tpm2_unseal -c \(state)/object.ctx > /dev/null
            \(tools)/tpm2_flushcontext -t
            """]
        // Both work before anything is timed: tpm2-tools unseals Coffer's object.
        _ = try Subprocess.run(unseal, environment: environment)
        let code = [coffer, "code", "example", "--raw"]
        guard try Subprocess.run(code, environment: sealedHome) == Subprocess.run(code, environment: fileHome) else {
            throw BenchFailure("the TPM-sealed and the file-kept stores print different codes")
        }

        var sealedTimes = Timings(), unsealTimes = Timings(), fileTimes = Timings()
        for _ in 0..<runs {
            sealedTimes.append(try Subprocess.wallTime(code, environment: sealedHome))
            unsealTimes.append(try Subprocess.wallTime(unseal, environment: environment))
            fileTimes.append(try Subprocess.wallTime(code, environment: fileHome))
        }
        report.add(Row(id: "P11", measurement: "coffer code, key sealed by the TPM (new process, swtpm)", coffer: sealedTimes,
                       referenceName: "tpm2_createprimary+load+unseal (+3 flushes: no resource manager)", reference: unsealTimes, target: .none))
        report.add(Row(id: "P11", measurement: "coffer code, key sealed by the TPM (new process, swtpm)", coffer: sealedTimes,
                       referenceName: "coffer code, key in a 0600 file", reference: fileTimes, target: .none))

        // Warm: the ring unsealed once, then every get checks the file's stamp and opens the value.
        let tpmStore = TPMKeyStore(directory: directory.appendingPathComponent("p11-lib/tpm-keys"),
                                   tpm: TrustedPlatformModule(tcti: tcti))
        let fileStore = FileKeyStore(directory: directory.appendingPathComponent("p11-lib/file-keys"))
        let sealed = EncryptedFileStorage<String>(fileName: "p11", directory: directory.appendingPathComponent("p11-lib/tpm"),
                                                  keyStore: tpmStore)
        let plain = EncryptedFileStorage<String>(fileName: "p11", directory: directory.appendingPathComponent("p11-lib/file"),
                                                 keyStore: fileStore)
        try await sealed.save(item: "refresh-token")
        try await plain.save(item: "refresh-token")
        let gets = try await measureAlternating(plan, subject: { _ in
            guard try await sealed.get() != nil else { throw BenchFailure("the value vanished") }
        }, reference: { _ in
            guard try await plain.get() != nil else { throw BenchFailure("the value vanished") }
        })
        report.add(Row(id: "P11", measurement: "EncryptedFileStorage get, TPMKeyStore (ring unsealed once)", coffer: gets.subject,
                       referenceName: "the same with FileKeyStore", reference: gets.reference, target: .ratioAtMost(1.1)))
    }
}
