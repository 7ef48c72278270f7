import Foundation

/// The TPM's own wire format (TPM 2.0 Library, Part 2: big-endian integers, `TPM2B` values as a
/// 16-bit size and the bytes), for the few structures Coffer sends: the templates of the
/// storage key and of the sealed object, the sealed object's sensitive part, a PCR selection.
/// tpm2-tss turns these bytes into its own structures, so nothing here depends on its layout.
enum TPMWireFormat {
    // Algorithm ids and attribute bits from Part 2.
    static let algorithmECC: UInt16 = 0x0023
    static let algorithmKeyedHash: UInt16 = 0x0008
    static let algorithmSHA256: UInt16 = 0x000B
    static let algorithmAES: UInt16 = 0x0006
    static let algorithmCFB: UInt16 = 0x0043
    static let algorithmNull: UInt16 = 0x0010
    static let curveNISTP256: UInt16 = 0x0003

    struct ObjectAttributes: OptionSet {
        let rawValue: UInt32
        static let fixedTPM = ObjectAttributes(rawValue: 0x0000_0002)
        static let fixedParent = ObjectAttributes(rawValue: 0x0000_0010)
        static let sensitiveDataOrigin = ObjectAttributes(rawValue: 0x0000_0020)
        static let userWithAuth = ObjectAttributes(rawValue: 0x0000_0040)
        static let noDA = ObjectAttributes(rawValue: 0x0000_0400)
        static let restricted = ObjectAttributes(rawValue: 0x0001_0000)
        static let decrypt = ObjectAttributes(rawValue: 0x0002_0000)
    }

    /// The storage key Coffer's objects are sealed under: an ECC P-256 restricted decryption key
    /// with AES-128-CFB, in the owner hierarchy; the TPM derives the same key from its seed each
    /// time (`tpm2_createprimary -C o -G ecc256:aes128cfb -g sha256 -a
    /// 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt'`).
    static var storageKeyTemplate: [UInt8] {
        var body = Writer()
        body.u16(algorithmECC)
        body.u16(algorithmSHA256)
        body.u32(ObjectAttributes([.fixedTPM, .fixedParent, .sensitiveDataOrigin, .userWithAuth, .noDA,
                                   .restricted, .decrypt]).rawValue)
        body.sized([])                                                        // authPolicy
        body.u16(algorithmAES); body.u16(128); body.u16(algorithmCFB)       // symmetric
        body.u16(algorithmNull)                                              // scheme
        body.u16(curveNISTP256)
        body.u16(algorithmNull)                                              // kdf
        body.sized([]); body.sized([])                                       // unique x, y
        return Writer.sized(body.bytes)
    }

    /// A sealed data object: a keyed-hash object with no scheme, bound to this TPM and parent.
    /// Without a policy the auth value authorizes it; with one, only the policy does. Without a
    /// PIN it is exempt from dictionary-attack lockout (there is nothing to guess).
    static func sealedObjectTemplate(policy: [UInt8]?, hasPIN: Bool) -> [UInt8] {
        var attributes: ObjectAttributes = [.fixedTPM, .fixedParent]
        if policy == nil { attributes.insert(.userWithAuth) }
        if !hasPIN { attributes.insert(.noDA) }
        var body = Writer()
        body.u16(algorithmKeyedHash)
        body.u16(algorithmSHA256)
        body.u32(attributes.rawValue)
        body.sized(policy ?? [])
        body.u16(algorithmNull)                                              // keyed-hash scheme
        body.sized([])                                                       // unique
        return Writer.sized(body.bytes)
    }

    /// TPM2B_SENSITIVE_CREATE: the object's auth value and the data to seal.
    static func sensitiveCreate(auth: [UInt8], data: [UInt8]) -> [UInt8] {
        var body = Writer()
        body.sized(auth)
        body.sized(data)
        return Writer.sized(body.bytes)
    }

    /// TPML_PCR_SELECTION of `indexes` in the SHA-256 bank.
    static func pcrSelection(_ indexes: [Int]) -> [UInt8] {
        var mask: [UInt8] = [0, 0, 0]
        for index in indexes { mask[index / 8] |= 1 << (index % 8) }
        var body = Writer()
        body.u32(1)
        body.u16(algorithmSHA256)
        body.bytes.append(3)
        body.bytes += mask
        return body.bytes
    }

    /// The properties in a marshalled TPMS_CAPABILITY_DATA of TPM_CAP_TPM_PROPERTIES.
    static func properties(_ data: [UInt8]) -> [UInt32: UInt32] {
        var reader = Reader(data)
        guard reader.u32() == 6, let count = reader.u32(), count <= 256 else { return [:] }
        var properties: [UInt32: UInt32] = [:]
        for _ in 0..<count {
            guard let property = reader.u32(), let value = reader.u32() else { break }
            properties[property] = value
        }
        return properties
    }

    struct Writer {
        var bytes: [UInt8] = []
        mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
        mutating func u32(_ value: UInt32) { u16(UInt16(value >> 16)); u16(UInt16(value & 0xFFFF)) }
        mutating func sized(_ value: [UInt8]) { u16(UInt16(value.count)); bytes += value }
        static func sized(_ value: [UInt8]) -> [UInt8] {
            var writer = Writer()
            writer.sized(value)
            return writer.bytes
        }
    }

    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        mutating func u16() -> UInt16? {
            guard offset + 2 <= bytes.count else { return nil }
            defer { offset += 2 }
            return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        }
        mutating func u32() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        mutating func sized() -> [UInt8]? {
            guard let size = u16(), offset + Int(size) <= bytes.count else { return nil }
            defer { offset += Int(size) }
            return Array(bytes[offset..<offset + Int(size)])
        }
    }

    /// The policy digest of a marshalled TPM2B_PUBLIC (size, type, name algorithm, attributes,
    /// then the TPM2B_DIGEST authPolicy), or `nil` when it is too short.
    static func authPolicy(ofPublic publicArea: [UInt8]) -> [UInt8]? {
        var reader = Reader(publicArea)
        guard reader.u16() != nil, reader.u16() != nil, reader.u16() != nil, reader.u32() != nil else { return nil }
        return reader.sized()
    }
}
