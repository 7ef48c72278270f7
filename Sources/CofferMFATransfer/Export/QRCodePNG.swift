import Foundation

/// A QR code as a PNG image: black modules on white, a quiet zone of four modules, each module
/// `scale` pixels. 8-bit grayscale, its pixels in stored (uncompressed) deflate blocks: a PNG
/// every reader opens, made without zlib (an account's code is a few hundred kilobytes at most).
public enum QRCodePNG {
    /// The PNG of a QR code holding `text`.
    ///
    /// - Throws: ``QRCodeImage/Failure`` when libqrencode is missing or the text is too long.
    public static func png(for text: String, scale: Int = 8) throws(QRCodeImage.Failure) -> Data {
        let (size, dark) = try QRCodeImage.modules(for: text)
        let quiet = 4, side = (size + 2 * quiet) * scale
        var rows = Data(capacity: side * (side + 1))
        for y in 0..<side {
            rows.append(0)  // filter: none
            let row = y / scale - quiet
            for x in 0..<side {
                let column = x / scale - quiet
                let isDark = row >= 0 && row < size && column >= 0 && column < size && dark[row * size + column]
                rows.append(isDark ? 0x00 : 0xFF)
            }
        }
        var header = Data()
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header.append(contentsOf: [8, 0, 0, 0, 0])  // 8-bit, grayscale, deflate, adaptive filtering, no interlace
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        chunk("IHDR", header, into: &png)
        chunk("IDAT", zlibStored(rows), into: &png)
        chunk("IEND", Data(), into: &png)
        return png
    }

    private static func chunk(_ type: String, _ body: Data, into png: inout Data) {
        png.appendBigEndian(UInt32(body.count))
        let typed = Data(type.utf8) + body
        png.append(typed)
        png.appendBigEndian(crc32(typed))
    }

    /// A zlib stream of stored deflate blocks (at most 65,535 bytes each) and its Adler-32.
    private static func zlibStored(_ data: Data) -> Data {
        var out = Data([0x78, 0x01])
        var offset = data.startIndex
        repeat {
            let count = min(65_535, data.endIndex - offset)
            out.append(offset + count == data.endIndex ? 1 : 0)  // final block?
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(data[offset..<offset + count])
            offset += count
        } while offset < data.endIndex
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        out.appendBigEndian(b << 16 | a)
        return out
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    private static func crc32(_ data: Data) -> UInt32 {
        ~data.reduce(~UInt32(0)) { crcTable[Int(($0 ^ UInt32($1)) & 0xFF)] ^ ($0 >> 8) }
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
