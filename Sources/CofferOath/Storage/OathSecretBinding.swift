import CofferMFAEngine

extension OathCredential {
    /// What a SQL storage seals this credential's secret under: its id and the columns that
    /// decide which code it makes under which name (issuer, account, type, algorithm, digits,
    /// period, counter). A secret copied to another row, or a row whose counter was rolled back
    /// or whose issuer was swapped, no longer opens. The SQLite and PostgreSQL storages share
    /// it (PostgreSQL puts the owner in front).
    package var sealedSecretIdentity: String {
        RowBinding.identity("oath/\(id)/secret", columns: [
            issuer, accountName, type, algorithm, String(digits), String(period), String(counter),
        ])
    }
}
