// The readers, the Aegis codec and the exporters moved to CofferMFATransfer, which both
// generations share; code written against CofferAuthenticator keeps seeing them (`ImportEntry`,
// `ImportFormat`, `AegisVault`, …) without a new import, as swift-nio's NIO re-exports NIOCore.
@_exported import CofferMFATransfer
