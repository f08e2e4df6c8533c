import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// The catalog as of now: the names behind the entity IDs and columns of records
    /// (binary-store.md §6), for building a ``RecordTranscoding``.
    public var currentCatalog: Catalog { rw.withReadLock { catalog } }

    /// Writes a new store file at `path` holding every live record of this store rewritten by
    /// `transcoding` (a schema migration's record rewrite, Formats/migration.md §5), with
    /// `metadata`: the way compaction writes a file (§10 of binary-store.md), pages packed and
    /// indexed afresh, but into a file of its own that this store never opens.
    ///
    /// The new file is complete, synced and its folder synced when this returns; it has no log.
    /// This store is only read (it may be open read-only); saves wait while the export runs.
    ///
    /// - Parameters:
    ///   - progress: told how many live records are rewritten.
    ///   - shouldStop: asked every 1,024 records; `true` stops the export with `CancellationError`.
    /// - Returns: the records written per destination catalog entity ID.
    /// - Throws: ``StoreError`` when this store cannot be read or the new file cannot be written
    ///   (the new file is then removed); ``RecordTranscoding/MissingValue`` for a record that
    ///   lacks a mandatory value; a damaged record as ``StoreError/corrupt(detail:)``.
    public func exportTranscoded(
        to path: String, transcoding: RecordTranscoding, metadata: StoreMetadata, progress: BinaryStoreProgress? = nil,
        shouldStop: (() -> Bool)? = nil
    ) throws -> [Int: Int] {
        commitLock.lock()
        defer { commitLock.unlock() }
        drainGroupCommits()
        let index = try rw.withReadLock { () throws(StoreError) -> ObjectIndex in try loadedIndex() }
        let source = rw.withReadLock { catalog }
        guard path != self.path, path != logPath else {
            throw StoreError.io(detail: "a store cannot be exported onto its own files (\(path))")
        }
        let (file, _, firstWriter, firstPacker) = try startRewrittenFile(at: path, generation: 1)
        var writer = firstWriter
        var packer = firstPacker
        var complete = false
        defer {
            file.close()
            if !complete {
                try? fileSystem.remove(path)
                try? Self.removeExternalData(store: path, fileSystem: fileSystem)
            }
        }
        var newIndex = ObjectIndex()
        var counter = ProgressCounter(total: index.liveCount, report: progress)
        var counts: [Int: Int] = [:]
        var record = ByteWriter()
        var transcoder = RecordTranscoder(plan: transcoding, source: source)
        // The external files the exported records name go with them (§15.4).
        let collecting = fileSystem.fileExists(externalDataFolder)
        var referenced = Set<String>()
        try rw.withReadLock { () throws in
            var run = PageRun()
            for (entityID, table) in index.tables.enumerated() {
                // Records of an entity that is not migrated are not even read.
                guard entityID < transcoding.entities.count, transcoding.entities[entityID] != nil else { continue }
                for position in table.keys.indices where table.locations[position] != 0 {
                    counter.step()
                    if counter.done % ProgressCounter.interval == 0, let shouldStop, shouldStop() { throw CancellationError() }
                    let location = table.locations[position]
                    let (bytes, range) = try recordBytes(at: location, run: &run)
                    record.bytes.removeAll(keepingCapacity: true)
                    let written: (entityID: Int, key: Int64)?
                    do {
                        written = try transcoder.transcode(
                            bytes, from: range.lowerBound, to: range.upperBound,
                            isLive: { entityID, key in (index.location(entityID: entityID, key: key) ?? 0) != 0 }, into: &record)
                    } catch let error as BinaryFormatError {
                        throw StoreError.corrupt(detail: "the record of \(source.entities[entityID].name) \(table.keys[position]) at \(RecordLocation(raw: location)): \(error)")
                    }
                    guard let written else { continue }
                    if collecting {
                        for reference in try RecordCodec.externalReferences(in: record.bytes, from: 0, to: record.bytes.count, catalog: transcoding.destination) {
                            referenced.insert(reference.fileName)
                        }
                    }
                    try packer.add(record.bytes[...], entityID: written.entityID, key: written.key, indexed: true, to: &writer)
                    counts[written.entityID, default: 0] += 1
                }
            }
        }
        try packer.finish(to: &writer, into: &newIndex)
        counter.finish()
        // No secondary index: they belong to the old model; the new store builds its own (§7.2).
        let state = try writeIndexAndState(newIndex, catalog: transcoding.destination, metadata: metadata, to: &writer)
        let newRoot = RootSlot(
            generation: 1, dataEnd: state.end, indexDirectoryOffset: state.directory, catalogOffset: state.catalog,
            metadataOffset: state.metadata, logSalt: UInt64.random(in: 1...UInt64.max), objectCount: UInt64(newIndex.liveCount),
            pageBoundsDirectoryOffset: state.pageBoundsDirectory)
        do {
            try Self.copyExternalData(fromStore: self.path, toStore: path, names: referenced, fileSystem: fileSystem)
            try file.write(newRoot.encoded(), at: UInt64(BinaryStoreLayout.rootSlotOffsets[0]))
            try file.sync()
            try fileSystem.syncDirectory(containing: path)
        } catch {
            throw Self.ioError(error)
        }
        complete = true
        return counts
    }
}
