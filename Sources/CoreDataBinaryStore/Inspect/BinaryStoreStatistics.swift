import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// What an open binary store holds and how much of its files is reclaimable: the numbers behind
/// the CLI's `info` (Formats/binary-store.md §2–§10, Formats/wal.md §2–§7).
public struct BinaryStoreStatistics: Sendable, Equatable {
    /// §2: the data file's format version.
    public var formatVersion: UInt32
    /// §2: the target decoded size of a data page.
    public var pageSize: UInt32
    /// §2: the store's UUID (also in its metadata and its log header).
    public var storeUUID: UUID
    /// §2: when the store was created, in milliseconds since 1970.
    public var createdMilliseconds: UInt64
    /// §3: the generation of the root in use: 1 for a new store, one more per checkpoint or
    /// compaction. The last checkpoint is the one that wrote this root.
    public var checkpointGeneration: UInt64
    /// §3: where the pages of the last checkpoint end; bytes past it belong to no checkpoint.
    public var dataEnd: UInt64
    /// The data file's size: ``dataEnd`` plus pages of a checkpoint that never published.
    public var dataFileBytes: UInt64
    /// Live objects per entity name (entities with none are left out).
    public var objectsByEntity: [String: Int]
    /// The bytes of the current record of every live object.
    public var liveRecordBytes: Int
    /// The bytes of every other record in the data pages and the log's committed saves:
    /// superseded versions and tombstones, which ``BinaryStore/compact(progress:)`` drops.
    public var deadRecordBytes: Int
    /// Pages by kind name (``PageKind/description``), as stored before the data end.
    public var pagesByKind: [String: Int]
    /// The stored (compressed) bytes of the data pages.
    public var storedDataPageBytes: Int
    /// The decoded bytes of the data pages.
    public var decodedDataPageBytes: Int
    /// The log file's size; 0 when there is none.
    public var logFileBytes: UInt64
    /// Where the last committed save in the log ends (wal.md §7).
    public var logEnd: UInt64
    /// Saves in the log since the last checkpoint.
    public var logSaves: Int
    /// The frames of those saves.
    public var logFrames: Int
    /// Log bytes after the last committed save: a torn tail or frames of an earlier checkpoint.
    public var droppedLogBytes: UInt64
    /// §15: files in the external-data folder (finished values, whether or not a record still
    /// names them; `verify` tells them apart).
    public var externalFiles = 0
    /// §15: the bytes of those files.
    public var externalBytes: UInt64 = 0
    /// §7.2: the secondary indexes the last checkpoint persisted, as `Entity.attribute`, with
    /// their entry counts (empty below format version 3 and before an index was first used).
    public var secondaryIndexes: [String: Int] = [:]
}

