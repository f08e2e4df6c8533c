import CoreDataModel
import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Rows per run of ``executeInRuns(_:)``: 160 KB of rows, small beside a large fetch's
    /// objects (whose memory the runs stop adding to) and large enough that the run array's
    /// own cost is nothing per row.
    public static let rowRunLength = 4096

    /// A match found by a scan: where its record is, its key, and the values it sorts by.
    struct ScanMatch {
        /// Its object ID: ties sort by it (entity name, then key).
        var id: StoreObjectID
        var location: UInt64
        var sortValues: [StoreValue]
    }

    /// Answers a fetch whose predicate and sort compiled (``CompiledFetch``): walks the index in
    /// key order, decodes only the attributes the fetch reads from each record, and builds rows
    /// only for the results. With a sort and a limit it keeps the best `offset + limit` matches;
    /// sorted by a string, it passes over every page whose ``PageSortBounds`` (learned by an
    /// earlier such scan) put it after the last of them. With ``SecondaryIndex`` candidates, only
    /// those records are read.
    ///
    /// Rows found in key order come in runs of ``rowRunLength`` when `inRuns`, else in one run.
    ///
    /// Caller holds `rw` (shared). Complexity: O(n) partial decodes for n rows of the entities
    /// (or the index's candidates), plus O(m log k) comparisons for m matches kept to k.
    func scan(_ request: StoreFetchRequest, compiled: CompiledFetch, entityIDs: [Int], inRuns: Bool) throws(StoreError) -> StoreFetchRuns {
        let offset = max(0, request.offset)
        let keep = request.limit > 0 ? offset + request.limit : Int.max
        let order = compiled.order
        // Taken once: read from the store in the loop, `catalog` (computed) and the two
        // references were copied and retained for every record.
        let layouts = self.layouts
        let catalog = layouts.catalog
        let externalLoader = self.externalLoader
        // Without a sort, matches come in object-ID order: one entity's keys are already in it,
        // so the scan can stop once it has enough.
        let entityNumbers = entityIDs.map { catalog.entities[$0].number }
        let stopEarly = order == nil && entityIDs.count == 1
        var matches: [ScanMatch] = []
        let topK = order != nil && keep < Int.max
        let ascending = compiled.stringSort?.ascending ?? true
        func better(_ a: ScanMatch, _ b: ScanMatch) -> Bool {
            if let order {
                switch order(a.sortValues, b.sortValues) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: break
                }
            }
            return a.id < b.id
        }

        // Rows of one entity in key order are the answer as they are found: each record is
        // decoded once, where it lies, instead of matched here and read again afterwards.
        let inlineRows = order == nil && entityIDs.count == 1 && request.resultType == .rows
        var rows: [StoreRow] = []
        var runs: [[StoreRow]] = []
        if inlineRows, inRuns { rows.reserveCapacity(Self.rowRunLength) }
        var matched = 0
        var values = [StoreValue](repeating: .null, count: compiled.keys.count)
        let index = try loadedIndex()
        scanning: for (entityID, entity) in zip(entityIDs, entityNumbers) where entityID < index.tables.count {
            let table = index.tables[entityID]
            let slots = catalog.entities[entityID].properties.map { compiled.keys.firstIndex(of: $0) ?? -1 }
            let candidates = try candidatePositions(compiled, entityID: entityID, table: table)
            var prefilter = RawPrefilter(compiled, entity: catalog.entities[entityID], sorts: topK && entityIDs.count == 1)
            // Pages are passed over whole only in a walk of every current record, which is
            // also what lets the walk learn bounds for the next scan.
            if candidates == nil, prefilter?.sortColumn != nil { try loadPersistedPageBounds() }
            var bounds = candidates == nil ? prefilter?.sortColumn.map { PageBoundsWalk(pageSortBounds, entityID: entityID, column: $0) } : nil
            // With bounds known, pages are walked least bound first (greatest, descending), so
            // the k best are found early and most pages are passed over whole; records then come
            // out of key order, and a record tying with the last match is no longer after it.
            let walk = bounds.flatMap { $0.knowsNoPage ? nil : $0.runsByBound(table.locations, ascending: ascending) }
            var run = PageRun()
            for (steps, runBounds) in walk ?? [(0..<(candidates?.count ?? table.keys.count), nil)] {
                if let runBounds {
                    if let last = prefilter?.lastPrefix, runBounds.allSort(after: last, ascending: ascending) {
                        bounds?.passedOver(steps.count)
                        continue
                    }
                    // The runs without bounds came first, in key order; from here on, records do not.
                    prefilter?.inKeyOrder = false
                }
                for step in steps {
                    let position = candidates?[step] ?? step
                    let location = table.locations[position]
                    guard location != 0 else { continue }
                    // The page whose bounds this record helps learn, if any.
                    var learning: UInt64?
                    if bounds != nil, location & RecordLocation.logBit == 0 {
                        let page = location >> RecordLocation.slotBits
                        if let known = bounds?.known(page) {
                            if let last = prefilter?.lastPrefix, known.allSort(after: last, ascending: ascending) {
                                bounds?.passedOver(1)
                                continue
                            }
                        } else {
                            learning = page
                        }
                    }
                    let (bytes, range) = try recordBytes(at: location, run: &run)
                    let skips = prefilter?.skips(bytes, range, entityID: entityID) == true
                    if let learning { bounds?.saw(page: learning, prefix: prefilter?.probedPrefix) }
                    if skips { continue }
                    do {
                        if compiled.filter != nil || !inlineRows {
                            let head = try RecordCodec.decodeFields(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, slots: slots, into: &values, external: externalLoader)
                            guard head.kind == .row else { continue }
                            if let filter = compiled.filter, !filter(values) { continue }
                        }
                        if inlineRows {
                            if matched >= offset {
                                guard let row = try RecordCodec.decode(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, layouts: layouts, external: externalLoader).1 else { continue }
                                rows.append(row)
                                if inRuns, rows.count == Self.rowRunLength {
                                    runs.append(rows)
                                    rows = []
                                    rows.reserveCapacity(Self.rowRunLength)
                                }
                            } else if compiled.filter == nil,
                                      try RecordCodec.decodeHeader(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog).kind != .row {
                                continue
                            }
                            matched += 1
                            if matched >= keep { break scanning }
                            continue
                        }
                    } catch {
                        throw .corrupt(detail: error.within(Self.describe(location)).description)
                    }
                    let match = ScanMatch(id: StoreObjectID(entity: entity, primaryKey: table.keys[position]), location: location, sortValues: order == nil ? [] : values)
                    if topK {
                        if matches.count == keep, let last = matches.last, !better(match, last) { continue }
                        var low = 0
                        var high = matches.count
                        while low < high {
                            let mid = (low + high) / 2
                            if better(matches[mid], match) { low = mid + 1 } else { high = mid }
                        }
                        matches.insert(match, at: low)
                        if matches.count > keep { matches.removeLast() }
                        if matches.count == keep, let last = matches.last { prefilter?.sortsAfter(last.sortValues) }
                    } else {
                        matches.append(match)
                        if stopEarly, matches.count >= keep { break scanning }
                    }
                }
            }
            bounds?.finish(into: pageSortBounds)
        }
        if inlineRows {
            if !rows.isEmpty || runs.isEmpty { runs.append(rows) }
            return .rows(runs)
        }
        if order != nil, !topK {
            matches.sort(by: better)
        } else if order == nil, entityIDs.count > 1 {
            matches.sort { $0.id < $1.id }
        }
        let start = min(offset, matches.count)
        let end = request.limit > 0 ? min(matches.count, start + request.limit) : matches.count
        let page = matches[start..<end]
        switch request.resultType {
        case .count:
            return .other(.count(page.count))
        case .objectIDs:
            return .other(.objectIDs(page.map(\.id)))
        case .rows:
            rows.reserveCapacity(page.count)
            for match in page {
                if let row = try readRow(at: match.location) { rows.append(row) }
            }
            return .rows([rows])
        }
    }

    /// Positions in `table` of the rows a secondary index says may match, in key order; nil when
    /// no index applies (every row is a candidate).
    func candidatePositions(_ compiled: CompiledFetch, entityID: Int, table: ObjectIndex.Table) throws(StoreError) -> [Int]? {
        let entityName = catalog.entities[entityID].name
        guard let indexed = indexedAttributes[entityName] else { return nil }
        // Equality narrows most; otherwise the first range.
        let usable = compiled.conjuncts.filter { indexed[$0.key] != nil }
        guard let chosen = usable.first(where: { $0.type == .equalTo }) ?? usable.first, let kind = indexed[chosen.key] else { return nil }
        let secondary = try secondaryIndex(entityID: entityID, attribute: chosen.key, kind: kind, table: table)
        guard let keys = secondary.candidates(chosen.type, chosen.constant) else { return nil }
        var positions = keys.compactMap { table.position(of: $0) }
        positions.sort()
        // A key twice (only a damaged persisted index lists one so, §7.2) is still read once.
        var unique = 0
        for position in positions where unique == 0 || positions[unique - 1] != position {
            positions[unique] = position
            unique += 1
        }
        positions.removeLast(positions.count - unique)
        return positions
    }

    /// The secondary index of `attribute`: the one in memory, else the file's (§7.2), else built
    /// from the records. Caller holds `rw` (shared), so the table cannot change meanwhile.
    func secondaryIndex(entityID: Int, attribute: String, kind: SecondaryIndex.Kind, table: ObjectIndex.Table) throws(StoreError) -> SecondaryIndex {
        if let built = secondaryLock.withLock({ secondaryIndexes[entityID]?[attribute] }) { return built }
        let propertyIndex = catalog.entities[entityID].index(of: attribute)
        if let propertyIndex {
            do {
                if let read = try persistedSecondaryIndex(entityID: entityID, propertyIndex: propertyIndex, kind: kind, table: table) {
                    secondaryLock.withLock {
                        secondaryIndexes[entityID, default: [:]][attribute] = read
                        secondaryIndexesRead += 1
                    }
                    return read
                }
            } catch .corrupt {
                // Damaged pages (§7.2): built from the records below, and written anew by the
                // next checkpoint, which finds it in memory and unlike its pages.
            }
        }
        let catalog = self.catalog
        let externalLoader = self.externalLoader
        let slots = catalog.entities[entityID].properties.indices.map { $0 == propertyIndex ? 0 : -1 }
        var values: [StoreValue] = [.null]
        var entries: [(value: StoreValue, key: Int64)] = []
        entries.reserveCapacity(table.liveCount)
        for position in table.keys.indices where table.locations[position] != 0 {
            let location = table.locations[position]
            let (bytes, range) = try recordBytes(at: location)
            do {
                let head = try RecordCodec.decodeFields(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, slots: slots, into: &values, external: externalLoader)
                if head.kind == .row { entries.append((values[0], table.keys[position])) }
            } catch {
                throw .corrupt(detail: error.within(Self.describe(location)).description)
            }
        }
        let built = SecondaryIndex(kind: kind, entries: entries)
        secondaryLock.withLock {
            secondaryIndexes[entityID, default: [:]][attribute] = built
            secondaryIndexesBuilt += 1
        }
        return built
    }
}

