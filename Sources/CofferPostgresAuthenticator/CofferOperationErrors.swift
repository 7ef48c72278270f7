import CofferAuthenticator
import CofferPostgres

/// The authenticator stores' own errors pass through a database operation unchanged.
extension StorageClientError: CofferOperationError {}
