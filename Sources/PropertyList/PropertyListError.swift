/// An error reading or writing a property list, saying what is wrong and where.
public struct PropertyListError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong.
  public enum Kind: Sendable, Equatable {
    /// The input does not start with a known property-list header.
    case notAPropertyList
    /// The input ends before a structure it declares.
    case truncated
    /// A count, offset, size or reference is out of range or inconsistent.
    case invalidStructure
    /// A container contains itself.
    case referenceCycle
    /// Containers are nested more deeply than the reader allows.
    case nestingTooDeep(limit: Int)
    /// A value cannot be represented (an integer beyond 64 bits, a null in XML, …).
    case unsupportedValue
    /// Text that is not valid in its encoding.
    case invalidText
    /// XML that is not well-formed or not a property list.
    case invalidXML
    /// A keyed archive that does not have the expected shape.
    case invalidKeyedArchive
  }

  /// What is wrong.
  public let kind: Kind
  /// A sentence with the details.
  public let detail: String
  /// The byte offset in the input, when known.
  public let offset: Int?
  /// The object index (binary) or element path (XML, keyed archive), when known.
  public let location: String?

  /// Creates an error from its parts.
  public init(_ kind: Kind, _ detail: String, offset: Int? = nil, location: String? = nil) {
    self.kind = kind
    self.detail = detail
    self.offset = offset
    self.location = location
  }

  /// A one-line description: the problem, then where.
  public var description: String {
    var text = detail
    if let location {
      text += " (at \(location)" + (offset.map { ", byte \($0)" } ?? "") + ")"
    } else if let offset {
      text += " (at byte \(offset))"
    }
    return text
  }
}
