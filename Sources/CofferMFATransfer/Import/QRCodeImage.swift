import CQRCode
import Foundation

/// QR codes in images, and images of QR codes: reading a screenshot or photo of an enrolment
/// QR code (PNG or JPEG), and drawing one to move an account to a phone.
///
/// The work is done by libraries loaded at run time, as the keyring's is: zbar finds and reads
/// the codes, libpng and TurboJPEG decode the images, libqrencode makes codes (Debian:
/// `libzbar0`, `libpng16-16`, `libturbojpeg0`, `libqrencode4`). When one is missing, the error
/// says which package to install; nothing else is affected.
public enum QRCodeImage {
    /// Why an image could not be read, or a code made.
    public enum Failure: Error, Sendable, Equatable {
        /// A library is not installed; the message names the package.
        case libraryMissing(String)
        /// The bytes are not a PNG or JPEG image, or the image is damaged or too large.
        case unreadable(String)
        /// The text is too long for a QR code.
        case tooLong
    }

    /// The image formats read.
    public enum Kind: String, Sendable {
        /// A PNG image (read with libpng).
        case png = "PNG"
        /// A JPEG image (read with TurboJPEG).
        case jpeg = "JPEG"
    }

    /// The most pixels an image may have (a 7,000 × 7,000 photo): more is refused before it is
    /// decoded, so a crafted file cannot make Coffer allocate without bound.
    public static let maximumPixels = 50_000_000

    /// The kind of image `data` holds, by its first bytes, or `nil`.
    public static func kind(of data: Data) -> Kind? {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        return nil
    }

    /// The texts of the QR codes in a PNG or JPEG image, in the order zbar finds them; empty
    /// when there is none.
    public static func texts(in data: Data) throws(Failure) -> [String] {
        guard let kind = kind(of: data) else { throw .unreadable("it is not a PNG or JPEG image") }
        if let missing = (kind == .png ? coffer_qr_load_png() : coffer_qr_load_jpeg()) { throw .libraryMissing(String(cString: missing)) }
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0, height: UInt32 = 0
        var error = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            let base = bytes.bindMemory(to: UInt8.self).baseAddress
            return kind == .png
                ? coffer_qr_decode_png(base, bytes.count, maximumPixels, &pixels, &width, &height, &error, error.count)
                : coffer_qr_decode_jpeg(base, bytes.count, maximumPixels, &pixels, &width, &height, &error, error.count)
        }
        guard status == 0, let pixels else {
            throw .unreadable("the \(kind.rawValue) image cannot be decoded: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        defer { coffer_qr_free(pixels) }
        return try texts(inGray: UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height)), width: Int(width), height: Int(height))
    }

    /// The texts of the QR codes in 8-bit grayscale pixels (rows packed, 0 black).
    public static func texts(inGray pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int) throws(Failure) -> [String] {
        if let missing = coffer_qr_load_zbar() { throw .libraryMissing(String(cString: missing)) }
        guard width > 0, height > 0, width * height <= pixels.count, width * height <= maximumPixels else {
            throw .unreadable("the image is empty or too large")
        }
        var symbols = coffer_qr_symbols()
        guard coffer_qr_scan(pixels.baseAddress, UInt32(width), UInt32(height), &symbols) == 0 else {
            throw .unreadable("zbar could not scan the image")
        }
        defer { coffer_qr_symbols_free(&symbols) }
        return (0..<symbols.count).compactMap { index in
            symbols.texts[index].map { String(decoding: UnsafeRawBufferPointer(start: $0, count: symbols.lengths[index]), as: UTF8.self) }
        }
    }

    /// The modules of a QR code for `text`: `size` × `size`, `true` for dark, row by row.
    public static func modules(for text: String) throws(Failure) -> (size: Int, dark: [Bool]) {
        if let missing = coffer_qr_load_qrencode() { throw .libraryMissing(String(cString: missing)) }
        var modules: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0
        guard coffer_qr_encode(text, &modules, &width) == 0, let modules else { throw .tooLong }
        defer { coffer_qr_free(modules) }
        let size = Int(width)
        return (size, (0..<size * size).map { modules[$0] != 0 })
    }
}

extension QRCodeImage.Failure: LocalizedError {
    /// What went wrong: which library to install, or why the image cannot be read.
    public var errorDescription: String? {
        switch self {
        case .libraryMissing(let message): return "QR codes cannot be read or made here: \(message)."
        case .unreadable(let reason): return "The image cannot be read: \(reason)."
        case .tooLong: return "The text is too long for a QR code."
        }
    }
}
