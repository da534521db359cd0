/// The keys of an object record (besides its attributes and relationships, by name).
package enum RecordKey {
  /// The entity name.
  package static let entity = "class"
  /// The primary key.
  package static let primaryKey = "pk"
  /// The optimistic-lock version (`Z_OPT`).
  package static let version = "opt"
  /// Columns the model does not describe, as stored.
  package static let columns = "@columns"
  /// Suffix of the key naming a to-one destination's entity, when its hierarchy has several.
  package static let entitySuffix = "@entity"
  /// Suffix of the key holding a many-to-many relationship's order keys.
  package static let orderSuffix = "@order"
}
