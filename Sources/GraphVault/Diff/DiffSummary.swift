/// What `graphvault diff` found: per entity, how many objects were inserted, deleted, changed
/// and left as they were.
public struct DiffSummary: Codable, Sendable, Equatable {
  /// The counts of one entity.
  public struct Counts: Codable, Sendable, Equatable {
    /// Objects only the newer side has.
    public var inserted = 0
    /// Objects only the older side has.
    public var deleted = 0
    /// Objects both have, with different values.
    public var changed = 0
    /// Objects both have, with the same values.
    public var unchanged = 0
  }

  /// The older side, as given.
  public let old: String
  /// The newer side, as given.
  public let new: String
  /// Whether the two sides hold the same objects (within the selection).
  public var equal: Bool {
    entities.values.allSatisfy { $0.inserted + $0.deleted + $0.changed == 0 }
  }
  /// The counts, by entity.
  public let entities: [String: Counts]
  /// When the two sides' models differed: how the older side was migrated
  /// (`Library v1 → v2`) before they were compared.
  public let migrated: String?
  /// How objects were matched where the user did not say: an entity matched by its
  /// uniqueness constraint because the sides are different stores, one sentence each.
  public let notes: [String]
  /// Deleted and inserted objects whose values are mostly equal (``LikelyRename``): pointed
  /// at, never decided.
  public var renames: [LikelyRename] = []

  private enum CodingKeys: String, CodingKey {
    case old, new, equal, entities, migrated, notes, renames
  }

  /// A summary of a comparison.
  public init(
    old: String, new: String, entities: [String: Counts], migrated: String?,
    notes: [String] = []
  ) {
    self.old = old
    self.new = new
    self.entities = entities
    self.migrated = migrated
    self.notes = notes
  }

  /// Reads a summary written by ``encode(to:)`` (`equal` is worked out, not read).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    old = try container.decode(String.self, forKey: .old)
    new = try container.decode(String.self, forKey: .new)
    entities = try container.decode([String: Counts].self, forKey: .entities)
    migrated = try container.decodeIfPresent(String.self, forKey: .migrated)
    notes = try container.decodeIfPresent([String].self, forKey: .notes) ?? []
    renames = try container.decodeIfPresent([LikelyRename].self, forKey: .renames) ?? []
  }

  /// Writes the summary with `equal`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(old, forKey: .old)
    try container.encode(new, forKey: .new)
    try container.encode(equal, forKey: .equal)
    try container.encode(entities, forKey: .entities)
    try container.encodeIfPresent(migrated, forKey: .migrated)
    if !notes.isEmpty { try container.encode(notes, forKey: .notes) }
    if !renames.isEmpty { try container.encode(renames, forKey: .renames) }
  }
}
