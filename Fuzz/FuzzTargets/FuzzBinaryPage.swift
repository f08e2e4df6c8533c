// Fuzz target: arbitrary bytes as one page of a binary store's data file: the 32-byte page
// header, the stored payload (XXH3 checksum, LZ4), then the payload decoder the page kind names:
// a data page's slot table and every record in it (against the catalog the input's own catalog
// page would give, else the fixed catalog), a catalog, an index page or the index directory, a
// secondary-index page or its directory, a page-bounds page or its directory (and the bounds a
// data page's records give), or the metadata property list. Each input is decoded as given and again with its checksum
// rewritten. Decoders must throw; any crash, hang or sanitizer report is a bug.
import CoreDataBinaryFormat
import CoreDataTestModel
import FuzzBinarySupport

/// The body of the `FuzzBinaryPage` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryPage {
    /// Decodes `bytes` as one page, as given and with its checksum rewritten.
    ///
    /// Traps (`precondition`) when a decoded payload has another length than its header says or
    /// a decoded catalog, index page or directory does not survive encode → decode.
    public static func run(_ raw: [UInt8]) {
        decodePage(raw)
        var fixed = raw
        if ChecksumFixer.fixPage(&fixed, at: 0) != nil, fixed != raw { decodePage(fixed) }
    }

    /// Where a page-bounds page or directory is taken to lie.
    private static let farOffset: UInt64 = 1 << 40

    private static func decodePage(_ bytes: [UInt8]) {
        guard let header = try? PageHeader(decoding: bytes, at: 4_096) else { return }
        guard let payload = try? PageCodec.decodePayload(header, page: bytes, at: 4_096) else { return }
        precondition(payload.count == header.decodedLength, "payload of \(payload.count) bytes, header says \(header.decodedLength)")
        switch header.kind {
        case .data:
            guard let page = try? DataPage(payload: payload, pageOffset: 4_096) else { return }
            for slot in 0..<page.count {
                guard let range = page.range(of: slot) else { preconditionFailure("slot \(slot) of \(page.count) has no range") }
                _ = try? RecordCodec.decodeHeader(payload, from: range.lowerBound, to: range.upperBound, catalog: BinaryTestModel.catalog)
                _ = try? RecordCodec.decode(payload, from: range.lowerBound, to: range.upperBound, catalog: BinaryTestModel.catalog)
            }
            for entry in PageBoundsSummary.entries(ofDataPage: payload, at: 4_096) {
                precondition(entry.bounds.low <= entry.bounds.high && entry.pageOffset == 4_096, "page bounds out of shape: \(entry)")
            }
        case .catalog:
            if let catalog = try? Catalog(decoding: payload) {
                precondition((try? Catalog(decoding: catalog.encoded())) == catalog, "catalog does not round-trip")
            }
        case .index:
            if let entries = try? IndexPageCodec.decodePage(payload, pageOffset: 4_096) {
                precondition(IndexPageCodec.encodePage(entries[...]) == payload, "index page does not round-trip")
            }
        case .indexDirectory:
            if let directory = try? IndexPageCodec.decodeDirectory(payload, pageOffset: 4_096) {
                precondition(IndexPageCodec.encodeDirectory(pageOffsets: directory.pageOffsets, totalEntries: directory.totalEntries) == payload,
                             "index directory does not round-trip")
            }
        case .secondaryIndex:
            // The page names its own index; a page that disagrees with the directory throws.
            guard payload.count >= 9, let kind = SecondaryIndexKind(rawValue: payload[8]) else { return }
            let entity = UInt32(payload[0]) | UInt32(payload[1]) << 8 | UInt32(payload[2]) << 16 | UInt32(payload[3]) << 24
            let property = UInt32(payload[4]) | UInt32(payload[5]) << 8 | UInt32(payload[6]) << 16 | UInt32(payload[7]) << 24
            if let entries = try? SecondaryIndexCodec.decodePage(payload, pageOffset: 4_096, entityID: entity, propertyIndex: property, kind: kind) {
                // By value: a varint length may be written longer than needed.
                let again = SecondaryIndexCodec.encodePage(entityID: entity, propertyIndex: property, kind: kind, entries: entries[...])
                let decoded = try? SecondaryIndexCodec.decodePage(again, pageOffset: 4_096, entityID: entity, propertyIndex: property, kind: kind)
                precondition(decoded.map { $0.elementsEqual(entries) { $0.value == $1.value && $0.key == $1.key } } == true,
                             "secondary-index page does not round-trip")
            }
        case .secondaryIndexDirectory:
            if let listings = try? SecondaryIndexCodec.decodeDirectory(payload, pageOffset: 4_096) {
                precondition(SecondaryIndexCodec.encodeDirectory(listings) == payload, "secondary-index directory does not round-trip")
            }
        case .pageBounds:
            // Placed far into the file, so that any data page offset below it may be named.
            if let entries = try? PageBoundsCodec.decodePage(payload, pageOffset: Self.farOffset, catalog: BinaryTestModel.catalog) {
                precondition(PageBoundsCodec.encodePage(entries[...]) == payload, "page-bounds page does not round-trip")
            }
        case .pageBoundsDirectory:
            if let listings = try? PageBoundsCodec.decodeDirectory(payload, pageOffset: Self.farOffset) {
                precondition(PageBoundsCodec.encodeDirectory(listings) == payload, "page-bounds directory does not round-trip")
            }
        case .metadata:
            _ = try? MetadataCodec.decode(payload, location: "metadata page")
        }
    }
}