/// The cheap first look of a scan at each record (``RecordProbe``): the integer tests of the
/// filter (``CompiledFetch/integerTests``) and, once a top-k fetch holds k matches, whether the
/// record's sort string (``CompiledFetch/stringSort``) comes after the last of them, on the raw
/// bytes. A record it skips would be dropped by the full path too; any record it cannot judge
/// (a null, a non-ASCII string, a value out of its attribute's range) goes to the full path.
private struct RawPrefilter {
    private var probe: RecordProbe
    /// The sort string alone, for a record ``probe`` cannot read for want of an integer the
    /// filter tests (a null `age`): its page's bounds still need the string.
    private var sortProbe: RecordProbe?
    /// Per test, its integer's position in the probe, the test, and the attribute's range.
    private let tests: [(position: Int, test: (Int64) -> Bool, fits: (Int64) -> Bool)]
    /// The slot of the sort key in the compiled values; -1 without a string sort.
    private let sortSlot: Int
    private let ascending: Bool
    /// The sort string of the last of k matches, when it is ASCII.
    private var last: [UInt8]?
    /// Whether records come in key order, so that one tying with the last match sorts after it
    /// (its object ID is larger) and is skipped too.
    var inKeyOrder = true
    /// The catalog column of the sort string, when records may be skipped for it.
    let sortColumn: Int?
    /// ``PageSortBounds/prefix(_:)`` of the last of k matches' sort string, when it is ASCII.
    private(set) var lastPrefix: UInt64?
    /// After ``skips(_:_:entityID:)``: the prefix of the record's sort string, nil when the
    /// record could not be probed or the string is not ASCII.
    private(set) var probedPrefix: UInt64?

