import CofferStorage
import Foundation

/// Saves a token in an encrypted file in `folder` and reads it back.
public func tokenRoundTrip(in folder: URL) async throws -> Bool {
    let storage = EncryptedFileStorage<Token>(fileName: "token", directory: folder)
    try await storage.save(item: Token(accessToken: "consumer", expiresIn: 60))
    return try await storage.get()?.accessToken == "consumer"
}
