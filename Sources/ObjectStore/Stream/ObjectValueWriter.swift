import ObjectModel

/// Writes object values into a store being loaded: each value's attributes, its values kept as
/// stored and its own to-one keys with its row (``StoredShape`` gives their columns), every
/// other link (its to-many ones, its owners') where the store's layout keeps it
/// (``StoreLoader/link(_:_:to:order:)``). Columns the model does not describe are not written.
package final class ObjectValueWriter {
  private let loader: StoreLoader
  private let layout: StoreLayout
  private var shapes: [String: StoredShape] = [:]

  /// A writer into `loader`, which was prepared with its model.
  package init(loader: StoreLoader) throws(StoreError) {
    guard let layout = loader.layout else {
      throw StoreError(.unsupported, "the new store was not prepared", path: loader.path)
    }
    self.loader = loader
    self.layout = layout
  }

  private func shape(_ entity: String) -> StoredShape {
    if let known = shapes[entity] { return known }
    let shape = StoredShape(entity: entity, layout: layout)
    shapes[entity] = shape
    return shape
  }

  /// Writes `object` and its links.
  /// - Throws: ``StoreError``: ``StoreError/Kind/unsupported`` when it has links in a
  ///   relationship its entity does not have; what the loader throws.
  package func write(_ object: ObjectValue) throws(StoreError) {
    var record = ObjectRecord(
      entity: object.entity, primaryKey: object.primaryKey, version: object.version,
      attributes: object.attributes)
    let shape = shape(object.entity)
    var loose: [(String, ObjectLink)] = []
    for (name, links) in object.relationships.sorted(by: { $0.key < $1.key }) {
      guard let relationship = shape.relationships[name] else {
        let model = layout.model
        throw StoreError(
          .unsupported,
          "\(object.reference) has links in \(name), which \(object.entity) does not have in \(model.versionName ?? model.name)",
          path: loader.path)
      }
      guard !relationship.description.isToMany, let link = links.first else {
        for link in links { loose.append((name, link)) }
        continue
      }
      record.toOne[name] = link.target
      if let orderColumn = relationship.orderColumn {
        record.extraColumns[orderColumn] = .integer(link.order ?? object.primaryKey)
      }
      if let inverse = relationship.inverse, !inverse.isToMany, !link.isMirrored {
        // The other end keeps a key too, and nothing else will set it.
        try loader.link(link.target, inverse.name, to: object.reference)
      }
    }
    for (name, value) in object.storedAsIs {
      guard let column = shape.column(for: .attribute(name)) else { continue }
      record.extraColumns[column] = value
      record.attributes[name] = nil
    }
    try loader.insert(record)
    for (name, link) in loose {
      try loader.link(object.reference, name, to: link.target, order: link.order)
    }
    for owned in object.owners {
      try loader.link(owned.owner, owned.relationship, to: object.reference, order: owned.order)
    }
  }

  /// Writes a link given apart from its object.
  package func write(_ loose: LooseLink) throws(StoreError) {
    try loader.link(loose.from, loose.relationship, to: loose.link.target, order: loose.link.order)
  }
}
