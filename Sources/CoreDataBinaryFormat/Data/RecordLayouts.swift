import CoreDataModel
import CoreDataStorage

/// How a catalog's columns (Formats/binary-store.md §6: an entity's property indexes) map to the
/// slots of property layouts, built once per catalog so that records decode into rows and rows
/// encode into records by slot, never hashing a property name per value.
///
/// With a model, each entity the model names decodes into the model's own layout
/// (`NSEntityDescription.propertyLayout`), extended by any catalog property the model lacks
/// (written by another version of the app), so nothing read is lost. Without a model (the CLI,
/// fuzz targets) each entity decodes into a layout of its catalog names, slot = column.
///
/// Threading: immutable; safe from any thread. Make a new one when the catalog changes.
public final class RecordLayouts: Sendable {
    /// Per catalog entity ID: the layout records decode into and, per column, its slot.
    public struct Entity: Sendable {
        public let layout: PropertyLayout
        /// The slot of each column (catalog property index).
        public let slotOfColumn: [Int]
        /// The column of each slot of ``layout``, -1 for a slot the catalog does not name yet.
        public let columnOfSlot: [Int]
        /// The model's layout of the entity, when there is a model that names it.
        let modelLayout: PropertyLayout?
        /// For ``layout``: the slots with a column, in increasing column order, and the slots
        /// without one, so that an encoder made for one save does not sort them again.
        let slotsInColumnOrder: [(slot: Int, column: Int)]
        let slotsWithoutColumn: [Int]

        init(layout: PropertyLayout, slotOfColumn: [Int], columnOfSlot: [Int], modelLayout: PropertyLayout?) {
            self.layout = layout
            self.slotOfColumn = slotOfColumn
            self.columnOfSlot = columnOfSlot
            self.modelLayout = modelLayout
            (slotsInColumnOrder, slotsWithoutColumn) = Self.columnOrder(columnOfSlot)
        }

        /// Splits the slots of a layout, given each slot's column (-1 for none), into those
        /// with a column in increasing column order and those without.
        static func columnOrder(_ columnOfSlot: [Int]) -> (ordered: [(slot: Int, column: Int)], unmapped: [Int]) {
            var ordered: [(slot: Int, column: Int)] = []
            var unmapped: [Int] = []
            for (slot, column) in columnOfSlot.enumerated() {
                if column >= 0 { ordered.append((slot, column)) } else { unmapped.append(slot) }
            }
            ordered.sort { $0.column < $1.column }
            return (ordered, unmapped)
        }
    }

    /// The catalog the tables were built for.
    public let catalog: Catalog
    /// By catalog entity ID.
    public let entities: [Entity]

    /// - Parameter models: the model's layouts by entity name; empty when there is no model.
    public init(catalog: Catalog, models: [String: PropertyLayout] = [:]) {
        self.catalog = catalog
        self.entities = catalog.entities.map { entity in
            let columns = entity.properties
            let model = models[entity.name]
            let layout: PropertyLayout
            if let model {
                let extra = columns.filter { model.slot(of: $0) == nil }
                layout = extra.isEmpty ? model : PropertyLayout(entityName: entity.name, names: model.names + extra, base: model)
            } else {
                layout = PropertyLayout(entityName: entity.name, names: columns)
            }
            return Entity(
                layout: layout,
                slotOfColumn: columns.map { layout.slot(of: $0) ?? -1 },
                columnOfSlot: layout.names.map { entity.index(of: $0) ?? -1 },
                modelLayout: model)
        }
    }

    /// The model layouts of this table, to build the next table after a catalog change.
    public var modelLayouts: [String: PropertyLayout] {
        var result: [String: PropertyLayout] = [:]
        for entity in entities { if let model = entity.modelLayout { result[model.entityName] = model } }
        return result
    }

    /// The column of each slot of `layout` for catalog entity `entityID`, -1 where the catalog has
    /// no such property. The model's layout (and a layout extending it) is answered from the
    /// table; any other layout by name, O(slots).
    public func columns(of layout: PropertyLayout, entityID: Int) -> [Int] {
        let entity = entities[entityID]
        // A layout's base names its first slots, so the base's columns are a prefix.
        if layout === entity.layout || layout === entity.layout.base { return entity.columnOfSlot }
        let catalogEntity = catalog.entities[entityID]
        return layout.names.map { catalogEntity.index(of: $0) ?? -1 }
    }
}
