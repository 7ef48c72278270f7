/// OATH secrets for tests that share a store with other tests (the one gnome-keyring of a run,
/// one PostgreSQL owner): its HOTP counter ledger remembers every secret a test removed, so a
/// test that expects a secret's codes from counter 0 needs a secret no other test used.
public enum TestSecret {
    /// A random 20-byte secret, in base32 (32 characters, no padding).
    public static func random() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return String((0..<32).map { _ in alphabet[Int.random(in: 0..<32)] })
    }
}
