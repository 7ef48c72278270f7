import GRDB

extension Row {
    /// The column's value as `Value`, or `nil` when it is NULL, missing or of another type.
    ///
    /// GRDB's typed subscript stops the process on a value it cannot convert; a row crafted with
    /// text in an integer column must instead be refused as damaged (the storages' listings log
    /// and skip it), so Coffer's SQLite storages read columns through this.
    package func lenient<Value: DatabaseValueConvertible>(_ column: String) -> Value? {
        guard let value = self[column] as DatabaseValue? else { return nil }
        return Value.fromDatabaseValue(value)
    }
}
