/// What a merge did (or, in a dry run, would do), per entity.
public struct MergeResult: Codable, Sendable, Equatable {
  /// The objects of one entity, by what became of them.
  public struct Counts: Codable, Sendable, Equatable {
    /// Objects written into the store.
    public var inserted = 0
    /// Of those, objects given a new primary key (the store had used theirs).
    public var renumbered = 0
    /// Objects the store holds with the same attribute values, left alone.
    public var present = 0
    /// Objects the store holds with other values, kept as they are (`--on-conflict skip`).
    public var kept = 0
    /// Objects the store holds with other values, given the source's (`replace`).
    public var replaced = 0
    /// Links made from objects already in the store (not inserted) to inserted ones: a
    /// to-one that was empty set, or a many-to-many pair added.
    public var linked = 0
  }

  /// The store merged into.
  public let store: String
  /// The archive or store the objects came from.
  public let source: String
  /// How many objects the selection itself chose (before the closure).
  public let selected: Int
  /// Per entity.
  public let entities: [String: Counts]
  /// Objects the store holds with other values: `Entity pN (attribute, …)`.
  public let conflicts: [String]
  /// When the models differed: how the source was migrated (`Library → Library 2`).
  public let migrated: String?
  /// How objects were matched where the user did not say: an entity matched by its
  /// uniqueness constraint because the source is another store, one sentence each.
  public let notes: [String]
  /// Whether nothing was written.
  public let dryRun: Bool
}
