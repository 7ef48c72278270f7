import CofferMFAEngine

extension OathCredential {
    /// What a SQL storage seals this credential's secret under: its id and the columns that
    /// decide which code it makes under which name and whether it may make one (issuer,
    /// account, shown names, type, algorithm, digits, period, counter, policies, lock). A secret
    /// copied to another row, or a row whose counter was rolled back, whose issuer was swapped
    /// or whose lock was lifted by hand, no longer opens. The SQLite and PostgreSQL storages
    /// share it (PostgreSQL puts the owner in front).
    package var sealedSecretIdentity: String {
        RowBinding.identity("oath/\(id)/secret", columns: [
            issuer, accountName, displayIssuer, displayAccountName, type, algorithm, String(digits), String(period), String(counter),
            RowBinding.optional(policies), String(isLocked), RowBinding.optional(lockingPolicy),
        ])
    }
}
