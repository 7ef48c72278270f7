@testable import CofferStorage
import Foundation
import Testing

/// The one-pass JSON encoder stored values go through: what it writes must decode, with
/// Foundation's `JSONDecoder`, to the value that was encoded, and be the JSON `JSONEncoder`
/// writes (the same tree); what it does not take on goes to `JSONEncoder`, whose result or
/// error is then the one a save gets.
@Suite("StreamingJSONEncoder")
struct StreamingJSONEncoderTests {
    struct Scalars: Codable, Equatable {
        var text = "plain"
        var flag = true
        var int = Int.min, int8 = Int8.min, int16 = Int16.max, int32 = Int32.min, int64 = Int64.max
        var uint = UInt.max, uint8 = UInt8.max, uint16 = UInt16.max, uint32 = UInt32.max, uint64 = UInt64.max
        var double = 0.1, float: Float = 0.1
        var optional: String? = nil
        var present: Int? = 7
        var date = Date(timeIntervalSinceReferenceDate: 800_000_123.456)
    }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case polygon([Int], name: String?)
        case none
    }

    struct Nested: Codable, Equatable {
        var scalars = Scalars()
        var list = [Scalars(), Scalars(text: "second")]
        var grid = [[1, 2], [], [3]]
        var byName = ["b": 2, "a": 1]
        var byNumber = [3: "three", 1: "one"]
        var shapes: [Shape] = [.circle(radius: 2.5), .polygon([1, 2, 3], name: nil), .none]
        var empty: [String] = []
        var emptyObject: [String: Int] = [:]
    }

    @Test("writes the JSON tree JSONEncoder writes, which decodes to the value encoded")
    func sameTree() throws {
        try expectSameAsFoundation(Scalars())
        try expectSameAsFoundation(Nested())
        try expectSameAsFoundation(["top", "level", "array"])
        try expectSameAsFoundation("a top-level string")
        try expectSameAsFoundation(42)
        try expectSameAsFoundation(Optional<Int>.none)
        try expectSameAsFoundation(Shape.polygon([], name: "empty"))
    }

    @Test("numbers at their limits keep their exact value",
          arguments: [0.0, -0.0, 1.0, -1.5, 0.1, 1e300, -1e-300, 5e-324, Double.greatestFiniteMagnitude, 800_000_000, 2.0 / 3.0])
    func doubles(_ value: Double) throws {
        let decoded = try JSONDecoder().decode([Double].self, from: StreamingJSONEncoder.encode([value]))
        #expect(decoded[0].bitPattern == value.bitPattern)
        let float = Float(value)
        if float.isFinite {
            #expect(try JSONDecoder().decode([Float].self, from: StreamingJSONEncoder.encode([float]))[0].bitPattern == float.bitPattern)
        }
    }

    @Test("strings: quotes, backslashes, every control character, slashes and text outside ASCII")
    func strings() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let texts = ["\"quoted\" \\ back", controls, "a/b</script>", "café, ꙮ, 🔐, \u{7F}", "", "\u{2028}\u{2029}"]
        try expectSameAsFoundation(texts)
        let json = try StreamingJSONEncoder.encode([controls])
        #expect(!json.contains { $0 < 0x20 }, "a raw control character is not JSON")
        // Keys are escaped as values are.
        try expectSameAsFoundation([controls: 1, "\"": 2])
    }

    @Test("a character to escape is found at every place in an eight-byte word and in the tail",
          arguments: ["\"", "\\", "\u{0}", "\u{1F}", "\n"])
    func escapeAtEveryPlace(_ special: String) throws {
        for (length, filler) in [1, 7, 8, 9, 16, 17].flatMap({ [($0, Character("a")), ($0, Character("é"))] }) {
            for place in 0..<length {
                var characters = Array(repeating: filler, count: length)
                characters[place] = Character(special)
                let text = String(characters)
                let json = try StreamingJSONEncoder.encode([text])
                #expect(try JSONDecoder().decode([String].self, from: json) == [text], "length \(length), place \(place)")
            }
        }
        #expect(!Array("plain ASCII and ünïcödé, 0x7F: \u{7F}".utf8).withUnsafeBufferPointer { JSONOutput.needsEscaping($0) })
    }

    @Test("fields are written in the order the value encodes them, every time")
    func fieldOrder() throws {
        let json = String(decoding: try StreamingJSONEncoder.encode(Scalars()), as: UTF8.self)
        let order = ["text", "flag", "int", "int8", "present", "date"].map { json.range(of: "\"\($0)\":")!.lowerBound }
        #expect(order == order.sorted())
        #expect(!json.contains("\"optional\""), "encodeIfPresent leaves a nil out, as JSONEncoder does")
    }

    // MARK: What goes to JSONEncoder

    struct WithData: Codable, Equatable { var data = Data([0, 1, 2, 255]) }
    struct WithURL: Codable, Equatable { var url = URL(string: "https://example.com/a?b=c")! }
    struct WithDecimal: Codable, Equatable { var amount = Decimal(string: "12.345")! }
    struct WithNaN: Codable { var value = Double.nan }

    /// Writes the same key twice.
    struct DuplicateKey: Encodable {
        enum Keys: String, CodingKey { case a }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            try container.encode(2, forKey: .a)
        }
    }

    /// Writes into a nested container after its parent has written on.
    struct Interleaved: Encodable {
        enum Keys: String, CodingKey { case inner, after, late }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var inner = container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try inner.encode(1, forKey: .after)
            try container.encode(2, forKey: .after)
            try inner.encode(3, forKey: .late)
        }
    }

    /// Asks one encoder for two containers, as a subclass calling its superclass's encode can.
    struct TwoContainers: Encodable {
        enum Keys: String, CodingKey { case first, second }
        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: Keys.self)
            try first.encode(1, forKey: .first)
            var second = encoder.container(keyedBy: Keys.self)
            try second.encode(2, forKey: .second)
        }
    }

    struct UsesSuperEncoder: Encodable {
        enum Keys: String, CodingKey { case own }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .own)
            try 2.encode(to: container.superEncoder())
        }
    }

    struct EncodesNothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("Data, URL and Decimal, a duplicate key, a late write, two containers, superEncoder and an empty value go to JSONEncoder")
    func unsupported() throws {
        for value in [WithData(), WithURL(), WithDecimal(), WithNaN(), DuplicateKey(), Interleaved(), TwoContainers(),
                      UsesSuperEncoder(), EncodesNothing()] as [any Encodable] {
            #expect(throws: StreamingJSONEncoder.Unsupported.self, "\(type(of: value))") { try StreamingJSONEncoder.encode(value) }
        }
        // Through ValueCoding, each is what JSONEncoder makes of it: the same values back…
        #expect(try decoded(WithData()) == WithData())
        #expect(try decoded(WithURL()) == WithURL())
        #expect(try decoded(WithDecimal()) == WithDecimal())
        let json = try JSONSerialization.jsonObject(with: ValueCoding.encode(TwoContainers())) as? [String: Int]
        #expect(json == ["first": 1, "second": 2])
        // …or its error, with the field named and no value quoted.
        #expect {
            _ = try ValueCoding.encode(WithNaN())
        } throws: { error in
            guard case StorageError.encodingFailed(_, let reason) = error else { return false }
            return reason.contains("value")
        }
    }

    // What helper-20's review found (2026-11-29): each failed before its fix.

    struct NamedKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
    struct Refused: Error {}

    /// Writes part of its object, then throws.
    struct HalfWritten: Codable, Equatable {
        init() {}
        init(from decoder: any Decoder) throws { throw Refused() }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: NamedKey.self)
            try container.encode(1, forKey: NamedKey("x"))
            throw Refused()
        }
    }

    /// Goes on after an element failed, in an object and in an array.
    struct SkipsFailures: Codable, Equatable {
        var failing: HalfWritten?
        var kept: Int
        var list: [Int]
        enum CodingKeys: CodingKey { case failing, kept, list }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try? container.encode(failing, forKey: .failing)
            try container.encode(kept, forKey: .kept)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try? list.encode(HalfWritten())
            for element in self.list { try list.encode(element) }
        }
    }

    struct Wide: Codable, Equatable {
        var small: Int128 = Int128.min
        var large: UInt128 = UInt128.max
        var inArray: [Int128] = [1, -1, Int128(Int64.max) * 4]
    }

    /// Reads an array's count through a copy of its container.
    struct CountsThroughCopy: Encodable {
        func encode(to encoder: any Encoder) throws {
            var list = encoder.unkeyedContainer()
            let copy = list
            try list.encode(7)
            try list.encode(copy.count)
        }
    }

    /// Writes `count` keys, the last one again if `repeatLast`.
    struct ManyKeys: Encodable {
        var count: Int
        var repeatLast: Bool
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: NamedKey.self)
            for index in 0..<count { try container.encode(index, forKey: NamedKey("k\(index)")) }
            if repeatLast { try container.encode(0, forKey: NamedKey("k\(count - 1)")) }
        }
    }

    @Test("an element that wrote part of itself and threw is dropped, as JSONEncoder drops it, when the value goes on")
    func caughtErrors() throws {
        let value = SkipsFailures(failing: HalfWritten(), kept: 1, list: [2, 3])
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode(value) }
        let json = try JSONSerialization.jsonObject(with: ValueCoding.encode(value)) as? NSDictionary
        #expect(json == ["kept": 1, "list": [2, 3]] as NSDictionary)
    }

    @Test("Int128 and UInt128 are numbers, as JSONEncoder writes them")
    func wideIntegers() throws {
        let fast = try StreamingJSONEncoder.encode(Wide())
        #expect(try JSONDecoder().decode(Wide.self, from: fast) == Wide())
        #expect(String(decoding: fast, as: UTF8.self).contains("\"large\":\(UInt128.max)"))
    }

    @Test("an array's count is read through a copy of its container, as JSONEncoder's is")
    func countThroughCopy() throws {
        #expect(try JSONDecoder().decode([Int].self, from: ValueCoding.encode(CountsThroughCopy())) == [7, 1])
    }

    @Test("a key written twice is found among many (past the keys compared one by one)", arguments: [3, 16, 17, 40, 5_000])
    func repeatedKeyAmongMany(_ count: Int) throws {
        let distinct = try StreamingJSONEncoder.encode(ManyKeys(count: count, repeatLast: false))
        #expect(try JSONDecoder().decode([String: Int].self, from: distinct).count == count)
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode(ManyKeys(count: count, repeatLast: true)) }
        let big = Dictionary(uniqueKeysWithValues: (0..<count).map { ("key \($0)", $0) })
        #expect(try JSONDecoder().decode([String: Int].self, from: StreamingJSONEncoder.encode(big)) == big)
    }

    struct Deep: Codable, Equatable {
        var children: [Deep]
        static func nested(_ depth: Int) -> Deep {
            (0..<depth).reduce(Deep(children: [])) { inner, _ in Deep(children: [inner]) }
        }
    }

    @Test("a value nested deeper than 256 containers goes to JSONEncoder, which refuses it past 510 as before")
    func depth() throws {
        // 127 levels are 255 containers (an object and its array each, and the outermost object).
        try expectSameAsFoundation(Deep.nested(127))
        #expect(throws: StreamingJSONEncoder.Unsupported.self) { try StreamingJSONEncoder.encode(Deep.nested(128)) }
        #expect(try decoded(Deep.nested(200)) == Deep.nested(200))
        #expect(throws: StorageError.self) { try ValueCoding.encode(Deep.nested(300)) }
    }

    @Test("a stored value written by the one-pass encoder reads back, sealed and plain")
    func storedRoundTrip() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = FileKeyStore(directory: directory.appendingPathComponent("keys"))
        let sealed = EncryptedFileStorage<Nested>(fileName: "nested", directory: directory, keyStore: keys, cacheStrategy: .noCache)
        try await sealed.save(item: Nested())
        #expect(try await sealed.get() == Nested())
        let plain = FileStorage<Nested>(fileName: "plain", directory: directory, cacheStrategy: .noCache)
        try await plain.save(item: Nested())
        #expect(try await plain.get() == Nested())
    }

    // MARK: Helpers

    private func decoded<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: ValueCoding.encode(value))
    }

    /// The one-pass JSON decodes to `value` and is, as a JSON tree, what JSONEncoder writes.
    private func expectSameAsFoundation<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fast = try StreamingJSONEncoder.encode(value)
        let foundation = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(T.self, from: fast) == value, sourceLocation: sourceLocation)
        let fastTree = try JSONSerialization.jsonObject(with: fast, options: .fragmentsAllowed) as? NSObject
        let foundationTree = try JSONSerialization.jsonObject(with: foundation, options: .fragmentsAllowed) as? NSObject
        #expect(fastTree == foundationTree, "\(String(decoding: fast, as: UTF8.self))", sourceLocation: sourceLocation)
    }
}
