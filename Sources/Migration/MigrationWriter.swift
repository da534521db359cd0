import ObjectModel
import ObjectStore

/// Writes migrated objects into the new store: values and its own to-one keys with the row,
/// every other link where the target layout keeps it (see ``StoreLoader/link(_:_:to:order:)``).
package final class MigrationWriter {
  let loader: StoreLoader
  let model: ObjectModel
  let layout: StoreLayout

  /// What writing an object of one entity needs, worked out once.
  private struct Shape {
    /// Relationships by name, with their inverse and, for a to-one whose inverse is ordered,
    /// the order-key column.
    var relationships: [String: (RelationshipDescription, RelationshipDescription?, String?)] = [:]
    /// The column of each attribute.
    var columns: [String: String] = [:]
  }
  private var shapes: [String: Shape] = [:]

  package init(loader: StoreLoader) throws(MigrationError) {
    guard let layout = loader.layout else {
      throw MigrationError(.store, "the new store was not prepared (\(loader.path))")
    }
    self.loader = loader
    self.layout = layout
    self.model = layout.model
  }

  private func shape(_ entity: String) -> Shape {
    if let known = shapes[entity] { return known }
    var shape = Shape()
    let table = layout.table(for: entity)
    for relationship in model.relationships(of: entity) {
      let inverse = model.inverse(of: relationship)
      let orderColumn =
        relationship.isToMany ? nil : layout.orderColumn(ofToOne: relationship, in: entity)
      shape.relationships[relationship.name] = (relationship, inverse, orderColumn)
    }
    for columns in table.map({ Array($0.attributes.values) }) ?? [] {
      for column in columns { shape.columns[column.attribute.name] = column.column }
    }
    shapes[entity] = shape
    return shape
  }

  package func write(_ object: MigratingObject) throws(MigrationError) {
    var record = ObjectRecord(
      entity: object.entity, primaryKey: object.primaryKey, version: object.version,
      attributes: object.attributes)
    let shape = shape(object.entity)
    var loose: [(String, MigrationLink)] = []
    for (name, links) in object.relationships.sorted(by: { $0.key < $1.key }) {
      guard let (relationship, inverse, orderColumn) = shape.relationships[name] else {
        throw MigrationError(
          .refused,
          "\(object.reference) has links in \(name), which \(object.entity) does not have in \(versionName(of: model))"
        )
      }
      guard !relationship.isToMany, let link = links.first else {
        for link in links { loose.append((name, link)) }
        continue
      }
      record.toOne[name] = link.target
      if let orderColumn {
        record.extraColumns[orderColumn] = .integer(link.order ?? object.primaryKey)
      }
      if let inverse, !inverse.isToMany, !link.isMirrored {
        // The other end keeps a key too, and nothing else will set it.
        do {
          try loader.link(link.target, inverse.name, to: object.reference)
        } catch { throw MigrationError(wrapping: error) }
      }
    }
    for (name, value) in object.storedAsIs {
      guard let column = shape.columns[name] else { continue }
      record.extraColumns[column] = value
      record.attributes[name] = nil
    }
    do {
      try loader.insert(record)
      for (name, link) in loose {
        try loader.link(object.reference, name, to: link.target, order: link.order)
      }
    } catch {
      throw MigrationError(wrapping: error)
    }
  }

  package func write(_ loose: MigrationHop.LooseLink) throws(MigrationError) {
    do {
      try loader.link(
        loose.from, loose.relationship, to: loose.link.target, order: loose.link.order)
    } catch {
      throw MigrationError(wrapping: error)
    }
  }
}