    /// Nil when there is nothing to judge on raw bytes. A predicate that is not a conjunction of
    /// integer tests is left to the full path, but a record that sorts after the last of k
    /// matches cannot enter them whether or not it matches. `sorts`: whether a record may be
    /// skipped for sorting after the last match (a top-k fetch of one entity, whose records come
    /// in key order, so that a tie also sorts after it).
    init?(_ compiled: CompiledFetch, entity: Catalog.Entity, sorts: Bool) {
        let integerTests = compiled.integerTests ?? []
        var columns: [Int] = []
        var resolved: [(column: Int, test: (Int64) -> Bool, fits: (Int64) -> Bool)] = []
        for test in integerTests {
            // An attribute no record of the entity holds is null everywhere: the full path.
            guard let column = entity.index(of: test.key) else { return nil }
            columns.append(column)
            resolved.append((column, test.test, test.fits))
        }
        columns = Array(Set(columns)).sorted()
        tests = resolved.map { test in (columns.firstIndex(of: test.column) ?? 0, test.test, test.fits) }
        var stringColumn = -1
        var sortSlot = -1
        if sorts, let sort = compiled.stringSort, let column = entity.index(of: sort.key), let slot = compiled.keys.firstIndex(of: sort.key) {
            stringColumn = column
            sortSlot = slot
        }
        guard !tests.isEmpty || sortSlot >= 0 else { return nil }
        probe = RecordProbe(integerColumns: columns, stringColumn: stringColumn, propertyCount: entity.properties.count)
        sortColumn = stringColumn >= 0 ? stringColumn : nil
        sortProbe = stringColumn >= 0 && !columns.isEmpty ? RecordProbe(integerColumns: [], stringColumn: stringColumn, propertyCount: entity.properties.count) : nil
        self.sortSlot = sortSlot
        ascending = compiled.stringSort?.ascending ?? true
    }

