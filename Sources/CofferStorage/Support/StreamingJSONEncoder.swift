import Foundation

/// Writes a value's JSON in one pass, straight into bytes, for ``ValueCoding``.
///
/// Foundation's `JSONEncoder` builds a tree of every value first and casts each one to the
/// types it treats specially; for a stored token that was 40% of a durable save's own work.
/// This encoder writes JSON that `JSONDecoder` decodes to the same value as `JSONEncoder`'s,
/// with its default strategies (dates as their own `Codable` writes them, keys as they are),
/// in the order the value encodes its fields.
///
/// It takes on only what it can write in one pass (``JSONOutput``) and leaves the rest to
/// `JSONEncoder`: on ``Unsupported`` (or any error the value throws) the caller encodes with
/// `JSONEncoder` instead, which gives the same result or the error it always gave.
/// ``Unsupported`` is:
/// - `Data`, `URL` and `Decimal`, which `JSONEncoder` writes its own way (base64, a string, a
///   number);
/// - a non-finite `Double` or `Float` (`JSONEncoder` refuses them);
/// - a value that wrote part of an element and threw (should the value catch the error and go
///   on, `JSONEncoder` drops that element);
/// - a value nested more than ``JSONOutput/maximumDepth`` containers deep;
/// - a key written twice in one object;
/// - a container written to after a container opened later was, a second container asked of
///   one value, a value that encodes nothing, and `superEncoder`.
struct StreamingJSONEncoder {
    /// Why the one-pass encoder left a value to `JSONEncoder`.
    struct Unsupported: Error {}

    /// `value` as JSON bytes.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let writer = Writer()
        writer.output.expectValue()
        try writer.encodeValue(value)
        guard !writer.output.unsupported else { throw Unsupported() }
        return Data(writer.output.bytes)
    }
}

extension StreamingJSONEncoder {
    /// The encoder a value encodes itself into.
    fileprivate final class Writer: Encoder {
        var output = JSONOutput()
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(writer: self, frame: output.open(object: true), codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            UnkeyedContainer(writer: self, frame: output.open(object: false), codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleValueContainer(writer: self, codingPath: codingPath)
        }

        /// Encodes `value` as the value due, then closes every container it opened.
        func encodeValue<T: Encodable>(_ value: T) throws {
            if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { output.markUnsupported() }
            // Stops at once: a value nested too deep would otherwise be walked to its end.
            guard !output.unsupported else { throw Unsupported() }
            let depth = output.depth
            do {
                try value.encode(to: self)
            } catch {
                // What it wrote before throwing stays written: if the value goes on (catching
                // the error), `JSONEncoder` encodes it instead, which drops the element.
                output.markUnsupported()
                throw error
            }
            output.close(downTo: depth)
        }

        /// Encodes `value` as an element whose separator and key are written, with `key` on
        /// the coding path.
        func encodeElement<T: Encodable>(_ value: T, at key: any CodingKey) throws {
            codingPath.append(key)
            defer { codingPath.removeLast() }
            output.expectValue()
            try encodeValue(value)
        }

        /// An encoder for what this one does not write (`superEncoder`): the value goes to
        /// `JSONEncoder`.
        func unsupportedEncoder() -> any Encoder {
            output.markUnsupported()
            return self
        }
    }

    /// A floating-point number as a JSON scalar; `nil` (and unsupported) when it is not finite.
    fileprivate static func scalar<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, _ writer: Writer) -> JSONOutput.Scalar? {
        let scalar = JSONOutput.number(value)
        if scalar == nil { writer.output.markUnsupported() }
        return scalar
    }
}

// MARK: - Containers

