import ObjectModel

extension StoreLayout {
  /// The join table that `entity`'s hierarchy owns for its many-to-many relationship `name`: the
  /// table a record of `entity` lists that relationship's rows for (an archive lists them on
  /// the owning side only); nil when there is none.
  package func join(for entity: String, relationship name: String) -> Join? {
    let lineage = Set(model.lineage(of: entity).map(\.name))
    return joins.first { lineage.contains($0.entity) && $0.relationship.name == name }
  }

  /// The columns of `entity`'s table that a record of it may carry as stored values
  /// (``ObjectRecord/extraColumns``): attribute columns (a value SQLite kept in another storage
  /// class than the type's) and the columns no attribute or relationship maps (order keys
  /// among them). Never `Z_PK`, `Z_ENT`, `Z_OPT` or a to-one's columns, which only the record's
  /// own keys set.
  package func storedColumns(of entity: String) -> Set<String> {
    guard let table = table(for: entity) else { return [] }
    var columns = Set(table.unmappedColumns)
    for attributes in table.attributes.values {
      for attribute in attributes { columns.insert(attribute.column) }
    }
    return columns
  }
}

extension StoreSchema {
  /// Whether `a` and `b` give a store the same schema (tables, columns, indexes, triggers and
  /// entity numbers): the test that a store's `Z_MODELCACHE` describes the model an archive
  /// was written with.
  package static func describeTheSameStore(_ a: ObjectModel, _ b: ObjectModel) -> Bool {
    guard
      let first = try? StoreSchema(
        model: a, persistentHistory: false, allowingUnsupportedDerivations: true),
      let second = try? StoreSchema(
        model: b, persistentHistory: false, allowingUnsupportedDerivations: true)
    else { return false }
    return first.statements == second.statements && first.entityNumbers == second.entityNumbers
  }
}
