/// Which objects a fetch returns, in what order.
public struct FetchRequest: Sendable, Equatable {
  /// The entity to fetch.
  public var entity: String
  /// The condition, if any.
  public var predicate: Predicate?
  /// The ordering; primary-key order after it.
  public var sortDescriptors: [SortDescriptor]
  /// Whether sub-entities' objects are included.
  public var includesSubentities: Bool
  /// The most objects returned (0: all).
  public var fetchLimit: Int
  /// How many objects to skip before the first returned.
  public var fetchOffset: Int = 0
  /// How many objects ``ObjectContext/forEach(_:_:)`` reads at a time (0: its default).
  public var fetchBatchSize: Int = 0

  /// Creates a fetch request.
  public init(
    entity: String, predicate: Predicate? = nil, sortDescriptors: [SortDescriptor] = [],
    includesSubentities: Bool = true, fetchLimit: Int = 0, fetchOffset: Int = 0,
    fetchBatchSize: Int = 0
  ) {
    self.fetchOffset = fetchOffset
    self.fetchBatchSize = fetchBatchSize
    self.entity = entity
    self.predicate = predicate
    self.sortDescriptors = sortDescriptors
    self.includesSubentities = includesSubentities
    self.fetchLimit = fetchLimit
  }
}
