import Foundation

/// A declarative mapping file: what a migration cannot infer, per hop between two versions.
///
/// JSON, documented in `graphvault(1)`, MAPPING FILES. Unknown keys are refused, so a typo
/// never silently does nothing:
///
/// ```json
/// { "format": 1,
///   "order": ["Model", "Model 2"],
///   "hops": [ { "from": "Model", "to": "Model 2",
///     "entities": { "Post": {
///       "from": "Article",
///       "attributes": { "hexColor": { "from": "color" },
///                       "mood": { "fromExtended": "mood" },
///                       "title": { "default": "Untitled" },
///                       "rank": { "from": "rankText", "convert": true },
///                       "slug": { "generate": "uuid" } },
///       "relationships": { "users": { "from": "user" } } } },
///     "extract": [ { "entity": "Color", "from": "Post", "each": "object",
///                    "attributes": { "hex": "hexColor" }, "generate": { "colorID": "uuid" },
///                    "link": { "post": "source" } } ] } ] }
/// ```
public struct MappingFile: Sendable, Equatable {
  /// The format version this code reads.
  public static let formatVersion = 1

  /// An explicit migration order of the versions (replacing the natural order of names).
  public var order: [String]?
  /// The hops with rules.
  public var hops: [Hop]

  /// The rules of one hop.
  public struct Hop: Sendable, Equatable {
    /// The version migrated from.
    public var from: String
    /// The version migrated to.
    public var to: String
    /// Rules by destination entity name.
    public var entities: [String: EntityRule]
    /// Attributes moved out into new objects.
    public var extractions: [Extraction]
  }

  /// Rules for one destination entity.
  public struct EntityRule: Sendable, Equatable {
    /// The source entity it comes from (a rename without renaming identifier).
    public var from: String?
    /// Drop every object of it.
    public var drop: Bool
    /// Rules by destination attribute name.
    public var attributes: [String: AttributeRule]
    /// Rules by destination relationship name.
    public var relationships: [String: RelationshipRule]
  }

  /// Where a destination attribute's value comes from.
  public struct AttributeRule: Sendable, Equatable {
    /// The source attribute (a rename without renaming identifier).
    public var from: String?
    /// A value for objects that have none, written as in Xcode's `defaultValueString`.
    public var defaultValue: String?
    /// A generated value for every object: `uuid` or `now`.
    public var generate: String?
    /// Convert the source value to the destination type, even where that may lose data.
    public var convert: Bool
    /// Replacements of values, by the source value's text.
    public var map: [String: String]
    /// Drop the values.
    public var drop: Bool
    /// An extended attribute (a key of the source entity's bucket) that becomes this attribute,
    /// leaving the bucket: the way out of extended attributes once a key earns its place.
    public var fromExtended: String?

    /// A rule.
    public init(
      from: String? = nil, defaultValue: String? = nil, generate: String? = nil,
      convert: Bool = false, map: [String: String] = [:], drop: Bool = false,
      fromExtended: String? = nil
    ) {
      self.from = from
      self.defaultValue = defaultValue
      self.generate = generate
      self.convert = convert
      self.map = map
      self.drop = drop
      self.fromExtended = fromExtended
    }
  }

  /// Where a destination relationship's links come from.
  public struct RelationshipRule: Sendable, Equatable {
    /// The source relationship (a rename without renaming identifier).
    public var from: String?
    /// Drop the links.
    public var drop: Bool
  }

  /// Attributes of a source object moved out into new objects of a new entity.
  public struct Extraction: Sendable, Equatable {
    /// How many objects are made.
    public enum Each: Sendable, Equatable {
      /// One per source object.
      case object
      /// One per distinct combination of the moved values (found, or created the first time).
      case distinct
      /// One per object the source object's to-many relationship of that name points at.
      case related(String)
    }
    /// The new objects' entity (destination version).
    public var entity: String
    /// The source entity (source version).
    public var from: String
    /// How many objects are made.
    public var each: Each
    /// New entity's attribute ← source attribute.
    public var attributes: [String: String]
    /// New entity's attribute ← generated value (`uuid`, `now`).
    public var generate: [String: String]
    /// New entity's relationship → `source` (the source object) or `each` (the related
    /// object, with `each` naming a relationship).
    public var link: [String: String]
  }