extension BinaryStore {
    /// Counts what the store holds and what a compaction would reclaim.
    ///
    /// Reads every data page and the whole log once (O(file size)). The numbers are exact for a
    /// store no one saves to meanwhile (the CLI opens read-only, which keeps writers out); with
    /// concurrent saves the log counts may include a save published during the call.
    /// - Throws: ``StoreError/corrupt(detail:)`` naming a damaged page or log entry,
    ///   ``StoreError/io(detail:)`` when a file cannot be read.
    public func statistics() throws(StoreError) -> BinaryStoreStatistics {
        try rw.withReadLock { () throws(StoreError) -> BinaryStoreStatistics in
            guard !isClosed else { throw .closed }
            var live = 0
            var counts: [String: Int] = [:]
            for (entityID, table) in try loadedIndex().tables.enumerated() where entityID < catalog.entities.count {
                var failure: StoreError?
                table.forEachLive { _, location in
                    guard failure == nil else { return }
                    do throws(StoreError) { live += try recordBytes(at: location).1.count } catch { failure = error }
                }
                if let failure { throw failure }
                if table.liveCount > 0 { counts[catalog.entities[entityID].name] = table.liveCount }
            }
            var kinds: [String: Int] = [:]
            var pageRecordBytes = 0
            var stored = 0
            var decoded = 0
            for page in try walkPages() {
                kinds[page.header.kind.description, default: 0] += 1
                guard page.header.kind == .data else { continue }
                let dataPage = try Self.readDataPage(dataFile, at: page.offset, dataEnd: root.dataEnd)
                stored += page.header.storedLength
                decoded += page.header.decodedLength
                pageRecordBytes += dataPage.payload.count - 4 - 4 * dataPage.count
            }
            let log = try replayLog()
            let logRecordBytes = log.replay?.transactions.reduce(0) { $0 + $1.records.reduce(0) { $0 + $1.length } } ?? 0
            let dataSize: UInt64
            do throws(StoreIOError) { dataSize = try dataFile.size() } catch { throw Self.ioError(error) }
            var statistics = BinaryStoreStatistics(
                formatVersion: header.formatVersion, pageSize: header.pageSize, storeUUID: header.storeUUID,
                createdMilliseconds: header.created, checkpointGeneration: root.generation, dataEnd: root.dataEnd,
                dataFileBytes: dataSize, objectsByEntity: counts, liveRecordBytes: live,
                deadRecordBytes: max(0, pageRecordBytes + logRecordBytes - live), pagesByKind: kinds,
                storedDataPageBytes: stored, decodedDataPageBytes: decoded, logFileBytes: log.size,
                logEnd: log.replay?.end ?? UInt64(LogLayout.firstFrameOffset),
                logSaves: log.replay?.transactions.count ?? 0,
                logFrames: log.replay?.transactions.reduce(0) { $0 + $1.frames } ?? 0,
                droppedLogBytes: log.replay?.droppedBytes ?? 0)
            for listing in secondaryLock.withLock({ persistedSecondary.values }) {
                let id = SecondaryIndexID(listing)
                guard id.entityID < catalog.entities.count, id.propertyIndex < catalog.entities[id.entityID].properties.count else { continue }
                let entity = catalog.entities[id.entityID]
                statistics.secondaryIndexes["\(entity.name).\(entity.properties[id.propertyIndex])"] = Int(clamping: listing.entryCount)
            }
            for name in Self.externalFiles(store: path, fileSystem: fileSystem) where ExternalDataLayout.isValueFileName(name) {
                guard let file = try? fileSystem.open(externalDataFolder + "/" + name, create: false, readOnly: true) else { continue }
                statistics.externalFiles += 1
                statistics.externalBytes += (try? file.size()) ?? 0
                file.close()
            }
            return statistics
        }
    }

    /// The header of every page before the data end, in file order (Formats/binary-store.md §4).
    /// Caller holds `rw`.
    func walkPages() throws(StoreError) -> [(offset: UInt64, header: PageHeader)] {
        var pages: [(offset: UInt64, header: PageHeader)] = []
        var offset = UInt64(BinaryStoreLayout.firstPageOffset)
        while offset < root.dataEnd {
            let header: PageHeader
            do {
                header = try PageHeader(decoding: try dataFile.read(at: offset, count: BinaryStoreLayout.pageHeaderSize), at: offset)
            } catch let error as BinaryFormatError {
                throw Self.corrupt(error)
            } catch let error as StoreIOError {
                throw Self.ioError(error)
            } catch {
                throw .io(detail: "\(error)")
            }
            guard offset + UInt64(header.totalLength) <= root.dataEnd else {
                throw .corrupt(detail: "data file offset \(offset) (\(header.kind)): the page runs past the end of the data (\(root.dataEnd))")
            }
            pages.append((offset, header))
            offset += UInt64(header.totalLength)
        }
        return pages
    }

    /// Replays the log from the disk again, against the catalog of the last checkpoint, for the
    /// inspection calls (open keeps only the result). `replay` is nil when there is no log or it
    /// is cut inside its header. Caller holds `rw`.
    func replayLog() throws(StoreError) -> (size: UInt64, replay: LogReplay?, checkpointCatalog: Catalog) {
        let (_, catalogPayload) = try Self.readPage(dataFile, at: root.catalogOffset, dataEnd: root.dataEnd)
        let checkpointCatalog: Catalog
        do { checkpointCatalog = try Catalog(decoding: catalogPayload) } catch {
            throw .corrupt(detail: error.within("data file offset \(root.catalogOffset) (catalog page)").description)
        }
        guard let logFile else { return (0, nil, checkpointCatalog) }
        do {
            let size = try logFile.size()
            guard size >= UInt64(LogLayout.headerSize) else { return (size, nil, checkpointCatalog) }
            let replay = try LogReplay.run(logFile, size: size, salt: root.logSalt, catalog: checkpointCatalog)
            return (size, replay, checkpointCatalog)
        } catch {
            throw Self.storeError(error)
        }
    }
}
