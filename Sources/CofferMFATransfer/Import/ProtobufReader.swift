import Foundation

/// Reads protocol buffers' wire format (varints, length-delimited fields; fixed-width fields
/// skipped), enough for the two messages of a Google Authenticator export.
///
/// Why not swift-protobuf: the import needs two read-only messages of seven fields; a decoder
/// of 80 lines, bounds-checked and fuzzed with the other parsers, costs every user of
/// `CofferAuthenticator` less than a dependency and its generated code. It refuses, rather
/// than guesses, at anything out of bounds.
struct ProtobufReader {
    enum Failure: Error, Equatable {
        case truncated
        case varintTooLong
        case unsupportedWireType(Int)
    }

    /// A field as read: its number and its value.
    enum Field {
        case varint(number: Int, value: UInt64)
        case bytes(number: Int, value: Data)
    }

    private let data: [UInt8]
    private var position = 0

    init(_ data: Data) {
        self.data = Array(data)
    }

    /// The next field, or `nil` at the end. Fixed 32- and 64-bit fields are skipped.
    mutating func next() throws(Failure) -> Field? {
        while position < data.count {
            let key = try varint()
            let number = Int(key >> 3), wireType = Int(key & 7)
            switch wireType {
            case 0: return .varint(number: number, value: try varint())
            case 2:
                let length = try varint()
                guard length <= UInt64(data.count - position) else { throw .truncated }
                let start = position
                position += Int(length)
                return .bytes(number: number, value: Data(data[start..<position]))
            case 1: try skip(8)
            case 5: try skip(4)
            default: throw .unsupportedWireType(wireType)
            }
        }
        return nil
    }

    private mutating func varint() throws(Failure) -> UInt64 {
        var result: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard position < data.count else { throw .truncated }
            let byte = data[position]
            position += 1
            guard shift < 64 else { throw .varintTooLong }
            result |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return result }
        }
        throw .varintTooLong
    }

    private mutating func skip(_ count: Int) throws(Failure) {
        guard count <= data.count - position else { throw .truncated }
        position += count
    }
}
