/// The bytes of one JSON text as ``StreamingJSONEncoder`` writes it, and the containers still
/// open in it.
///
/// Each container is written whole before its parent goes on: writing an element of a container
/// closes every container opened after it, and a container written to once it is closed makes
/// the text ``unsupported``. So is a key written twice in one object, and a value due where none
/// is (or the reverse); the encoder then leaves the value to `JSONEncoder`.
struct JSONOutput {
    private(set) var bytes: [UInt8] = []
    /// Set when the value asked for something not written in one pass.
    private(set) var unsupported = false
    /// Whether a value is due at this point: one container, or one value written whole, fills it.
    private(set) var slotDue = false

    /// A container still open, innermost last.
    private struct Frame {
        let id: Int
        let closer: UInt8
        /// Where this object's keys begin in ``keys``.
        let firstKey: Int
        var count = 0
        /// This object's keys as a set, once it has more than ``keysLookedAtOneByOne``.
        var keySet: Set<String>?
    }
    /// An object with up to this many keys finds a repeated key by comparing each; a larger one
    /// keeps a set (an object of many keys would otherwise take quadratic time).
    private static let keysLookedAtOneByOne = 16
    private var frames: [Frame] = []
    /// The keys written in the open objects, outermost first.
    private var keys: [String] = []
    private var lastID = 0

    /// A value written whole.
    enum Scalar {
        case null
        case bool(Bool)
        case string(String)
        /// A number, already in its JSON form.
        case number(String)
    }

    init() {
        bytes.reserveCapacity(512)
        frames.reserveCapacity(4)
        keys.reserveCapacity(16)
    }

    /// The number of containers open.
    var depth: Int { frames.count }

    mutating func markUnsupported() {
        unsupported = true
    }

    /// Makes a value due (the top level, or an element whose separator and key are written).
    mutating func expectValue() {
        if !unsupported { slotDue = true }
    }

    /// The most containers open at once. `JSONEncoder` refuses a value about twice as deep
    /// (and `JSONDecoder` would not read it back); a deeper value is left to it.
    static let maximumDepth = 256

    /// Opens an object or an array in the value due; returns its id (`-1` when none was due,
    /// or ``maximumDepth`` containers are open).
    mutating func open(object: Bool) -> Int {
        guard slotDue, !unsupported, frames.count < Self.maximumDepth else {
            unsupported = true
            return -1
        }
        slotDue = false
        lastID += 1
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        frames.append(Frame(id: lastID, closer: object ? UInt8(ascii: "}") : UInt8(ascii: "]"), firstKey: keys.count))
        return lastID
    }

    /// Writes the separator and (in an object) the key of the next element of container
    /// `frame`, after closing the containers opened after it. `false` (and unsupported) when
    /// that container is closed or `key` was written in it before.
    mutating func beginElement(in frame: Int, key: String?) -> Bool {
        guard !unsupported else { return false }
        guard let index = index(of: frame) else {
            unsupported = true
            return false
        }
        close(downTo: index + 1)
        if let key {
            guard isNew(key, in: index) else {
                unsupported = true
                return false
            }
        }
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        if let key {
            write(string: key)
            bytes.append(UInt8(ascii: ":"))
        }
        return true
    }

    /// Whether `key` is not yet in the object at `index`; records it.
    private mutating func isNew(_ key: String, in index: Int) -> Bool {
        if frames[index].keySet != nil { return frames[index].keySet!.insert(key).inserted }
        let written = keys[frames[index].firstKey...]
        guard !written.contains(key) else { return false }
        if written.count < Self.keysLookedAtOneByOne {
            keys.append(key)
        } else {
            frames[index].keySet = Set(written).union([key])
        }
        return true
    }

    /// The number of elements written in container `frame`; `nil` once it is closed.
    func count(in frame: Int) -> Int? {
        index(of: frame).map { frames[$0].count }
    }

    /// Where container `frame` is among the open ones; `nil` once it is closed.
    private func index(of frame: Int) -> Int? {
        frames.lastIndex { $0.id == frame }
    }

    /// Writes `scalar` as the next element of container `frame`.
    mutating func write(_ scalar: Scalar, in frame: Int, key: String?) {
        if beginElement(in: frame, key: key) { write(scalar) }
    }

    /// Writes `scalar` as the value due.
    mutating func writeDue(_ scalar: Scalar) {
        guard slotDue, !unsupported else {
            unsupported = true
            return
        }
        slotDue = false
        write(scalar)
    }

    /// Closes the containers opened after the first `depth`. A value due then was never
    /// written (its type encoded nothing): unsupported.
    mutating func close(downTo depth: Int) {
        if slotDue {
            slotDue = false
            unsupported = true
        }
        while frames.count > depth {
            let frame = frames.removeLast()
            keys.removeSubrange(frame.firstKey...)
            bytes.append(frame.closer)
        }
    }

    private mutating func write(_ scalar: Scalar) {
        switch scalar {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .string(let text): write(string: text)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        }
    }

    /// `text` between quotes, with what JSON requires escaped: the quote, the backslash and
    /// control characters. Text with none of them (nearly all stored text) is copied whole.
    private mutating func write(string text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            guard Self.needsEscaping(utf8) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
                case 0x0A: bytes.append(contentsOf: "\\n".utf8)
                case 0x0D: bytes.append(contentsOf: "\\r".utf8)
                case 0x09: bytes.append(contentsOf: "\\t".utf8)
                case 0x08: bytes.append(contentsOf: "\\b".utf8)
                case 0x0C: bytes.append(contentsOf: "\\f".utf8)
                case 0..<0x20: bytes.append(contentsOf: ("\\u00" + [byte].hexString).utf8)
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any byte of `utf8` is a quote, a backslash or a control character, looked at
    /// eight bytes at a time.
    static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// Whether a byte of `word` is below 0x20 (no false answers for any byte).
        func hasControl(_ word: UInt64) -> Bool { (word &- ones &* 0x20) & ~word & highs != 0 }
        /// Whether a byte of `word` equals `byte`.
        func has(_ byte: UInt8, _ word: UInt64) -> Bool {
            let masked = word ^ (ones &* UInt64(byte))
            return (masked &- ones) & ~masked & highs != 0
        }
        guard let base = utf8.baseAddress else { return false }
        var offset = 0
        while offset + 8 <= utf8.count {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if hasControl(word) || has(UInt8(ascii: "\""), word) || has(UInt8(ascii: "\\"), word) { return true }
            offset += 8
        }
        return utf8[offset...].contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// A finite number as `JSONEncoder` writes it (its shortest exact form, without a trailing
    /// `.0`); `nil` for infinity and NaN, which JSON has no form for.
    static func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> Scalar? {
        guard value.isFinite else { return nil }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}
