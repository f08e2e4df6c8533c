import CoreData
import CoreDataStorage
import CoreDataXMLFormat
import Foundation

/// An XML store as the commands read it: the document the format target's reader decodes, and
/// the rows its schema maps the objects to, with the app's model or the one the file describes.
struct XMLStoreContents {
    var document: XMLStoreDocument
    var fileBytes: UInt64
    /// The app's model (`--model`), or the one the file describes.
    var model: NSManagedObjectModel
    var rows: [StoreRow]

    /// Object IDs by entity name, in primary-key order.
    var objectIDsByEntity: [String: [StoreObjectID]] {
        var ids: [String: [StoreObjectID]] = [:]
        for row in rows { ids[row.objectID.entityName, default: []].append(row.objectID) }
        return ids.mapValues { $0.sorted { $0.primaryKey < $1.primaryKey } }
    }

    /// The store metadata: the property list with `NSStoreUUID` and `NSStoreType` (§3, §4).
    var metadata: [String: Any] { XMLStoreSchema.storeMetadata(of: document.info).values }
}

/// Reads XML stores for the commands. An XML store is rewritten whole and renamed into place by
/// every save (Formats/xml-store.md §11), so the file opened here is one complete save; nothing is
/// locked and nothing is written.
enum XMLStoreAccess {
    /// Decodes the file at `path` in chunks (§12): the document and the file's size, or the
    /// reader's error naming the line.
    ///
    /// - Throws: ``ExitStatus/unreadable`` when the file cannot be read.
    static func decode(_ path: String) throws(CLIError) -> Result<(XMLStoreDocument, UInt64), XMLStoreError> {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError(.unreadable, "\(path) cannot be read (permission denied?)") }
        defer { try? handle.close() }
        let reader = XMLStoreReader()
        var total: UInt64 = 0
        while true {
            let chunk: Data
            do { chunk = try handle.read(upToCount: XMLStoreLayout.readChunkSize) ?? Data() } catch {
                throw CLIError(.unreadable, "\(path) cannot be read: \(error.localizedDescription)")
            }
            if chunk.isEmpty { break }
            total += UInt64(chunk.count)
            do { try reader.feed([UInt8](chunk)) } catch { return .failure(error) }
        }
        do { return .success((try reader.finish(), total)) } catch { return .failure(error) }
    }

    /// Reads the store and maps its objects to rows: with `model` after checking the store was
    /// saved with it (status 6 otherwise), else with the model the file describes.
    ///
    /// - Throws: ``ExitStatus/damaged`` with the first problem and its line (`verify` lists all).
    static func read(_ path: String, model: NSManagedObjectModel? = nil, modelPath: String? = nil) throws(CLIError) -> XMLStoreContents {
        let (document, bytes): (XMLStoreDocument, UInt64)
        switch try decode(path) {
        case .success(let decoded): (document, bytes) = decoded
        case .failure(let error): throw damaged(path, error)
        }
        var contents = XMLStoreContents(document: document, fileBytes: bytes, model: NSManagedObjectModel(), rows: [])
        if let model, let modelPath {
            try ModelLoading.requireMatch(model, metadata: contents.metadata, modelPath: modelPath, storePath: path)
            contents.model = model
        } else {
            let described = XMLStoreDescribedModel.describe(document)
            if let first = described.problems.first { throw damaged(path, first, more: described.problems.count - 1) }
            contents.model = described.model
        }
        do {
            let schema = try XMLStoreSchema(model: contents.model)
            contents.rows = try schema.rows(from: document)
        } catch {
            if model != nil, error.line == 0 { throw CLIError(.badModel, "the model \(modelPath ?? "") cannot read an XML store: \(error.message)") }
            throw damaged(path, error)
        }
        return contents
    }

    /// Every problem of the store, each with its line, as `verify` lists them: the reader stops
    /// at the first malformed byte; past that, every object is mapped with `model` (after
    /// checking the store was saved with it) or else with the model the file describes.
    static func problems(_ path: String, model: NSManagedObjectModel? = nil, modelPath: String? = nil) throws(CLIError) -> (problems: [XMLStoreError], contents: XMLStoreContents?) {
        let (document, bytes): (XMLStoreDocument, UInt64)
        switch try decode(path) {
        case .success(let decoded): (document, bytes) = decoded
        case .failure(let error): return ([error], nil)
        }
        var contents = XMLStoreContents(document: document, fileBytes: bytes, model: NSManagedObjectModel(), rows: [])
        var problems: [XMLStoreError] = []
        if UUID(uuidString: document.info.uuid) == nil {
            problems.append(XMLStoreError(line: 0, "<UUID> '\(document.info.uuid.prefix(80))' is not a UUID"))
        }
        if let model, let modelPath {
            try ModelLoading.requireMatch(model, metadata: contents.metadata, modelPath: modelPath, storePath: path)
            contents.model = model
        } else {
            let described = XMLStoreDescribedModel.describe(document)
            problems += described.problems
            contents.model = described.model
        }
        let reported = Set(problems.map(\.line))
        do {
            let schema = try XMLStoreSchema(model: contents.model)
            // A property written two ways is reported once, by the described model.
            problems += schema.problems(in: document).filter { !reported.contains($0.line) }
            if problems.isEmpty { contents.rows = try schema.rows(from: document) }
        } catch {
            if model != nil { throw CLIError(.badModel, "the model \(modelPath ?? "") cannot read an XML store: \(error.message)") }
            problems.append(error)
        }
        problems.sort { $0.line < $1.line }
        return (problems, contents)
    }

    private static func damaged(_ path: String, _ error: XMLStoreError, more: Int = 0) -> CLIError {
        let tail = more > 0 ? " (and \(more) more problems; run coredata verify)" : " (run coredata verify)"
        return CLIError(.damaged, "\(path) is damaged: \(error)\(tail)")
    }
}
