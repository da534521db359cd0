import ObjectModel
import ObjectStore

/// Writes migrated objects into the new store: values and its own to-one keys with the row,
/// every other link where the target layout keeps it (see ``StoreLoader/link(_:_:to:order:)``).
struct MigrationWriter {
  let loader: StoreLoader
  let model: ObjectModel
  let layout: StoreLayout

  init(loader: StoreLoader) throws(VaultError) {
    guard let layout = loader.layout else {
      throw VaultError(.ioFailure, "the new store was not prepared (\(loader.path))")
    }
    self.loader = loader
    self.layout = layout
    self.model = layout.model
  }

  func write(_ object: MigratingObject) throws(VaultError) {
    var record = ObjectRecord(
      entity: object.entity, primaryKey: object.primaryKey, version: object.version,
      attributes: object.attributes)
    let table = layout.table(for: object.entity)
    let relationships = model.relationships(of: object.entity)
    var loose: [(String, MigrationLink)] = []
    for (name, links) in object.relationships.sorted(by: { $0.key < $1.key }) {
      guard let relationship = relationships.first(where: { $0.name == name }) else {
        throw VaultError(
          .modelUnavailable,
          "\(object.reference) has links in \(name), which \(object.entity) does not have in \(versionName(of: model))"
        )
      }
      guard !relationship.isToMany, let link = links.first else {
        for link in links { loose.append((name, link)) }
        continue
      }
      record.toOne[name] = link.target
      guard let inverse = model.inverse(of: relationship) else { continue }
      if inverse.isOrdered,
        let owner = model.lineage(of: relationship.destination).first(where: {
          $0.relationship(named: inverse.name) != nil
        }), let column = table?.orderKeys["\(owner.name).\(inverse.name)"]
      {
        record.extraColumns[column] = .integer(link.order ?? object.primaryKey)
      }
      if !inverse.isToMany && !link.isMirrored {
        // The other end keeps a key too, and nothing else will set it.
        do {
          try loader.link(link.target, inverse.name, to: object.reference)
        } catch { throw VaultError(wrapping: error) }
      }
    }
    for (name, value) in object.storedAsIs {
      guard
        let column = table?.attributes.values.lazy.flatMap({ $0 }).first(where: {
          $0.attribute.name == name
        })?.column
      else { continue }
      record.extraColumns[column] = value
      record.attributes[name] = nil
    }
    do {
      try loader.insert(record)
      for (name, link) in loose {
        try loader.link(object.reference, name, to: link.target, order: link.order)
      }
    } catch {
      throw VaultError(wrapping: error)
    }
  }

  func write(_ loose: MigrationHop.LooseLink) throws(VaultError) {
    do {
      try loader.link(
        loose.from, loose.relationship, to: loose.link.target, order: loose.link.order)
    } catch {
      throw VaultError(wrapping: error)
    }
  }
}
