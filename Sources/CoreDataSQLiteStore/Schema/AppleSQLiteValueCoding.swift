import CoreDataModel
import CoreDataStorage
import Foundation

/// Converts attribute values between store values and SQLite's storage classes as Apple's SQLite
/// store keeps them (`Formats/apple-sqlite-store.md` §5). No I/O: external data files are read by
/// the caller, which hands in `externalData`.
enum AppleSQLiteValueCoding {
    /// `0x01`: the bytes follow in the column (§5).
    static let inlineMarker: UInt8 = 0x01
    /// `0x02`: an ASCII UUID follows, naming a file in the external data folder (§5).
    static let externalMarker: UInt8 = 0x02

    /// Reals beyond this read as no integer: `Int64(_:)` of a larger double would trap.
    static let largestExactInteger = 9.2e18

    /// Whether an integer fits the attribute's width (Integer 16, 32 or 64).
    static func fits(_ number: Int64, _ type: NSAttributeType) -> Bool {
        switch type {
        case .integer16AttributeType: return Int64(Int16.min)...Int64(Int16.max) ~= number
        case .integer32AttributeType: return Int64(Int32.min)...Int64(Int32.max) ~= number
        default: return true
        }
    }

    /// The store value of a column, or `nil` when the stored value cannot be the attribute's type.
    ///
    /// - Parameter externalData: reads the external file a reference names (§5).
    static func decode(
        _ value: SQLiteValue, as type: NSAttributeType, externalStorage: Bool, externalData: (String) -> Data?
    ) -> StoreValue? {
        if case .null = value { return .null }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            let number: Int64
            switch value {
            case .integer(let stored): number = stored
            case .real(let stored) where stored.rounded() == stored && abs(stored) < largestExactInteger: number = Int64(stored)
            default: return nil
            }
            // A value the attribute's width cannot hold would be truncated in memory.
            return fits(number, type) ? .integer(number) : nil
        case .booleanAttributeType:
            guard case .integer(let number) = value else { return nil }
            return .bool(number != 0)
        case .doubleAttributeType, .floatAttributeType:
            switch value {
            case .real(let number): return .double(number)
            case .integer(let number): return .double(Double(number))
            default: return nil
            }
        case .decimalAttributeType:
            switch value {
            case .integer(let number): return .decimal(Decimal(number))
            // The shortest text that reads back as the same double, so 0.1 stays 0.1.
            case .real(let number): return Decimal(string: "\(number)").map(StoreValue.decimal)
            case .text(let text): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(StoreValue.decimal)
            default: return nil
            }
        case .stringAttributeType:
            guard case .text(let text) = value else { return nil }
            return .string(text)
        case .URIAttributeType:
            guard case .text(let text) = value, let url = URL(string: text) else { return nil }
            return .uri(url)
        case .dateAttributeType:
            switch value {
            case .real(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .integer(let seconds): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
            default: return nil
            }
        case .UUIDAttributeType:
            guard case .blob(let bytes) = value, bytes.count == 16 else { return nil }
            let b = [UInt8](bytes)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType:
            guard case .blob(let bytes) = value else { return nil }
            guard externalStorage, let marker = bytes.first else { return .data(bytes) }
            switch marker {
            case inlineMarker: return .data(Data(bytes.dropFirst()))
            case externalMarker:
                let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
                guard !name.isEmpty, name.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
                return externalData(name).map(StoreValue.data)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// The SQLite value of an attribute's store value, or `nil` when the value is not of the
    /// attribute's kind.
    static func encode(_ value: StoreValue, as type: NSAttributeType, externalStorage: Bool) -> SQLiteValue? {
        switch (value, type) {
        case (.null, _): return .null
        case (.integer(let number), .integer16AttributeType), (.integer(let number), .integer32AttributeType), (.integer(let number), .integer64AttributeType):
            return fits(number, type) ? .integer(number) : nil
        case (.bool(let flag), .booleanAttributeType): return .integer(flag ? 1 : 0)
        case (.integer(let number), .booleanAttributeType): return .integer(number != 0 ? 1 : 0)
        case (.double(let number), .doubleAttributeType), (.double(let number), .floatAttributeType): return .real(number)
        case (.integer(let number), .doubleAttributeType), (.integer(let number), .floatAttributeType): return .real(Double(number))
        case (.decimal(let decimal), .decimalAttributeType):
            // The column's numeric affinity stores any well-formed number as a real (15
            // significant digits), as Apple's stores hold decimals (§5).
            return .text(NSDecimalNumber(decimal: decimal).description(withLocale: Locale(identifier: "en_US_POSIX")))
        case (.string(let text), .stringAttributeType): return .text(text)
        case (.uri(let url), .URIAttributeType): return .text(url.absoluteString)
        case (.date(let date), .dateAttributeType): return .real(date.timeIntervalSinceReferenceDate)
        case (.uuid(let uuid), .UUIDAttributeType): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case (.data(let bytes), .binaryDataAttributeType), (.data(let bytes), .transformableAttributeType), (.data(let bytes), .objectIDAttributeType):
            guard externalStorage else { return .blob(bytes) }
            var marked = Data([inlineMarker])
            marked.append(bytes)
            return .blob(marked)
        default:
            return nil
        }
    }
}
