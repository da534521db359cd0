/// An ordering of fetched objects by one attribute of theirs or of an object they reach through
/// to-one relationships (`author.alias`), as SQLite orders the stored values: nil first when
/// ascending, strings by their UTF-8 bytes (Core Data's `compare:` in SQL).
public struct SortDescriptor: Sendable, Equatable {
  /// The attribute's name, or a key path of to-one relationships ending in an attribute.
  public var key: String
  /// Ascending (nil values first) or descending.
  public var ascending: Bool

  /// Creates a sort descriptor.
  public init(_ key: String, ascending: Bool = true) {
    self.key = key
    self.ascending = ascending
  }
}
