/// What `dump(_:)` prints for `value`: its mirror, recursively.
public func dumped(_ value: Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
}

/// Every way a value becomes text without asking for a field by name: interpolation
/// (`description`), `String(reflecting:)` (`debugDescription`) and `dump`. Tests of secrets
/// check that none of them shows one.
public func renderings(of value: Any) -> [String] {
    ["\(value)", String(reflecting: value), dumped(value)]
}
