import CoreDataBinaryFormat
import CoreDataModel
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Log blocks are cached under their block number with the log bit set, beside data pages
    /// cached under their offsets.
    static let logBlockSize = 65_536

    // MARK: Reading records (caller holds `rw`, shared or exclusive)

    /// The decoded data page at `offset`, from the cache or the file.
    func dataPage(at offset: UInt64) throws(StoreError) -> DataPage {
        if case .dataPage(let page)? = cache.get(offset) { return page }
        let page = try Self.readDataPage(dataFile, at: offset, dataEnd: root.dataEnd)
        cache.put(offset, .dataPage(page))
        return page
    }

    /// The bytes a page read asks for first: the header and what a compressed data page of the
    /// target size usually takes. A longer page reads its tail with a second call.
    static let pageReadAhead = BinaryStoreLayout.pageHeaderSize + BinaryStoreLayout.targetPageSize * 3 / 4

    /// The read-ahead of an index page of a store of `objectCount` objects: the decoded size of a
    /// full page a checkpoint writes for that many (Formats/binary-store.md §7), which a stored
    /// page never exceeds (LZ4 is kept only when smaller). One read per page, and no more than
    /// a page's worth: a fixed 32 KiB copied 128 MiB to load the index of 1M objects kept in
    /// 4 KiB pages.
    static func indexPageReadAhead(objectCount: UInt64) -> Int {
        let entries = BinaryStoreLayout.indexEntriesPerWrittenPage(total: Int(clamping: objectCount))
        return BinaryStoreLayout.pageHeaderSize + 4 + BinaryStoreLayout.indexEntryBytes * entries
    }

    /// The read-ahead of the index directory of a store of `objectCount` objects: the decoded
    /// size of a directory listing the pages a checkpoint writes for that many (§7), so open
    /// reads it in one call (at 1M objects it lists about 4,096 pages, 32 KiB).
    static func indexDirectoryReadAhead(objectCount: UInt64) -> Int {
        let total = Int(clamping: objectCount)
        let perPage = BinaryStoreLayout.indexEntriesPerWrittenPage(total: total)
        let pages = total / perPage + 1
        return BinaryStoreLayout.pageHeaderSize + 12 + 8 * min(pages, 4 * BinaryStoreLayout.indexPagesTarget)
    }

    /// Reads and checks one page of any kind; returns its header and decoded payload.
    ///
    /// - Parameter readAhead: the bytes to ask for in the first read.
    static func readPage(_ file: any StoreFile, at offset: UInt64, dataEnd: UInt64, readAhead: Int = pageReadAhead) throws(StoreError) -> (PageHeader, [UInt8]) {
        guard offset >= UInt64(BinaryStoreLayout.firstPageOffset), offset < dataEnd else {
            throw .corrupt(detail: "data file offset \(offset): a page reference points outside the pages (they end at \(dataEnd))")
        }
        do {
            // One read for most pages (a page cannot run past the data end, so neither does the read).
            let guess = UInt64(max(BinaryStoreLayout.pageHeaderSize, readAhead))
            var page = try file.read(at: offset, count: Int(min(guess, dataEnd - offset)))
            guard page.count >= BinaryStoreLayout.pageHeaderSize else {
                throw BinaryFormatError("data file offset \(offset)", "the page header is cut short")
            }
            let header = try PageHeader(decoding: page, at: offset)
            guard offset + UInt64(header.totalLength) <= dataEnd else {
                throw BinaryFormatError("data file offset \(offset) (\(header.kind))", "the page runs past the end of the data (\(dataEnd))")
            }
            if page.count < header.totalLength {
                page.append(contentsOf: try file.read(at: offset + UInt64(page.count), count: header.totalLength - page.count))
            } else if page.count > header.totalLength {
                page.removeLast(page.count - header.totalLength)
            }
            return (header, try PageCodec.decodePayload(header, page: page, at: offset))
        } catch let error as StoreIOError {
            throw ioError(error)
        } catch let error as BinaryFormatError {
            throw corrupt(error)
        } catch {
            throw .io(detail: "\(error)")
        }
    }

    static func readDataPage(_ file: any StoreFile, at offset: UInt64, dataEnd: UInt64) throws(StoreError) -> DataPage {
        let (header, payload) = try readPage(file, at: offset, dataEnd: dataEnd)
        guard header.kind == .data else {
            throw .corrupt(detail: "data file offset \(offset): expected a data page, found a \(header.kind)")
        }
        do { return try DataPage(payload: payload, pageOffset: offset) } catch { throw corrupt(error) }
    }

    /// Where a record lives, for error messages (built only when one is needed).
    static func describe(_ raw: UInt64) -> String {
        switch RecordLocation(raw: raw) {
        case .page(let offset, let slot): return "data file offset \(offset), slot \(slot)"
        case .log(let offset): return "log offset \(offset)"
        }
    }

    /// The page (or log block) a walk in location order read last, so that a run of records in
    /// one page looks the page up once.
    struct PageRun {
        var offset = UInt64.max
        var page: DataPage?
        var logBlock = UInt64.max
        var logBytes: [UInt8] = []
    }

    /// ``recordBytes(at:)`` for a walk in location order: a record in the same page (or log
    /// block) as the one before it reuses that page, without a cache lookup. Caller holds `rw`.
    func recordBytes(at location: UInt64, run: inout PageRun) throws(StoreError) -> ([UInt8], Range<Int>) {
        switch RecordLocation(raw: location) {
        case .page(let pageOffset, let slot):
            if pageOffset != run.offset {
                run.page = try dataPage(at: pageOffset)
                run.offset = pageOffset
            }
            guard let page = run.page, let found = page.range(of: slot) else {
                throw .corrupt(detail: "data file offset \(pageOffset): the index points to slot \(slot) of a page with \(run.page?.count ?? 0) records")
            }
            return (page.payload, found)
        case .log(let offset):
            let block = offset / UInt64(Self.logBlockSize)
            if block != run.logBlock {
                run.logBytes = try logBlock(containing: offset).0
                run.logBlock = block
            }
            if let body = LogEntryCodec.recordBody(in: run.logBytes, entryAt: Int(offset % UInt64(Self.logBlockSize))) {
                return (run.logBytes, body)
            }
            // An entry that crosses the block's end, or a damaged one, which this reports.
            return try recordBytes(at: location)
        }
    }

    /// The bytes of the record at `raw` and the range of the record in them.
    func recordBytes(at raw: UInt64) throws(StoreError) -> ([UInt8], Range<Int>) {
        switch RecordLocation(raw: raw) {
        case .page(let offset, let slot):
            let page = try dataPage(at: offset)
            guard let range = page.range(of: slot) else {
                throw .corrupt(detail: "data file offset \(offset): the index points to slot \(slot) of a page with \(page.count) records")
            }
            return (page.payload, range)
        case .log(let offset):
            // Most records lie inside one cached block: read them there, with no copy.
            let (block, within) = try logBlock(containing: offset)
            if let body = LogEntryCodec.recordBody(in: block, entryAt: within) { return (block, body) }
            let head = try logBytes(at: offset, count: LogLayout.entryHeaderSize)
            var reader = ByteReader(head)
            guard let _ = try? reader.uint8(), let length = try? reader.uint32(), Int(length) <= LogLayout.maximumEntrySize else {
                throw .corrupt(detail: "log offset \(offset): no record entry here")
            }
            let bytes = try logBytes(at: offset, count: LogLayout.entryHeaderSize + Int(length))
            do {
                let (_, body) = try LogEntryCodec.body(ofEntry: bytes, at: offset)
                return (bytes, body)
            } catch {
                throw Self.corrupt(error)
            }
        }
    }

    func recordHeader(at location: UInt64) throws(StoreError) -> RecordHeader {
        let (bytes, range) = try recordBytes(at: location)
        do { return try RecordCodec.decodeHeader(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog) } catch {
            throw .corrupt(detail: error.within(Self.describe(location)).description)
        }
    }

    /// The row at `location`; `nil` for a tombstone.
    func readRow(at location: UInt64) throws(StoreError) -> StoreRow? {
        let (bytes, range) = try recordBytes(at: location)
        do { return try RecordCodec.decode(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, layouts: layouts, external: externalLoader).1 } catch {
            throw .corrupt(detail: error.within(Self.describe(location)).description)
        }
    }

    /// The cached 64 KiB block of the log that holds `offset` (read and cached on a miss), and
    /// the offset's position in it. A cached block holds only published frames: the bytes after
    /// them change when the next save is written there.
    func logBlock(containing offset: UInt64) throws(StoreError) -> ([UInt8], Int) {
        guard let logFile else { throw .corrupt(detail: "log offset \(offset): the store has no log") }
        let blockSize = UInt64(Self.logBlockSize)
        let block = offset / blockSize
        let within = Int(offset % blockSize)
        let key = block | RecordLocation.logBit
        if case .logBlock(let bytes)? = cache.get(key), bytes.count > within { return (bytes, within) }
        do {
            var bytes = try logFile.read(at: block * blockSize, count: Self.logBlockSize)
            let published = publishedLogEnd > block * blockSize ? publishedLogEnd - block * blockSize : 0
            if UInt64(bytes.count) > published { bytes.removeSubrange(Int(published)...) }
            cache.put(key, .logBlock(bytes))
            return (bytes, within)
        } catch {
            throw Self.ioError(error)
        }
    }

    /// `count` bytes of the log at `offset`, through the cached blocks when they lie in one.
    func logBytes(at offset: UInt64, count: Int) throws(StoreError) -> [UInt8] {
        guard let logFile else { throw .corrupt(detail: "log offset \(offset): the store has no log") }
        let within = Int(offset % UInt64(Self.logBlockSize))
        if within + count <= Self.logBlockSize {
            let (bytes, start) = try logBlock(containing: offset)
            guard bytes.count >= start + count else {
                throw .corrupt(detail: "log offset \(offset): the log ends before the record")
            }
            return Array(bytes[start..<(start + count)])
        }
        do {
            let bytes = try logFile.read(at: offset, count: count)
            guard bytes.count == count else { throw StoreError.corrupt(detail: "log offset \(offset): the log ends before the record") }
            return bytes
        } catch let error as StoreIOError {
            throw Self.ioError(error)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .io(detail: "\(error)")
        }
    }

    // MARK: Fetching

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try sharedRead { () throws(StoreError) -> StoreRow? in try rowLocked(objectID) }
    }

    /// Decodes the object's record where it lies (a cached data page or log block) straight to
    /// `visit`, no row built; external binary data is read from its file.
    ///
    /// Threading: safe from any thread; `visit` runs under the store's read lock and must not
    /// call the store. Complexity: one index search; one page read when the page is not cached.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` naming the record's place for damage or an
    ///   unreadable external file, ``StoreError/closed`` after ``close()``.
    public func visitValues(of objectID: StoreObjectID, _ visit: (_ slot: Int, _ value: consuming StoreValue) -> Void) throws(StoreError) -> (version: Int64, layout: PropertyLayout)? {
        try sharedRead { () throws(StoreError) -> (version: Int64, layout: PropertyLayout)? in
            guard let entityID = catalog.entityID(of: objectID.entity),
                  let location = try location(entityID: entityID, key: objectID.primaryKey) else { return nil }
            let (bytes, range) = try recordBytes(at: location)
            do throws(BinaryFormatError) {
                let (head, layout) = try RecordCodec.visit(
                    bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, layouts: layouts, external: externalLoader, visit
                )
                return layout.map { (head.version, $0) }
            } catch {
                throw .corrupt(detail: error.within(Self.describe(location)).description)
            }
        }
    }

    /// Reads many rows under one read lock, in the order of their places in the files (so the
    /// records of one page are decoded from one cached copy of it, and pages are read in order).
    ///
    /// Complexity: one index search per ID, one page read per page not in the cache.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try sharedRead { () throws(StoreError) -> [StoreRow] in
            var located: [(location: UInt64, position: Int)] = []
            located.reserveCapacity(objectIDs.count)
            for (position, id) in objectIDs.enumerated() {
                guard let entityID = catalog.entityID(of: id.entity),
                      let location = try location(entityID: entityID, key: id.primaryKey) else { continue }
                located.append((location, position))
            }
            located.sort { $0.location < $1.location }
            var rows: [StoreRow] = []
            rows.reserveCapacity(located.count)
            for entry in located {
                if let row = try readRow(at: entry.location) { rows.append(row) }
            }
            return rows
        }
    }

    /// The IDs of the live objects of `entityIDs`, entity by entity, keys ascending: read from
    /// the index alone, no record decoded.
    static func liveIDs(in index: ObjectIndex, entityIDs: [Int], catalog: Catalog, offset: Int, limit: Int) -> [StoreObjectID] {
        var ids: [StoreObjectID] = []
        var skip = max(0, offset)
        let most = limit > 0 ? limit : Int.max
        for entityID in entityIDs where entityID < index.tables.count && entityID < catalog.entities.count {
            let entity = catalog.entities[entityID].number
            let table = index.tables[entityID]
            ids.reserveCapacity(ids.count + min(most - ids.count, table.liveCount))
            for position in table.keys.indices where table.locations[position] != 0 {
                if skip > 0 { skip -= 1; continue }
                guard ids.count < most else { return ids }
                ids.append(StoreObjectID(entity: entity, primaryKey: table.keys[position]))
            }
        }
        return ids
    }

    func rowLocked(_ id: StoreObjectID) throws(StoreError) -> StoreRow? {
        guard let entityID = catalog.entityID(of: id.entity),
              let location = try location(entityID: entityID, key: id.primaryKey) else { return nil }
        return try readRow(at: location)
    }

    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        switch try answer(request, inRuns: false) {
        // Asked for one run, a scan gives one: no copy.
        case .rows(let runs): return .rows(runs.count == 1 ? runs[0] : Array(runs.joined()))
        case .other(let result): return result
        }
    }

    /// A scan of rows in key order answers in runs of ``BinaryStore/rowRunLength`` rows.
    public func executeInRuns(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchRuns {
        try answer(request, inRuns: true)
    }

    private func answer(_ request: StoreFetchRequest, inRuns: Bool) throws(StoreError) -> StoreFetchRuns {
        try sharedRead { () throws(StoreError) -> StoreFetchRuns in
            let entityIDs = request.entityNames.compactMap { catalog.entityID(of: $0) }
            let index = try loadedIndex()
            if request.predicate == nil, request.sortDescriptors.isEmpty {
                switch request.resultType {
                case .count:
                    let total = entityIDs.reduce(0) { $0 + index.liveCount(entityID: $1) }
                    return .other(.count(max(0, min(total - max(0, request.offset), request.limit > 0 ? request.limit : Int.max))))
                case .objectIDs:
                    return .other(.objectIDs(Self.liveIDs(in: index, entityIDs: entityIDs, catalog: catalog, offset: request.offset, limit: request.limit)))
                case .rows:
                    break
                }
            }
            if let compiled = CompiledFetch.compile(request) {
                return try scan(request, compiled: compiled, entityIDs: entityIDs, inRuns: inRuns)
            }
            let rows = try matching(request, entityIDs: entityIDs)
            switch request.resultType {
            case .count: return .other(.count(rows.count))
            case .objectIDs: return .other(.objectIDs(rows.map(\.objectID)))
            case .rows: return .rows([rows])
            }
        }
    }

    /// Reads every row of the fetched entities and runs the reference query over them.
    /// Caller holds `rw`.
    func matching(_ request: StoreFetchRequest, entityIDs: [Int]) throws(StoreError) -> [StoreRow] {
        var rows: [StoreRow] = []
        let index = try loadedIndex()
        for entityID in entityIDs where entityID < index.tables.count {
            let table = index.tables[entityID]
            rows.reserveCapacity(rows.count + table.liveCount)
            for position in table.keys.indices where table.locations[position] != 0 {
                if let row = try readRow(at: table.locations[position]) { rows.append(row) }
            }
        }
        var failure: StoreError?
        let result = StoreQuery.run(request, candidates: rows, resolve: { [self] id in
            do throws(StoreError) { return try rowLocked(id) } catch {
                if failure == nil { failure = error }
                return nil
            }
        }, entities: entities)
        if let failure { throw failure }
        return result
    }

    // MARK: Batch operations

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try checkWritable()
        var ids: [StoreObjectID] = []
        _ = try write(draining: true) { () throws(StoreError) -> StoreChangeSet? in
            let rows = try matchingRows(request)
            guard !rows.isEmpty else { return nil }
            ids = rows.map(\.objectID)
            var changes = StoreChangeSet(deleted: rows.map { ($0.objectID, $0.version) })
            changes.history = request.history
            return changes
        }
        return ids
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try checkWritable()
        var ids: [StoreObjectID] = []
        _ = try write(draining: true) { () throws(StoreError) -> StoreChangeSet? in
            let rows = try matchingRows(request)
            guard !rows.isEmpty else { return nil }
            ids = rows.map(\.objectID)
            let updated = rows.map { row -> StoreRow in
                var next = row
                next.values.merge(values) { _, new in new }
                return next
            }
            var changes = StoreChangeSet(updated: updated)
            if historyRecorder != nil {
                var context = request.history ?? StoreHistoryContext()
                let names = values.keys.sorted()
                for row in rows { context.updatedProperties[row.objectID] = names }
                changes.history = context
            }
            return changes
        }
        return ids
    }

    /// The rows a batch request changes, read under the write lock (so they are the latest).
    private func matchingRows(_ request: StoreFetchRequest) throws(StoreError) -> [StoreRow] {
        var rowsRequest = request
        rowsRequest.resultType = .rows
        guard case .rows(let rows) = try execute(rowsRequest) else { preconditionFailure("a rows fetch returned something else") }
        return rows
    }
}
