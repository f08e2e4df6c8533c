import Foundation

/// The checks and decoding behind ``BinaryPropertyList/init(bytes:)`` (Formats/keyed-archive.md §2).
///
/// Every length, count and offset read from the input is compared in `UInt64` against what
/// remains before it becomes an `Int`, so no hostile value can overflow or index out of range.
struct BinaryPropertyListParser {
    /// `bplist0`, then a version digit (Apple writes `bplist00`). §2.
    static let magic = Array("bplist0".utf8)
    static let headerSize = 8
    static let trailerSize = 32

    let bytes: [UInt8]
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let topObject: Int
    /// Where the offset table starts; objects lie in `headerSize..<tableOffset`.
    let tableOffset: Int
    /// The encoded sizes of all distinct objects added up; they may not exceed the object area.
    private var encodedBytes = 0

    init(bytes: [UInt8]) throws(PropertyListError) {
        self.bytes = bytes
        let count = bytes.count
        guard count <= BinaryPropertyList.maximumInputSize else {
            throw PropertyListError("input of \(count) bytes is larger than the limit of \(BinaryPropertyList.maximumInputSize) bytes (maximumInputSize)")
        }
        guard count >= Self.headerSize + 1 + Self.trailerSize else {
            throw PropertyListError("input of \(count) bytes is shorter than the 8-byte header, one object and the 32-byte trailer")
        }
        guard bytes.starts(with: Self.magic), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[7]) else {
            throw PropertyListError("the input does not start with bplist0x", byte: 0)
        }
        let trailer = count - Self.trailerSize
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize) else {
            throw PropertyListError("offset size \(offsetSize) in the trailer is not 1 to 8", byte: trailer + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw PropertyListError("object reference size \(referenceSize) in the trailer is not 1 to 8", byte: trailer + 7)
        }
        let declaredObjects = Self.bigEndian(bytes, at: trailer + 8, width: 8)
        let declaredTop = Self.bigEndian(bytes, at: trailer + 16, width: 8)
        let declaredTable = Self.bigEndian(bytes, at: trailer + 24, width: 8)
        guard declaredObjects >= 1 else {
            throw PropertyListError("the trailer declares no objects", byte: trailer + 8)
        }
        guard declaredObjects <= UInt64(BinaryPropertyList.maximumObjects) else {
            throw PropertyListError("the trailer declares \(declaredObjects) objects, more than the limit of \(BinaryPropertyList.maximumObjects) (maximumObjects)", byte: trailer + 8)
        }
        guard declaredTop < declaredObjects else {
            throw PropertyListError("top object \(declaredTop) is not one of the \(declaredObjects) objects", byte: trailer + 16)
        }
        // The table lies between the first object byte and the trailer.
        let (tableBytes, overflow) = declaredObjects.multipliedReportingOverflow(by: UInt64(offsetSize))
        guard !overflow, declaredTable > UInt64(Self.headerSize), declaredTable <= UInt64(trailer),
              tableBytes <= UInt64(trailer) - declaredTable
        else {
            throw PropertyListError("the offset table of \(declaredObjects) entries of \(offsetSize) bytes at byte \(declaredTable) does not fit between the header and the trailer at byte \(trailer)", byte: trailer + 24)
        }
        objectCount = Int(declaredObjects)
        topObject = Int(declaredTop)
        tableOffset = Int(declaredTable)
    }

    /// Decodes every object in the offset table once, in order. Objects at the same offset (which
    /// CF never writes) share one decoded value instead of counting twice against the size check.
    mutating func parseObjects() throws(PropertyListError) -> [BinaryPropertyList.Object] {
        var objects: [BinaryPropertyList.Object] = []
        objects.reserveCapacity(objectCount)
        var firstAtOffset: [Int: Int] = [:]
        for number in 0..<objectCount {
            let entry = tableOffset + number * offsetSize
            let offset = Self.bigEndian(bytes, at: entry, width: offsetSize)
            guard offset >= UInt64(Self.headerSize), offset < UInt64(tableOffset) else {
                throw PropertyListError("offset \(offset) in the offset table is outside the object area \(Self.headerSize)..<\(tableOffset)", object: number, byte: entry)
            }
            let start = Int(offset)
            if let earlier = firstAtOffset[start] {
                objects.append(objects[earlier])
                continue
            }
            firstAtOffset[start] = number
            objects.append(try decodeObject(number, at: start))
        }
        return objects
    }

    // MARK: - Objects

    private mutating func decodeObject(_ number: Int, at start: Int) throws(PropertyListError) -> BinaryPropertyList.Object {
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        func fail(_ problem: String) -> PropertyListError { PropertyListError(problem, object: number, byte: start) }
        switch marker >> 4 {
        case 0x0:
            try account(1, number, start)
            switch marker {
            case 0x00, 0x0F: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw fail("unknown marker 0x\(Self.hex(marker))")
            }
        case 0x1:
            guard low <= 4 else { throw fail("integer of \(1 << min(low, 15)) bytes (marker 0x\(Self.hex(marker))); only 1, 2, 4, 8 and 16 bytes exist") }
            let width = 1 << low
            let payload = try span(of: UInt64(width), after: start + 1, number, start)
            try account(1 + width, number, start)
            return try integer(at: payload.lowerBound, width: width, number, start)
        case 0x2:
            guard low == 2 || low == 3 else { throw fail("real of \(1 << low) bytes (marker 0x\(Self.hex(marker))); only 4 and 8 bytes exist") }
            let width = 1 << low
            let payload = try span(of: UInt64(width), after: start + 1, number, start)
            try account(1 + width, number, start)
            let raw = Self.bigEndian(bytes, at: payload.lowerBound, width: width)
            return .real(width == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) : Double(bitPattern: raw))
        case 0x3:
            guard marker == 0x33 else { throw fail("date marker 0x\(Self.hex(marker)) is not 0x33") }
            let payload = try span(of: 8, after: start + 1, number, start)
            try account(9, number, start)
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.bigEndian(bytes, at: payload.lowerBound, width: 8))))
        case 0x4:
            let (count, headerEnd) = try self.count(low, start, number)
            let payload = try span(of: count, after: headerEnd, number, start)
            try account(payload.upperBound - start, number, start)
            return .data(Array(bytes[payload]))
        case 0x5:
            let (count, headerEnd) = try self.count(low, start, number)
            let payload = try span(of: count, after: headerEnd, number, start)
            try account(payload.upperBound - start, number, start)
            if let bad = bytes[payload].firstIndex(where: { $0 >= 0x80 }) {
                throw PropertyListError("byte 0x\(Self.hex(bytes[bad])) at byte \(bad) in an ASCII string is not ASCII", object: number, byte: start)
            }
            return .string(String(decoding: bytes[payload], as: UTF8.self))
        case 0x6:
            let (count, headerEnd) = try self.count(low, start, number)
            let (length, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw fail("a UTF-16 string of \(count) code units does not fit in the input") }
            let payload = try span(of: length, after: headerEnd, number, start)
            try account(payload.upperBound - start, number, start)
            return .string(try utf16String(payload, number, start))
        case 0x8:
            let width = low + 1
            guard width <= 8 else { throw fail("UID of \(width) bytes; at most 8 are supported") }
            let payload = try span(of: UInt64(width), after: start + 1, number, start)
            try account(1 + width, number, start)
            return .uid(Self.bigEndian(bytes, at: payload.lowerBound, width: width))
        case 0xA, 0xC:
            let (count, headerEnd) = try self.count(low, start, number)
            let references = try self.references(count, after: headerEnd, number, start)
            return marker >> 4 == 0xA ? .array(references) : .set(references)
        case 0xD:
            let (count, headerEnd) = try self.count(low, start, number)
            let (both, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw fail("a dictionary of \(count) entries does not fit in the input") }
            let references = try self.references(both, after: headerEnd, number, start)
            let half = references.count / 2
            return .dictionary(keys: Array(references[..<half]), values: Array(references[half...]))
        default:
            throw fail("unknown marker 0x\(Self.hex(marker))")
        }
    }

    private func integer(at position: Int, width: Int, _ number: Int, _ start: Int) throws(PropertyListError) -> BinaryPropertyList.Object {
        switch width {
        case 8:
            return .integer(Int64(bitPattern: Self.bigEndian(bytes, at: position, width: 8)))
        case 16:
            let high = Self.bigEndian(bytes, at: position, width: 8)
            let low = Self.bigEndian(bytes, at: position + 8, width: 8)
            guard high == 0 else {
                throw PropertyListError("16-byte integer with high bytes 0x\(String(high, radix: 16)); only values up to UInt64.max are supported", object: number, byte: start)
            }
            return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low)
        default:
            // 1, 2 and 4 bytes: unsigned, so they always fit.
            return .integer(Int64(Self.bigEndian(bytes, at: position, width: width)))
        }
    }

    /// The count of a data, string or container object: the marker's low nibble, or when that is
    /// 0xF, the integer object that follows (1, 2, 4 or 8 bytes).
    private func count(_ low: Int, _ start: Int, _ number: Int) throws(PropertyListError) -> (count: UInt64, headerEnd: Int) {
        guard low == 0x0F else { return (UInt64(low), start + 1) }
        let intStart = start + 1
        guard intStart < tableOffset else {
            throw PropertyListError("the count that should follow the marker runs into the offset table", object: number, byte: start)
        }
        let intMarker = bytes[intStart]
        guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else {
            throw PropertyListError("marker 0x\(Self.hex(intMarker)) after a count nibble 0xF is not an integer of 1, 2, 4 or 8 bytes", object: number, byte: intStart)
        }
        let width = 1 << Int(intMarker & 0x0F)
        let payload = try span(of: UInt64(width), after: intStart + 1, number, start)
        return (Self.bigEndian(bytes, at: payload.lowerBound, width: width), payload.upperBound)
    }

    /// `count` references of the trailer's reference size after `position`, each checked against
    /// the object count.
    private mutating func references(_ count: UInt64, after position: Int, _ number: Int, _ start: Int) throws(PropertyListError) -> [Int] {
        let (length, overflow) = count.multipliedReportingOverflow(by: UInt64(referenceSize))
        guard !overflow else {
            throw PropertyListError("\(count) object references of \(referenceSize) bytes do not fit in the input", object: number, byte: start)
        }
        let payload = try span(of: length, after: position, number, start)
        try account(payload.upperBound - start, number, start)
        var references: [Int] = []
        references.reserveCapacity(payload.count / referenceSize)
        var cursor = payload.lowerBound
        while cursor < payload.upperBound {
            let reference = Self.bigEndian(bytes, at: cursor, width: referenceSize)
            guard reference < UInt64(objectCount) else {
                throw PropertyListError("object reference \(reference) at byte \(cursor) is out of range (the list has \(objectCount) objects)", object: number, byte: start)
            }
            references.append(Int(reference))
            cursor += referenceSize
        }
        return references
    }

    private func utf16String(_ payload: Range<Int>, _ number: Int, _ start: Int) throws(PropertyListError) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(payload.count / 2)
        var cursor = payload.lowerBound
        while cursor < payload.upperBound {
            units.append(UInt16(bytes[cursor]) << 8 | UInt16(bytes[cursor + 1]))
            cursor += 2
        }
        var scalars = String.UnicodeScalarView()
        var decoder = UTF16()
        var iterator = units.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return String(scalars)
            case .error:
                throw PropertyListError("invalid UTF-16 (an unpaired surrogate) in a string", object: number, byte: start)
            }
        }
    }

    // MARK: - Bounds

    /// The `length` bytes after `position`, which must end before the offset table.
    private func span(of length: UInt64, after position: Int, _ number: Int, _ start: Int) throws(PropertyListError) -> Range<Int> {
        guard position <= tableOffset, length <= UInt64(tableOffset - position) else {
            let remaining = max(0, tableOffset - position)
            throw PropertyListError("needs \(length) bytes after byte \(position), but only \(remaining) remain before the offset table at byte \(tableOffset)", object: number, byte: start)
        }
        return position..<(position + Int(length))
    }

    /// Counts an object's encoded size against the object area: CF never overlaps objects, so in a
    /// well-formed list they add up to at most the area. Overlapping objects could otherwise make
    /// a small input decode into a huge table (many large containers sharing one run of bytes).
    private mutating func account(_ size: Int, _ number: Int, _ start: Int) throws(PropertyListError) {
        encodedBytes += size
        let area = tableOffset - Self.headerSize
        guard encodedBytes <= area else {
            throw PropertyListError("objects overlap: their encoded sizes add up to more than the \(area) bytes of the object area", object: number, byte: start)
        }
    }

    /// The big-endian unsigned integer of `width` (1 to 8) bytes at `position`; the caller has
    /// checked the range.
    static func bigEndian(_ bytes: [UInt8], at position: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in position..<(position + width) {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
}
