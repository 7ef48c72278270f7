import Foundation

/// Why the Oath client refused a request. Payloads are ids, parameter names and reasons; never
/// a secret or a code.
public enum OathError: LocalizedError, Sendable {
    /// No credential has this id.
    case credentialNotFound(String)
    /// A policy locked the credential; it makes no codes.
    case credentialLocked(String)
    /// A credential with this id exists.
    case duplicateCredential(String)
    /// The URI is not an OATH enrolment URI.
    case invalidUri(String)
    /// A required URI parameter is absent.
    case missingRequiredParameter(String)
    /// A value is out of range or malformed.
    case invalidParameterValue(String)
    /// The credential cannot be written as a URI.
    case uriFormatting(String)
    /// The secret is missing, too long or not base32.
    case invalidSecret(String)
    /// Not `totp` or `hotp`.
    case invalidOathType(String)
    /// Not SHA1, SHA256 or SHA512.
    case invalidAlgorithm(String)
    /// The code could not be computed.
    case codeGenerationFailed(String, Error? = nil)
    /// A policy refused the credential: (message, credential id), as Ping throws it.
    case policyViolation(String, String)
    /// The client could not be made.
    case initializationFailed(String, Error? = nil)
    /// Cleaning up failed.
    case cleanupFailed(String, Error? = nil)

    /// What happened, in Ping's words.
    public var errorDescription: String? {
        switch self {
        case .credentialNotFound(let id): "Credential with ID '\(id)' was not found"
        case .credentialLocked(let id): "Credential with ID '\(id)' is locked and cannot be used"
        case .duplicateCredential(let id): "A credential with ID '\(id)' already exists"
        case .invalidUri(let message): "Invalid URI: \(message)"
        case .missingRequiredParameter(let message): "Missing required parameter: \(message)"
        case .invalidParameterValue(let message): "Invalid parameter value: \(message)"
        case .uriFormatting(let message): "URI formatting failed: \(message)"
        case .invalidSecret(let message): "Invalid secret key: \(message)"
        case .invalidOathType(let type): "Invalid OATH type: \(type)"
        case .invalidAlgorithm(let algorithm): "Unsupported algorithm: \(algorithm)"
        case .codeGenerationFailed(let message, _): "Code generation failed: \(message)"
        case let .policyViolation(policy, message): "Policy '\(policy)' violation: \(message)"
        case .initializationFailed(let message, _): "Initialization failed: \(message)"
        case .cleanupFailed(let message, _): "Cleanup failed: \(message)"
        }
    }

    /// Why, in one generic sentence per case.
    public var failureReason: String? {
        switch self {
        case .credentialNotFound: "The credential is not in storage."
        case .credentialLocked: "A policy locked the credential, so it cannot generate codes."
        case .duplicateCredential: "A credential with the same identifier exists."
        case .invalidUri: "The URI's format is invalid or not supported."
        case .missingRequiredParameter: "A required URI parameter is absent."
        case .invalidParameterValue: "One or more values are invalid."
        case .uriFormatting: "The credential could not be written as a URI."
        case .invalidSecret: "The secret is not valid base32."
        case .invalidOathType: "The OATH type is not supported."
        case .invalidAlgorithm: "The HMAC algorithm is not supported."
        case .codeGenerationFailed: "An error occurred while generating the code."
        case .policyViolation: "A configured policy is violated."
        case .initializationFailed: "The OATH client failed to initialise."
        case .cleanupFailed: "Resources could not be cleaned up."
        }
    }

    /// What to do, in one generic sentence per case.
    public var recoverySuggestion: String? {
        switch self {
        case .credentialNotFound: "Check the credential id, and whether the credential exists."
        case .credentialLocked: "Check the credential's policies, or wait for the lock to lift."
        case .duplicateCredential: "Use another id, or update the existing credential."
        case .invalidUri: "Use the otpauth:// or mfauth:// format."
        case .missingRequiredParameter: "Add the parameter to the URI."
        case .invalidParameterValue: "Check the values' ranges."
        case .uriFormatting: "Check that the credential's data is complete."
        case .invalidSecret: "Use a valid base32 secret."
        case .invalidOathType: "Use totp or hotp."
        case .invalidAlgorithm: "Use SHA1, SHA256 or SHA512."
        case .codeGenerationFailed: "Check the credential's data and the device clock."
        case .policyViolation: "Review the policy, or ask the administrator."
        case .initializationFailed: "Check the configuration and try again."
        case .cleanupFailed: "It is safe to continue."
        }
    }
}

/// Why an ``OathStorage`` failed.
public enum OathStorageError: LocalizedError, Sendable {
    /// The operation failed; the underlying error says why.
    case storageFailure(String, Error? = nil)
    /// A credential with this id exists (Coffer's storages upsert and never throw it).
    case duplicateCredential(String)
    /// Stored data is damaged, incomplete, or was moved from another credential.
    case storageCorrupted(String)
    /// The keyring or database refused access (locked, not unlocked, no permission).
    case accessDenied(String)

    /// What happened, in Ping's words; the underlying error is kept in the case, not the text.
    public var errorDescription: String? {
        switch self {
        case .storageFailure(let message, _): "Storage operation failed: \(message)"
        case .duplicateCredential(let id): "Duplicate credential: \(id)"
        case .storageCorrupted(let message): "Storage corrupted: \(message)"
        case .accessDenied(let message): "Access denied: \(message)"
        }
    }

    /// Why, in one generic sentence per case.
    public var failureReason: String? {
        switch self {
        case .storageFailure: "The storage system reported an error."
        case .duplicateCredential: "A credential with the same identifier exists."
        case .storageCorrupted: "Stored data is corrupted or invalid."
        case .accessDenied: "The system refused access to the storage."
        }
    }

    /// What to do, in one generic sentence per case.
    public var recoverySuggestion: String? {
        switch self {
        case .storageFailure: "Try again, and check the storage's permissions."
        case .duplicateCredential: "Use another id, or update the existing credential."
        case .storageCorrupted: "Restore the credential from a backup, or re-add it from its issuer."
        case .accessDenied: "Check permissions, and that the keyring or database is unlocked and reachable."
        }
    }
}
