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

  /// What became of one object: inserted, present, kept, replaced, or linked to an inserted
  /// one.
  public struct Fate: Codable, Sendable, Equatable {
    /// What the merge does with the object.
    public enum Action: String, Codable, Sendable {
      /// Written into the store.
      case insert
      /// The store holds it with the same values: left alone.
      case present
      /// The store holds it with other values, kept as they are (`--on-conflict skip`).
      case keep
      /// The store holds it with other values, given the source's (`replace`).
      case replace
      /// The store holds it, and it is linked to an inserted object.
      case link
    }

    /// What the merge does with it.
    public let action: Action
    /// Its entity.
    public let entity: String
    /// Its primary key in the source (nil for an object of the store linked to an inserted
    /// one).
    public let source: Int64?
    /// Its primary key in the store: the store's object's, or the inserted object's when it
    /// keeps its own (nil when it gets a new one on saving).
    public let store: Int64?
    /// What more there is to say: the attributes that differ, the object and relationship a
    /// link is made to, that an inserted object gets a new primary key.
    public let detail: String?

    /// A fate.
    public init(action: Action, entity: String, source: Int64?, store: Int64?, detail: String?) {
      self.action = action
      self.entity = entity
      self.source = source
      self.store = store
      self.detail = detail
    }
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
  /// What became of each object, in the order the merge took them: inserted objects, then
  /// those the store held, then the links made.
  public var objects: [Fate] = []
}
