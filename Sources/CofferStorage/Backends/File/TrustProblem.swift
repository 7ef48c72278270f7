/// Why ``FileTrust`` refused a file or directory: the reason of
/// ``StorageError/untrusted(path:owner:mode:reason:)``, one case per cause, so each gets advice
/// of its own and a program can tell them apart. Its `description` is the reason in words.
public enum TrustProblem: Sendable, Equatable, CustomStringConvertible {
    /// A directory was needed.
    case notADirectory
    /// A component on the way to `path` is a file, not a directory.
    case notADirectoryOnTheWay(to: String)
    /// A file was needed, and a directory is there.
    case directoryNotFile
    /// A regular file was needed, and a device, FIFO or socket is there.
    case notARegularFile
    /// A symbolic link where Coffer expects a file of its own (it never follows one).
    case symbolicLink
    /// Another user owns it.
    case foreignOwner(owner: UInt32, you: UInt32)
    /// A symbolic link on the way to `path` belongs to another user (not root).
    case foreignLinkOnTheWay(to: String, owner: UInt32, you: UInt32)
    /// A directory on the way belongs to another user (not root).
    case foreignDirectoryOnTheWay(owner: UInt32, you: UInt32)
    /// Group or other users can write to it.
    case writableByOthers
    /// A directory on the way that group or other users can write to without the sticky bit.
    case writableWithoutStickyBit
    /// Group or other users can read the key material in it.
    case readableKeyMaterial
    /// Something is already there, and Coffer creates only new files (or, with
    /// `newDirectoryOnly`, writes only into a new directory).
    case alreadyExists(newDirectoryOnly: Bool)

    /// The reason in words, as it follows "Coffer will not use PATH:".
    public var description: String {
        switch self {
        case .notADirectory: "it is not a directory"
        case .notADirectoryOnTheWay(let path): "it is on the way to \(path) but is not a directory"
        case .directoryNotFile: "it is a directory, not a file"
        case .notARegularFile: "it is not a regular file"
        case .symbolicLink: "it is a symbolic link, which Coffer never follows for its own files"
        case let .foreignOwner(owner, you): "it belongs to uid \(owner), not to you (uid \(you))"
        case let .foreignLinkOnTheWay(path, owner, you):
            "it is a symbolic link on the way to \(path) and belongs to uid \(owner), not to you (uid \(you)) or root"
        case let .foreignDirectoryOnTheWay(owner, you):
            "it is a directory on the way and belongs to uid \(owner), not to you (uid \(you)) or root"
        case .writableByOthers: "group or other users can write to it"
        case .writableWithoutStickyBit: "group or other users can write to it and it has no sticky bit, so they could replace what is in it"
        case .readableKeyMaterial: "group or other users can read the key material in it"
        case .alreadyExists(let newDirectoryOnly):
            newDirectoryOnly ? "something is already there, and Coffer writes into a new directory only"
                : "something is already there, and Coffer never replaces it"
        }
    }
}
