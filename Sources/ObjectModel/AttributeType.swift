/// The type of an attribute, named as Xcode's model files name it.
public enum AttributeType: String, Hashable, Sendable, Codable, CaseIterable {
  /// 16-bit integer.
  case integer16 = "Integer 16"
  /// 32-bit integer.
  case integer32 = "Integer 32"
  /// 64-bit integer.
  case integer64 = "Integer 64"
  /// Decimal number (stored by Core Data as a REAL, so beyond a double's precision is lost).
  case decimal = "Decimal"
  /// Double-precision float.
  case double = "Double"
  /// Single-precision float.
  case float = "Float"
  /// String.
  case string = "String"
  /// Boolean.
  case boolean = "Boolean"
  /// Date (seconds since 2001-01-01 UTC).
  case date = "Date"
  /// Binary data, possibly stored outside the row.
  case binaryData = "Binary"
  /// UUID (16 bytes).
  case uuid = "UUID"
  /// URI (stored as its absolute string).
  case uri = "URI"
  /// A value transformed to bytes by a value transformer.
  case transformable = "Transformable"
  /// An object ID (transient only, in practice).
  case objectID = "ObjectID"
  /// Undefined (transient only).
  case undefined = "Undefined"
  /// A composite (`NSCompositeAttributeDescription`, Core Data since iOS 17; what SwiftData
  /// makes of a Codable struct property): a group of element attributes, each stored in a
  /// column of its own. The attribute itself has no column and its value is a dictionary of
  /// its elements' values.
  case composite = "Composite"

  /// Core Data's `NSAttributeType` raw value (as compiled models store it).
  public var coreDataCode: Int {
    switch self {
    case .undefined: return 0
    case .integer16: return 100
    case .integer32: return 200
    case .integer64: return 300
    case .decimal: return 400
    case .double: return 500
    case .float: return 600
    case .string: return 700
    case .boolean: return 800
    case .date: return 900
    case .binaryData: return 1000
    case .uuid: return 1100
    case .uri: return 1200
    case .transformable: return 1800
    case .objectID: return 2000
    case .composite: return 2100
    }
  }

  /// The type with Core Data's `NSAttributeType` raw value `code`.
  public init?(coreDataCode code: Int) {
    guard let match = Self.allCases.first(where: { $0.coreDataCode == code }) else { return nil }
    self = match
  }

  /// The column type Core Data declares for a stored attribute of this type (empty for a
  /// composite, whose elements have the columns).
  public var sqlType: String {
    switch self {
    case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
    case .decimal: return "DECIMAL"
    case .double, .float: return "FLOAT"
    case .date: return "TIMESTAMP"
    case .string, .uri: return "VARCHAR"
    case .binaryData, .uuid, .transformable, .objectID, .undefined: return "BLOB"
    case .composite: return ""
    }
  }

  /// Whether the type is an integer type.
  public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
}
