/// The sections of the tool's own page that no `--help` holds: how it exits, what it reads from
/// the environment, which files it keeps.
enum ManualSections {
    /// Every ``ExitStatus`` with what it means.
    static var exitStatus: [String] {
        [".SH EXIT STATUS", "The same for every command:"]
            + ExitStatus.allCases.flatMap { [".TP", "\(Roff.bold(String($0.rawValue)))", Roff.escaped($0.meaning)] }
    }

    /// The variables the tool reads. (A test checks that every `COFFER_` variable the sources
    /// read is here, or is one the tool sets for itself.)
    static let variables: [(name: String, meaning: String)] = [
        ("COFFER_HOME", "The data directory, unless --data-dir names one."),
        ("XDG_DATA_HOME", "Without COFFER_HOME, the data directory is $XDG_DATA_HOME/coffer, else ~/.local/share/coffer."),
        ("COFFER_BACKEND", "Where accounts live: sqlite (the default), keychain (the OS keyring) or postgres; --backend overrides it."),
        ("COFFER_STORE_BACKEND", "Where coffer store keeps values: file (the default) or keychain."),
        ("COFFER_PASSWORD", "The password of an encrypted export or import, for scripts (else --password-file, else asked)."),
        ("COFFER_KEY_PASSWORD_FILE", "A file whose first line is the passphrase of a key moved with key move --to passphrase."),
        ("COFFER_KEY_PASSWORD", "That passphrase itself, when there is no such file (else it is asked at the terminal)."),
        ("COFFER_TPM_TCTI", "The TPM to use as a tpm2-tss TCTI string (device:/dev/tpm0, swtpm:host=localhost,port=2321); default /dev/tpmrm0."),
        ("COFFER_TPM_PIN_FILE", "A file whose first line is the PIN of a TPM-sealed key (else it is asked)."),
        ("COFFER_TRASH_DAYS", "How many days the trash keeps what was removed or replaced: 0 to 365, default 30."),
        ("COFFER_CLIPBOARD_CLEAR_SECONDS", "How long a copied code stays on the clipboard, default 30."),
        ("COFFER_KEYRING_TIMEOUT", "How many seconds one call to the keyring may take before coffer gives up (exit 69): 1 to 3600, default 10."),
        ("COFFER_LOG_LEVEL", "The libraries' log lines on standard error: trace, debug, info, notice, warning, error or critical (default: critical)."),
        ("COFFER_DATABASE_URL", "With the postgres backend: the database URL, libpq's form: postgresql://user@/db?host=/run/postgresql for a Unix socket."),
        ("COFFER_DATABASE_KEK", "With the postgres backend: the key-encryption key, a file (default keys/postgres.kek in the data directory), keyring, tpm:FILE or credential:NAME."),
        ("COFFER_DATABASE_TIMEOUT", "With the postgres backend: how many seconds one database operation may take before coffer gives up (exit 69): 1 to 3600, default 10."),
        ("COFFER_OWNER", "With the postgres backend: whose accounts (default: your login name)."),
        ("COFFER_LIBSECRET", "The libsecret library to load, an absolute path; so are COFFER_LIBZBAR, COFFER_LIBPNG, COFFER_LIBTURBOJPEG and COFFER_LIBQRENCODE for theirs."),
    ]

    static var environment: [String] {
        [".SH ENVIRONMENT"] + variables.flatMap { [".TP", Roff.bold($0.name), Roff.escaped($0.meaning)] }
    }

    static let files: [String] = [
        ".SH FILES",
        ".TP", Roff.escaped("<data-dir>/authenticator.sqlite"),
        Roff.escaped("The accounts, each secret sealed with AES-256-GCM (0600; the directory 0700)."),
        ".TP", Roff.escaped("<data-dir>/keys/"),
        Roff.escaped("The accounts' key when it is kept in a file rather than the OS keyring or a TPM (0600)."),
        ".TP", Roff.escaped("<data-dir>/trash/"),
        Roff.escaped("What remove, add --replace, import --overwrite and rename took away, sealed, for coffer restore."),
        ".TP", Roff.escaped("<data-dir>/store/"),
        Roff.escaped("The values of coffer store, one sealed file each."),
    ]
}