extension StreamingJSONEncoder {
    /// An object's container: each element is its key, then its value.
    fileprivate struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let writer: Writer
        let frame: Int
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { write(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { write(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { write(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { write(scalar, key) }
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { write(scalar, key) }
        }
        mutating func encode(_ value: Int, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: Int128, forKey key: Key) throws { write(.number(value.description), key) }
        mutating func encode(_ value: UInt128, forKey key: Key) throws { write(.number(value.description), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if writer.output.beginElement(in: frame, key: key.stringValue) { try writer.encodeElement(value, at: key) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            if writer.output.beginElement(in: frame, key: key.stringValue) { writer.output.expectValue() }
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(
                writer: writer, frame: writer.output.open(object: true), codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            if writer.output.beginElement(in: frame, key: key.stringValue) { writer.output.expectValue() }
            return UnkeyedContainer(writer: writer, frame: writer.output.open(object: false), codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { writer.unsupportedEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { writer.unsupportedEncoder() }

        private func write(_ scalar: JSONOutput.Scalar, _ key: Key) {
            writer.output.write(scalar, in: frame, key: key.stringValue)
        }
    }

    /// An array's container.
    fileprivate struct UnkeyedContainer: UnkeyedEncodingContainer {
        let writer: Writer
        let frame: Int
        let codingPath: [any CodingKey]

        /// The elements written, read from the output as `JSONEncoder`'s container reads its
        /// storage (a copy of this container sees them too). A closed array has no count to
        /// give: unsupported.
        var count: Int {
            guard let count = writer.output.count(in: frame) else {
                writer.output.markUnsupported()
                return 0
            }
            return count
        }

        mutating func encodeNil() throws { write(.null) }
        mutating func encode(_ value: Bool) throws { write(.bool(value)) }
        mutating func encode(_ value: String) throws { write(.string(value)) }
        mutating func encode(_ value: Double) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { write(scalar) }
        }
        mutating func encode(_ value: Float) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { write(scalar) }
        }
        mutating func encode(_ value: Int) throws { write(.number(value.description)) }
        mutating func encode(_ value: Int8) throws { write(.number(value.description)) }
        mutating func encode(_ value: Int16) throws { write(.number(value.description)) }
        mutating func encode(_ value: Int32) throws { write(.number(value.description)) }
        mutating func encode(_ value: Int64) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt8) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt16) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt32) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt64) throws { write(.number(value.description)) }
        mutating func encode(_ value: Int128) throws { write(.number(value.description)) }
        mutating func encode(_ value: UInt128) throws { write(.number(value.description)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let key = ArrayIndex(intValue: count)
            if writer.output.beginElement(in: frame, key: nil) { try writer.encodeElement(value, at: key) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let key = ArrayIndex(intValue: count)
            if writer.output.beginElement(in: frame, key: nil) { writer.output.expectValue() }
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(
                writer: writer, frame: writer.output.open(object: true), codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let key = ArrayIndex(intValue: count)
            if writer.output.beginElement(in: frame, key: nil) { writer.output.expectValue() }
            return UnkeyedContainer(writer: writer, frame: writer.output.open(object: false), codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder { writer.unsupportedEncoder() }

        private func write(_ scalar: JSONOutput.Scalar) {
            writer.output.write(scalar, in: frame, key: nil)
        }
    }

    /// The container of a value written whole.
    fileprivate struct SingleValueContainer: SingleValueEncodingContainer {
        let writer: Writer
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { writer.output.writeDue(.null) }
        mutating func encode(_ value: Bool) throws { writer.output.writeDue(.bool(value)) }
        mutating func encode(_ value: String) throws { writer.output.writeDue(.string(value)) }
        mutating func encode(_ value: Double) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { writer.output.writeDue(scalar) }
        }
        mutating func encode(_ value: Float) throws {
            if let scalar = StreamingJSONEncoder.scalar(value, writer) { writer.output.writeDue(scalar) }
        }
        mutating func encode(_ value: Int) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: Int8) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: Int16) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: Int32) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: Int64) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt8) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt16) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt32) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt64) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: Int128) throws { writer.output.writeDue(.number(value.description)) }
        mutating func encode(_ value: UInt128) throws { writer.output.writeDue(.number(value.description)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            // The value due is still due: `value` fills it with a container or a value of its own.
            guard writer.output.slotDue else {
                writer.output.markUnsupported()
                return
            }
            try writer.encodeValue(value)
        }
    }

    /// An array element's place in the coding path.
    fileprivate struct ArrayIndex: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }
}
