/// An error building, validating or loading a model, naming the entity and property involved.
public struct ModelError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong.
  public enum Kind: Sendable, Equatable {
    /// Two entities, or two properties of one entity (inherited ones included), share a name.
    case duplicateName
    /// A name is empty or otherwise unusable.
    case invalidName
    /// A parent, destination, inverse or constrained property does not exist.
    case unknownReference
    /// The two ends of a relationship disagree about being each other's inverse.
    case inverseMismatch
    /// An entity is its own ancestor.
    case inheritanceCycle
    /// Counts are negative or the minimum exceeds the maximum.
    case invalidCount
    /// The model was changed after it was frozen.
    case frozen
    /// A model file could not be read or is not a model.
    case unreadable
    /// A model file is missing.
    case missing
    /// No model is available where one was looked for (a store without `Z_MODELCACHE`, a
    /// version name the set does not have).
    case noModel
  }

  /// What is wrong.
  public let kind: Kind
  /// A sentence with the details.
  public let detail: String
  /// The entity involved, if any.
  public let entity: String?
  /// The property involved, if any.
  public let property: String?
  /// The file involved, if any.
  public let path: String?
  /// The lower-layer error, if any (a property-list or zlib error, say).
  public let underlying: String?

  /// Creates an error from its parts.
  public init(
    _ kind: Kind, _ detail: String, entity: String? = nil, property: String? = nil,
    path: String? = nil, underlying: (any Error)? = nil
  ) {
    self.kind = kind
    self.detail = detail
    self.entity = entity
    self.property = property
    self.path = path
    self.underlying = underlying.map { String(describing: $0) }
  }

  /// A one-line description naming the entity, property and file.
  public var description: String {
    var location: [String] = []
    if let entity { location.append(property.map { "\(entity).\($0)" } ?? entity) }
    if let path { location.append(path) }
    var text = detail
    if !location.isEmpty { text += " (" + location.joined(separator: ", ") + ")" }
    if let underlying { text += ": \(underlying)" }
    return text
  }
}
