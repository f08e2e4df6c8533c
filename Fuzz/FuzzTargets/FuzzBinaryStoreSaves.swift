// Fuzz target: saves, maintenance and reopens on a binary store, starting from fuzzed files or
// from nothing. FuzzBinaryStoreOpen only reads a damaged store; this target writes to one the way
// a coordinator does (through the store protocol, on an in-memory file system, under
// BinaryTestModel) and checks what the store promises about writes:
//
// - a save that returned is in the store at once and after a close and reopen or a crash and
//   reopen, row for row (values, versions, the objects that exist);
// - a save that threw changed nothing;
// - a save the store must refuse (an insert of an ID that exists, a stale or missing version, a
//   reference to an object that does not exist after the save) throws that error, and a save with
//   none of those faults does not throw;
// - a store that opened intact and was written only through the API verifies intact after a
//   compaction, a crash, a verify operation and the final close and reopen.
//
// Input: an 8-byte header (data-file length n, log length m; 32-bit little-endian, each cut to
// what follows), n bytes of data file, m bytes of log, then the program: an options byte and
// operations of the form [opcode][operand length L][L operand bytes] (see ``Operation``). Every
// checksum of the files is rewritten first, as in FuzzBinaryStoreOpen. An empty data file means
// no file: the store is created fresh, so an empty input tests a new store.
//
// Any throw while opening the fuzzed files ends the input. Where the opened store does not verify
// intact, the program still runs (for crashes and sanitizer reports) but no guarantee is checked:
// damage the open did not notice may surface at any later read.
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestModel
import Foundation
import FuzzBinarySupport

