@_exported import struct CofferStorage.Token

/// What the userinfo endpoint returns: the user's claims.
public typealias UserInfo = [String: Sendable]