    /// Whether the record in `bytes[range]` cannot be a result.
    mutating func skips(_ bytes: [UInt8], _ range: Range<Int>, entityID: Int) -> Bool {
        probedPrefix = nil
        guard probe.probe(bytes, from: range.lowerBound, to: range.upperBound, entityID: entityID) else {
            if sortProbe?.probe(bytes, from: range.lowerBound, to: range.upperBound, entityID: entityID) == true, let string = sortProbe?.string {
                probedPrefix = Self.prefix(bytes, string)
            }
            return false
        }
        if sortColumn != nil { probedPrefix = Self.prefix(bytes, probe.string) }
        for test in tests {
            let value = probe.integers[test.position]
            // A conjunction fails with any test that fails; a value out of range is judged by the full path.
            if test.fits(value), !test.test(value) { return true }
        }
        guard let last, sortSlot >= 0, let order = Self.asciiOrder(bytes, probe.string, last) else { return false }
        // In key order a tie sorts after the last match too: its object ID is larger.
        if inKeyOrder { return ascending ? order != .orderedAscending : order != .orderedDescending }
        return ascending ? order == .orderedDescending : order == .orderedAscending
    }

    /// ``PageSortBounds/prefix(_:)`` of the string at `range`.
    private static func prefix(_ bytes: [UInt8], _ range: Range<Int>) -> UInt64? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { PageSortBounds.prefix(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Notes the sort values of the last of k matches.
    mutating func sortsAfter(_ values: [StoreValue]) {
        guard sortSlot >= 0, sortSlot < values.count, case .string(var text) = values[sortSlot] else {
            last = nil
            lastPrefix = nil
            return
        }
        last = text.withUTF8 { utf8 in utf8.allSatisfy { $0 < 0x80 } ? Array(utf8) : nil }
        lastPrefix = last?.withUnsafeBufferPointer { PageSortBounds.prefix($0) }
    }

    /// Byte order of the string at `range` and the ASCII bytes `other`, as `compare:` orders
    /// ASCII strings; nil when the string is not ASCII.
    private static func asciiOrder(_ bytes: [UInt8], _ range: Range<Int>, _ other: [UInt8]) -> ComparisonResult? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            other.withUnsafeBufferPointer { CompiledFetch.asciiOrder(UnsafeBufferPointer(rebasing: buffer[range]), $0) }
        }
    }
}
