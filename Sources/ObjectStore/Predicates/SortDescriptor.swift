/// An ordering of fetched objects by one attribute.
public struct SortDescriptor: Sendable, Equatable {
  /// The attribute's name.
  public var key: String
  /// Ascending (nil values first) or descending.
  public var ascending: Bool

  /// Creates a sort descriptor.
  public init(_ key: String, ascending: Bool = true) {
    self.key = key
    self.ascending = ascending
  }
}
