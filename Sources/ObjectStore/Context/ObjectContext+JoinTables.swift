import ObjectModel
import SQLite

extension ObjectContext {
  /// A row of a join table: the owner's and the destination's primary keys.
  struct JoinPair: Hashable {
    let table: String
    let source: Int64
    let destination: Int64
  }

  /// The join table of a many-to-many relationship, and whether `entity` is its owner side.
  func joinTable(for entity: String, _ name: String) throws(StoreError) -> (StoreLayout.Join, Bool)
  {
    let lineage = Set(model.lineage(of: entity).map(\.name))
    for join in layout.joins {
      if lineage.contains(join.entity) && join.relationship.name == name { return (join, true) }
      if join.relationship.inverse == name && lineage.contains(join.relationship.destination) {
        return (join, false)
      }
    }
    throw fail(.modelMismatch, "no join table for \(entity).\(name)")
  }

  /// The join-table row linking `object` to `member` through `name`.
  func joinPair(_ object: ManagedObject, _ name: String, _ member: ObjectReference)
    throws(StoreError) -> JoinPair
  {
    let (join, ownerSide) = try joinTable(for: object.entity, name)
    return ownerSide
      ? JoinPair(table: join.name, source: object.primaryKey, destination: member.primaryKey)
      : JoinPair(table: join.name, source: member.primaryKey, destination: object.primaryKey)
  }
}
