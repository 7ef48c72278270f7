extension SQLiteStorageClient {
    /// How a ``SQLiteStorageClient`` connects to its file.
    public enum Connections: Sendable, Equatable {
        /// A pool: one writer and concurrent readers (GRDB's `DatabasePool`), for an app or any
        /// long-lived process. Opening it writes to the file (a transaction that makes sure
        /// SQLite's WAL file is there for the readers), which SQLite syncs, and copies back
        /// into the file when the process closes it.
        case pool

        /// One connection (GRDB's `DatabaseQueue`), for a short-lived process such as a command
        /// of the `coffer` tool: reads and writes take turns. A file that is already Coffer's
        /// is opened without writing, so a process that only reads it syncs nothing and leaves
        /// it as it was. Other processes may use the same file meanwhile, with either kind.
        case single
    }
}