/// The body of the `FuzzBinaryStoreSaves` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryStoreSaves {
    /// One operation of the program; the opcode byte is taken modulo the number of cases.
    enum Operation: UInt8, CaseIterable {
        /// Operands: count, then per object its entity and values. New keys from `newPrimaryKeys`.
        case insert
        /// Operands: count, then per object a pick of an existing object, a keep mask and values.
        case update
        /// Operands: count, then per object a pick of an existing object.
        case delete
        /// Operands: deletes, updates and inserts in one save.
        case mixed
        /// A mixed save plus one or two faults the store must refuse it for.
        case faulty
        case checkpoint
        case checkpointTruncatingLog
        case compact
        /// Close (a checkpoint), then open the files again.
        case reopen
        /// Open a copy of the files as they are now, as after the process died, and go on with it.
        case crash
        /// `verify()` and a comparison of every row.
        case verify
        /// Operands: a string stored under a metadata key.
        case metadata
        /// Operands: entity, limit.
        case batchDelete
        /// Operands: entity, limit, properties and their values.
        case batchUpdate
    }

    /// The most operations one input runs, so one input stays well under libFuzzer's timeout.
    static let maximumOperations = 32
    static let path = "/fuzz/store"

    /// Runs `bytes` (header, data file, log, program) against a store; see the file's header.
    ///
    /// Returns for every input the store may refuse; traps (`preconditionFailure`) when the store
    /// breaks one of the guarantees above.
    public static func run(_ bytes: [UInt8]) {
        let (data, log, program) = split(bytes)
        var files: [String: [UInt8]] = [:]
        if !data.isEmpty {
            var fixed = data
            ChecksumFixer.fixDataFile(&fixed)
            files[path] = fixed
        }
        if !log.isEmpty {
            var fixed = log
            ChecksumFixer.fixLog(&fixed)
            files[path + "-wal"] = fixed
        }
        var reader = Reader(program)
        let flags = reader.byte()
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.exclusiveAccess = flags & 1 != 0
        options.durability = flags & 2 != 0 ? .normal : .full
        options.recordsHistory = flags & 4 != 0
        // A cache smaller than one page makes every read go to the file.
        options.pageCacheBytes = flags & 8 != 0 ? 4_096 : 1 << 20
        let session = Session(files: files, options: options, nameKeyedRows: flags & 16 != 0, created: data.isEmpty)
        guard session.open() else { return }
        var count = 0
        while !reader.isAtEnd, count < maximumOperations, session.store != nil {
            count += 1
            let opcode = reader.byte()
            let length = Int(reader.byte())
            var operands = Reader(reader.bytes(length))
            guard let operation = Operation(rawValue: opcode % UInt8(Operation.allCases.count)) else { continue }
            session.perform(operation, &operands)
        }
        session.finish()
    }

    /// The data file, log and program of an input.
    static func split(_ bytes: [UInt8]) -> (data: [UInt8], log: [UInt8], program: [UInt8]) {
        var header = Reader(Array(bytes.prefix(8)))
        let dataLength = Int(header.u32())
        let logLength = Int(header.u32())
        let start = min(8, bytes.count)
        let dataEnd = start + min(dataLength, bytes.count - start)
        let logEnd = dataEnd + min(logLength, bytes.count - dataEnd)
        return (Array(bytes[start..<dataEnd]), Array(bytes[dataEnd..<logEnd]), Array(bytes[logEnd...]))
    }

    /// An input of this target (the inverse of ``split(_:)``), for the seed corpus.
    static func input(data: [UInt8], log: [UInt8], options: UInt8, operations: [(Operation, [UInt8])]) -> [UInt8] {
        var writer = ByteWriter()
        writer.uint32(UInt32(data.count))
        writer.uint32(UInt32(log.count))
        writer.append(data)
        writer.append(log)
        writer.uint8(options)
        for (operation, operands) in operations {
            writer.uint8(operation.rawValue)
            writer.uint8(UInt8(min(operands.count, 255)))
            writer.append(Array(operands.prefix(255)))
        }
        return writer.bytes
    }

    // MARK: - Reading the program

    /// Reads bytes front to back; past the end every read is 0, so a short operand list still
    /// makes a valid operation (zeros choose nulls, empty values and the first candidates).
    struct Reader {
        private let bytes: [UInt8]
        private var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }

        mutating func byte() -> UInt8 {
            defer { position += 1 }
            return position < bytes.count ? bytes[position] : 0
        }

        mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
        mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
        mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
        mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

        /// A value's length: mostly short, sometimes past a 16 KiB page (up to 144,000 bytes), so
        /// records that need a page of their own are saved too.
        mutating func length() -> Int {
            let first = byte()
            return first < 250 ? Int(first) : Int(first - 249) * 24_000
        }

        /// `length` bytes made by repeating up to 32 bytes of the program.
        mutating func filler(_ length: Int) -> [UInt8] {
            let source = bytes(min(max(length, 1), 32))
            return (0..<length).map { source[$0 % source.count] }
        }

        /// One of `candidates`, chosen by the next byte; `nil` when there are none.
        mutating func pick<T>(_ candidates: [T]) -> T? {
            let choice = Int(byte())
            return candidates.isEmpty ? nil : candidates[choice % candidates.count]
        }
    }

    // MARK: - Rows

    /// The model's entities by name and their properties in a fixed order.
    static let entities = BinaryTestModel.model.entitiesByName
    static let entityNames = entities.keys.sorted()
    static let propertyNames: [String: [String]] = entities.mapValues { $0.propertiesByName.keys.sorted() }

    /// Equality of two values that reads NaN doubles and dates by bit pattern (the store keeps
    /// bits) and NaN decimals as equal.
    static func same(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case (.decimal(let x), .decimal(let y)) where x.isNaN || y.isNaN: return x.isNaN && y.isNaN
        default: return a == b
        }
    }

    /// Whether `actual` is `expected` for every property of the model (a fuzzed store's catalog
    /// may name more; the model is what a caller sees).
    static func same(_ expected: StoreRow, _ actual: StoreRow) -> Bool {
        guard expected.objectID == actual.objectID, expected.version == actual.version else { return false }
        return (propertyNames[expected.objectID.entityName] ?? []).allSatisfy { same(expected[$0], actual[$0]) }
    }

    static func describe(_ row: StoreRow?) -> String {
        guard let row else { return "no row" }
        let values = (propertyNames[row.objectID.entityName] ?? []).map { "\($0): \(describe(row[$0]))" }
        return "\(row.objectID) v\(row.version) {\(values.joined(separator: ", "))}"
    }

    /// A value for messages: long strings and data cut short.
    static func describe(_ value: StoreValue) -> String {
        switch value {
        case .string(let text) where text.count > 40: return ".string(\(text.prefix(40).debugDescription)… \(text.utf8.count) bytes)"
        case .data(let data) where data.count > 40: return ".data(\(data.count) bytes)"
        // Date's own description gives up on far-off and NaN dates.
        case .date(let date): return ".date(\(date.timeIntervalSinceReferenceDate))"
        default: return "\(value)"
        }
    }

    /// A value of an attribute of `type` from the program; one in 16 is null.
    static func attributeValue(_ type: NSAttributeType, _ reader: inout Reader) -> StoreValue {
        let selector = reader.byte()
        if selector % 16 == 0 { return .null }
        switch type {
        case .integer16AttributeType: return .integer(Int64(Int16(truncatingIfNeeded: reader.u16())))
        case .integer32AttributeType: return .integer(Int64(Int32(truncatingIfNeeded: reader.u32())))
        case .integer64AttributeType: return .integer(Int64(bitPattern: reader.u64()))
        case .booleanAttributeType: return .bool(selector & 16 != 0)
        case .doubleAttributeType: return .double(Double(bitPattern: reader.u64()))
        case .floatAttributeType: return .double(Double(Float(bitPattern: reader.u32())))
        case .decimalAttributeType:
            let exponent = Int(Int8(bitPattern: reader.byte()))
            return .decimal(Decimal(sign: selector & 16 != 0 ? .minus : .plus, exponent: exponent, significand: Decimal(reader.u64())))
        case .stringAttributeType: return .string(String(decoding: reader.filler(reader.length()), as: UTF8.self))
        case .dateAttributeType: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: reader.u64())))
        case .binaryDataAttributeType: return .data(Data(reader.filler(reader.length())))
        case .UUIDAttributeType:
            let b = reader.bytes(16)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .URIAttributeType:
            // Characters that need no escaping, so the URL's string is the one it was made from.
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/?=&%")
            let path = String(reader.filler(reader.length() % 200).map { alphabet[Int($0) % alphabet.count] })
            return URL(string: "https://example.com/" + path).map { .uri($0) } ?? .null
        default: return .null
        }
    }
}
