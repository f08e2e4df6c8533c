import CoreDataModel
import CoreDataStorage
import Foundation

/// The metadata page payload and the log's metadata entry (Formats/binary-store.md §8): the
/// metadata dictionary as a binary property list.
public enum MetadataCodec {
    /// - Throws: ``BinaryFormatError`` when a value is not a property-list type.
    public static func encode(_ metadata: StoreMetadata) throws(BinaryFormatError) -> [UInt8] {
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: metadata.values, format: .binary, options: 0)
            return [UInt8](data)
        } catch {
            throw BinaryFormatError("metadata", "a value is not a property-list type: \(error.localizedDescription)")
        }
    }

    public static func decode(_ bytes: [UInt8], location: String) throws(BinaryFormatError) -> StoreMetadata {
        let plist: Any
        do {
            plist = try PropertyListBytes.decode(Data(bytes))
        } catch {
            throw BinaryFormatError(location, "the metadata is not a property list (\(error.message))")
        }
        guard let values = plist as? [String: Any] else {
            throw BinaryFormatError(location, "the metadata is not a dictionary")
        }
        return StoreMetadata(values)
    }
}
