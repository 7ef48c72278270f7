import Authenticator
import CofferPostgres
import CofferStorageTesting
import Foundation
import Storage

// Exits 1 unless Coffer, used from outside, does what it says.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-consumer-\(getpid())")
defer { try? FileManager.default.removeItem(at: folder) }
let savedAndRead = try await tokenRoundTrip(in: folder)
let code = try firstRFC4226Code()
let url = try PostgresConnectionURL("postgresql://app@/app?host=/run/postgresql")
print("coffer \(cofferVersion()): token saved and read \(savedAndRead), RFC 4226 code \(code), database \(url)")
guard savedAndRead, code == "755224", cofferVersion() == CommandLine.arguments.dropFirst().first else { exit(1) }
