import Foundation

/// A code and what a screen shows beside it.
public struct OathCodeInfo: Codable, Sendable {
    /// The code, zero-padded to the credential's digits.
    public let code: String
    /// TOTP: seconds left in the code's time step (1…period). HOTP: -1.
    public let timeRemaining: Int
    /// HOTP: the counter after this code (the counter used, plus one). TOTP: -1.
    public let counter: Int
    /// TOTP: how much of the time step has passed, `1 - timeRemaining / totalPeriod`. HOTP: 0.
    public let progress: Double
    /// TOTP: the period. HOTP: 0.
    public let totalPeriod: Int

    private init(code: String, timeRemaining: Int, counter: Int, progress: Double, totalPeriod: Int) {
        self.code = code
        self.timeRemaining = timeRemaining
        self.counter = counter
        self.progress = progress
        self.totalPeriod = totalPeriod
    }

    /// A TOTP code with `timeRemaining` of `totalPeriod` seconds left.
    public static func forTotp(code: String, timeRemaining: Int, totalPeriod: Int) -> OathCodeInfo {
        OathCodeInfo(code: code, timeRemaining: timeRemaining, counter: -1,
                     progress: totalPeriod > 0 ? 1 - Double(timeRemaining) / Double(totalPeriod) : 0, totalPeriod: totalPeriod)
    }

    /// A HOTP code; `counter` is the counter after it.
    public static func forHotp(code: String, counter: Int) -> OathCodeInfo {
        OathCodeInfo(code: code, timeRemaining: -1, counter: counter, progress: 0, totalPeriod: 0)
    }

    /// The code as JSON.
    public func toJson() throws -> String {
        String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
    }

    /// A code from ``toJson()``'s JSON.
    public static func fromJson(_ jsonString: String) throws -> OathCodeInfo {
        try JSONDecoder().decode(OathCodeInfo.self, from: Data(jsonString.utf8))
    }
}