  /// Reads the mapping file at `path`.
  /// - Throws: ``MigrationError`` (``MigrationError/Kind/unreadableMapping`` when unreadable,
  ///   ``MigrationError/Kind/refused`` when malformed), naming the key that is wrong.
  public static func load(path: String) throws(MigrationError) -> MappingFile {
    let data: Data
    do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
      throw MigrationError(.unreadableMapping, "cannot read the mapping file (\(path))")
    }
    do {
      return try parse(data)
    } catch let error as MigrationError {
      throw MigrationError(.refused, "mapping file \(path): \(error.detail)")
    } catch {
      throw MigrationError(.refused, "mapping file \(path) is not valid JSON: \(error)")
    }
  }

  /// Parses a mapping file's JSON.
  public static func parse(_ data: Data) throws -> MappingFile {
    let root = try Object(JSONSerialization.jsonObject(with: data), at: "the file")
    try root.only(["format", "order", "hops"])
    let format = try root.integer("format")
    guard format == formatVersion else {
      throw MigrationError(
        .refused,
        "format \(format.map(String.init) ?? "missing") is not one this graphvault reads (it reads \(formatVersion))"
      )
    }
    var hops: [Hop] = []
    for (number, value) in try root.array("hops").enumerated() {
      hops.append(try hop(Object(value, at: "hops[\(number)]")))
    }
    return MappingFile(order: try root.strings("order"), hops: hops)
  }

  private static func hop(_ object: Object) throws -> Hop {
    try object.only(["from", "to", "entities", "extract"])
    var entities: [String: EntityRule] = [:]
    for (name, value) in try object.dictionary("entities") {
      let rule = try Object(value, at: "\(object.path).entities.\(name)")
      try rule.only(["from", "drop", "attributes", "relationships"])
      var attributes: [String: AttributeRule] = [:]
      for (attribute, value) in try rule.dictionary("attributes") {
        let entry = try Object(value, at: "\(rule.path).attributes.\(attribute)")
        try entry.only(["from", "default", "generate", "convert", "map", "drop", "fromExtended"])
        attributes[attribute] = AttributeRule(
          from: try entry.string("from"), defaultValue: try entry.scalar("default"),
          generate: try entry.string("generate"), convert: try entry.bool("convert"),
          map: try entry.stringDictionary("map"), drop: try entry.bool("drop"),
          fromExtended: try entry.string("fromExtended"))
      }
      var relationships: [String: RelationshipRule] = [:]
      for (relationship, value) in try rule.dictionary("relationships") {
        let entry = try Object(value, at: "\(rule.path).relationships.\(relationship)")
        try entry.only(["from", "drop"])
        relationships[relationship] = RelationshipRule(
          from: try entry.string("from"), drop: try entry.bool("drop"))
      }
      entities[name] = EntityRule(
        from: try rule.string("from"), drop: try rule.bool("drop"), attributes: attributes,
        relationships: relationships)
    }
    var extractions: [Extraction] = []
    for (number, value) in try object.array("extract").enumerated() {
      let entry = try Object(value, at: "\(object.path).extract[\(number)]")
      try entry.only(["entity", "from", "each", "attributes", "generate", "link"])
      let each: Extraction.Each
      switch try entry.string("each") ?? "object" {
      case "object": each = .object
      case "distinct": each = .distinct
      case let relationship: each = .related(relationship)
      }
      extractions.append(
        Extraction(
          entity: try entry.required("entity"), from: try entry.required("from"), each: each,
          attributes: try entry.stringDictionary("attributes"),
          generate: try entry.stringDictionary("generate"),
          link: try entry.stringDictionary("link")))
    }
    return Hop(
      from: try object.required("from"), to: try object.required("to"), entities: entities,
      extractions: extractions)
  }

  /// A JSON object being read, with its path for messages.
  private struct Object {
    let fields: [String: Any]
    let path: String

    init(_ value: Any, at path: String) throws {
      guard let fields = value as? [String: Any] else {
        throw MigrationError(.refused, "\(path) is not an object")
      }
      self.fields = fields
      self.path = path
    }

    func only(_ keys: Set<String>) throws {
      if let unknown = fields.keys.sorted().first(where: { !keys.contains($0) }) {
        throw MigrationError(
          .refused,
          "\(path) has an unknown key \"\(unknown)\" (known: \(keys.sorted().joined(separator: ", ")))"
        )
      }
    }

    private func wrong(_ key: String, _ kind: String) -> MigrationError {
      MigrationError(.refused, "\(path).\(key) is not \(kind)")
    }

    func string(_ key: String) throws -> String? {
      guard let value = fields[key] else { return nil }
      guard let text = value as? String else { throw wrong(key, "a string") }
      return text
    }

    func required(_ key: String) throws -> String {
      guard let text = try string(key) else {
        throw MigrationError(.refused, "\(path) lacks \"\(key)\"")
      }
      return text
    }

    func integer(_ key: String) throws -> Int? {
      guard let value = fields[key] else { return nil }
      guard let number = value as? NSNumber, !Self.isBoolean(number) else {
        throw wrong(key, "a number")
      }
      return number.intValue
    }

    func bool(_ key: String) throws -> Bool {
      guard let value = fields[key] else { return false }
      guard let number = value as? NSNumber, Self.isBoolean(number) else {
        throw wrong(key, "true or false")
      }
      return number.boolValue
    }

    /// A string, number or boolean, as text (`YES`/`NO` for booleans, as Xcode writes them).
    func scalar(_ key: String) throws -> String? {
      guard let value = fields[key] else { return nil }
      if let text = value as? String { return text }
      if let number = value as? NSNumber {
        return Self.isBoolean(number) ? (number.boolValue ? "YES" : "NO") : number.stringValue
      }
      throw wrong(key, "a string, number or boolean")
    }

    func strings(_ key: String) throws -> [String]? {
      guard let value = fields[key] else { return nil }
      guard let list = value as? [String] else { throw wrong(key, "a list of strings") }
      return list
    }

    func array(_ key: String) throws -> [Any] {
      guard let value = fields[key] else { return [] }
      guard let list = value as? [Any] else { throw wrong(key, "a list") }
      return list
    }

    func dictionary(_ key: String) throws -> [(String, Any)] {
      guard let value = fields[key] else { return [] }
      guard let object = value as? [String: Any] else { throw wrong(key, "an object") }
      return object.sorted { $0.key < $1.key }
    }

    func stringDictionary(_ key: String) throws -> [String: String] {
      var result: [String: String] = [:]
      for (name, value) in try dictionary(key) {
        guard let text = value as? String else { throw wrong("\(key).\(name)", "a string") }
        result[name] = text
      }
      return result
    }

    /// JSON's `true`/`false` (a number's Objective-C type `c`; 0 and 1 are `i` or `q`).
    private static func isBoolean(_ number: NSNumber) -> Bool {
      String(cString: number.objCType) == "c"
    }
  }
}
