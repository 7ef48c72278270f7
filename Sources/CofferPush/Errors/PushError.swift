import Foundation

/// Why the Push client refused a request. Its description is Ping's fixed phrase, then `: ` and
/// the payload (ids, parameter names, reasons; never a secret or a challenge).
public enum PushError: Error, LocalizedError, Sendable {
    /// The client was closed.
    case notInitialized
    /// The client could not be made.
    case initializationFailed(String, Error?)
    /// The URI is not a push enrolment URI.
    case invalidUri(String)
    /// A required parameter is absent.
    case missingRequiredParameter(String)
    /// A value is out of range or malformed.
    case invalidParameterValue(String)
    /// The credential cannot be written as a URI.
    case uriFormatting(String)
    /// Not `default`, `challenge` or `biometric`.
    case invalidPushType(String)
    /// Not a known platform.
    case invalidPlatform(String)
    /// The storage failed; the underlying error says why.
    case storageFailure(String, Error?)
    /// No device token is stored; set one first.
    case deviceTokenNotSet
    /// No handler is configured for the credential's platform.
    case noHandlerForPlatform(String)
    /// A message could not be read.
    case messageParsingFailed(String)
    /// No credential has this id.
    case credentialNotFound(String)
    /// A policy locked the credential.
    case credentialLocked(String)
    /// No notification has this id.
    case notificationNotFound(String)
    /// A policy refused the credential.
    case policyViolation(String)
    /// The server refused the registration.
    case registrationFailed(String)
    /// The server could not be reached, or answered badly.
    case networkFailure(String, Error?)

    /// Ping's phrase for the case, `: `, the payload, and ` - ` and the underlying error's
    /// description where there is one.
    public var errorDescription: String? {
        switch self {
        case .notInitialized: "Push client has not been initialized"
        case let .initializationFailed(message, error): Self.line("Initialization failed", message, error)
        case .invalidUri(let message): "Invalid Push URI: \(message)"
        case .missingRequiredParameter(let message): "Missing required parameter: \(message)"
        case .invalidParameterValue(let message): "Invalid parameter value: \(message)"
        case .uriFormatting(let message): "URI formatting failed: \(message)"
        case .invalidPushType(let type): "Invalid push type: \(type)"
        case .invalidPlatform(let platform): "Invalid platform: \(platform)"
        case let .storageFailure(message, error): Self.line("Storage failure", message, error)
        case .deviceTokenNotSet: "Device token has not been set"
        case .noHandlerForPlatform(let platform): "No handler available for platform: \(platform)"
        case .messageParsingFailed(let message): "Message parsing failed: \(message)"
        case .credentialNotFound(let id): "Credential not found: \(id)"
        case .credentialLocked(let id): "Credential is locked: \(id)"
        case .notificationNotFound(let id): "Notification not found: \(id)"
        case .policyViolation(let message): "Policy violation: \(message)"
        case .registrationFailed(let message): "Registration failed: \(message)"
        case let .networkFailure(message, error): Self.line("Network failure", message, error)
        }
    }

    static func line(_ phrase: String, _ message: String, _ error: Error?) -> String {
        "\(phrase): \(message)" + (error.map { " - \($0.localizedDescription)" } ?? "")
    }
}

/// Why a ``PushStorage`` failed.
public enum PushStorageError: Error, LocalizedError, Sendable {
    /// The operation failed; the underlying error says why.
    case storageFailure(String, Error?)
    /// A credential with this id exists (Coffer's storages upsert and never throw it).
    case duplicateCredential(String)
    /// A notification with this id exists (Coffer's storages upsert and never throw it).
    case duplicateNotification(String)

    /// Ping's phrase, `: `, the payload, and ` - ` and the underlying error's description.
    public var errorDescription: String? {
        switch self {
        case let .storageFailure(message, error): PushError.line("Storage failure", message, error)
        case .duplicateCredential(let id): "Duplicate credential: \(id)"
        case .duplicateNotification(let id): "Duplicate notification: \(id)"
        }
    }
}
