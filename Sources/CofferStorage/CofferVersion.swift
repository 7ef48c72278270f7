/// Coffer's version, from this one place: the `coffer` tool prints it (`coffer --version`), and
/// `CHANGELOG.md` and the README's dependency line name the same one.
public enum CofferVersion {
    /// The semantic version of this release.
    public static let current = "0.3.0"
}
