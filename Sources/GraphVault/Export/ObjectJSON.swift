import JSON
import ObjectModel
import ObjectStore
import PropertyList

/// Class-tagged dictionaries as JSON, lossless for every attribute type, read back with the
/// model's types:
///
/// ```json
/// {"class": "Book", "pk": 12, "author": {"class": "Author", "pk": 3},
///  "pages": [{"class": "Page", "pk": 40}], "price": "10.11", "published": "2024-05-10T12:34:56.5Z",
///  "title": "Dune"}
/// ```
///
/// Integers and reals are JSON numbers (`"NaN"`, `"Infinity"` and `"-Infinity"` as strings);
/// decimals strings of their exact digits; dates UTC ISO 8601 with every fractional digit the
/// stored double needs (a number of seconds since 2001 for years beyond four digits); binary
/// data `{"base64": …}`, or `{"json": …}` when it is JSON text written back byte for byte
/// (``heldJSON(_:)``); UUIDs and URIs strings; transformables as ``KeyedArchiveJSON`` says.
/// `"class"` and `"pk"` come first, then attributes and relationships by name; extended
/// attributes (kept in the entity's bucket) are keys of their own, `"extended.KEY"`, their values
/// as ``PropertyListJSON`` writes them. A reference
/// without `"pk"` picks an object by the other values it gives (a natural key).
public struct ObjectJSON: Sendable {
  /// What is wrong with a value, for a message that adds the object's place and key.
  struct Problem: Error {
    let detail: String
    init(_ detail: String) { self.detail = detail }
  }

  /// The model whose types the values follow.
  public let model: ObjectModel

  /// A converter for objects of `model`.
  public init(model: ObjectModel) { self.model = model }

  /// An object as pretty-printed JSON text.
  public func text(_ dictionary: ObjectDictionary) -> String {
    String(decoding: JSONWriter.encode(json(dictionary)), as: UTF8.self)
  }

  /// The object that JSON text describes.
  /// - Throws: ``VaultError`` (65) naming the key at fault, or the line and column of bad JSON.
  public func dictionary(fromText text: String) throws(VaultError) -> ObjectDictionary {
    let reader = JSONReader(bytes: Array(text.utf8))
    let value: JSONValue
    do {
      value = try reader.value()
      try reader.end()
    } catch {
      throw VaultError(.invalidInput, error.description)
    }
    do {
      return try dictionary(value)
    } catch {
      throw VaultError(.invalidInput, error.detail)
    }
  }

  // MARK: Writing

  /// The JSON of an object.
  func json(_ dictionary: ObjectDictionary) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = []
    var elements: [(String, AttributeValue)] = []
    for (key, value) in dictionary.attributes {
      guard let value else { continue }
      if key.contains(".") {
        elements.append((key, value))
      } else {
        members.append((key, json(value)))
      }
    }
    // A composite's elements as one object (a composite none of whose elements has a value
    // is absent, as in the store).
    for (key, value) in RecordNesting.nested(elements) { members.append((key, json(value))) }
    for (key, reference) in dictionary.toOne {
      members.append((key, reference.map(json) ?? .null))
    }
    for (key, references) in dictionary.toMany {
      members.append((key, .array(references.map(json))))
    }
    for (key, value) in dictionary.extended {
      members.append(
        (ExtendedAttributes.keyPrefix + key, value.map(PropertyListJSON.json) ?? .null))
    }
    members.sort { $0.key < $1.key }
    var head: [(key: String, value: JSONValue)] = [("class", .string(dictionary.entity))]
    if let primaryKey = dictionary.primaryKey { head.append(("pk", .integer(primaryKey))) }
    return .object(head + members)
  }

  /// The JSON of a reference.
  func json(_ reference: ObjectDictionary.Reference) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = [("class", .string(reference.entity))]
    if let primaryKey = reference.primaryKey { members.append(("pk", .integer(primaryKey))) }
    for (key, value) in reference.naturalKey.sorted(by: { $0.key < $1.key }) {
      members.append((key, json(value)))
    }
    return .object(members)
  }

  /// The JSON of an attribute value.
  func json(_ value: AttributeValue) -> JSONValue {
    switch value {
    case .integer(let number): return .integer(number)
    case .double(let number):
      return number.isFinite
        ? .real(number) : .string(number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity")
    case .decimal(let text): return .string(text)
    case .string(let text): return .string(text)
    case .bool(let flag): return .bool(flag)
    case .date(let seconds):
      let date = PropertyListDate(secondsSinceReferenceDate: seconds)
      return ISO8601.exactText(date).map(JSONValue.string) ?? .real(seconds)
    case .data(let bytes):
      if let held = Self.heldJSON(bytes) { return .object([("json", held)]) }
      return .object([("base64", .string(Base64.encode(bytes)))])
    case .uuid(let bytes): return .string(Self.uuidText(bytes))
    case .uri(let text): return .string(text)
    case .transformed(let bytes): return KeyedArchiveJSON.json(bytes)
    case .composite(let elements):
      return .object(elements.keys.sorted().map { ($0, json(elements[$0]!)) })
    }
  }

  /// The JSON a binary value holds (a Codable collection or enum SwiftData keeps as its
  /// `JSONEncoder` wrote it), when it is an array or an object whose compact text is exactly
  /// the stored bytes, so that `{"json": …}` gives them back; nil otherwise (other spellings,
  /// spaces, anything else), which stays `{"base64": …}`. Read as data, never run.
  static func heldJSON(_ bytes: [UInt8]) -> JSONValue? {
    guard bytes.first == UInt8(ascii: "[") || bytes.first == UInt8(ascii: "{") else { return nil }
    let reader = JSONReader(bytes: bytes)
    guard let value = try? reader.value(), (try? reader.end()) != nil,
      JSONWriter.encode(value, style: .compact) == bytes, !hasRepeatedKeys(value)
    else { return nil }
    return value
  }

  /// Whether an object in `value` gives a key twice, which a reader of the export would fold.
  private static func hasRepeatedKeys(_ value: JSONValue) -> Bool {
    switch value {
    case .array(let elements): return elements.contains(where: hasRepeatedKeys)
    case .object(let members):
      var keys = Set<String>()
      for member in members {
        if !keys.insert(member.key).inserted || hasRepeatedKeys(member.value) { return true }
      }
      return false
    default: return false
    }
  }

  /// The stored bytes of `{"json": …}`: the value's compact text.
  static func heldBytes(_ value: JSONValue) throws(Problem) -> [UInt8] {
    switch value {
    case .array, .object: return JSONWriter.encode(value, style: .compact)
    default: throw Problem("\"json\" holds \(value.kindName), not an array or an object")
    }
  }

  /// `8-4-4-4-12` upper-case hexadecimal digits, as Foundation's `UUID.uuidString`.
  static func uuidText(_ bytes: [UInt8]) -> String {
    let hex = bytes.map { String($0, radix: 16, uppercase: true) }.map {
      $0.count == 1 ? "0" + $0 : $0
    }
    guard hex.count == 16 else { return hex.joined() }
    return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
  }

  // MARK: Reading

  /// The object a JSON object describes.
  /// - Throws: ``Problem`` with the key at fault (`title: expected a string, found an integer`).
  func dictionary(_ value: JSONValue) throws(Problem) -> ObjectDictionary {
    guard let members = value.objectMembers else {
      throw Problem("expected an object, found \(value.kindName)")
    }
    let entity = try entityName(value)
    guard let description = model.entity(named: entity) else {
      throw Problem("class: the model has no entity \(entity)")
    }
    guard !description.isAbstract else {
      throw Problem("class: entity \(entity) is abstract and cannot have objects")
    }
    var result = ObjectDictionary(entity: entity)
    let attributes = Dictionary(
      model.attributes(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    let relationships = Dictionary(
      model.relationships(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    for (key, member) in members {
      switch key {
      case "class": continue
      case "pk":
        guard let primaryKey = member.integerValue, primaryKey > 0 else {
          throw Problem("pk: expected a positive integer, found \(member.kindName)")
        }
        result.primaryKey = primaryKey
      default:
        if model.compositeAttribute(key, of: entity) != nil {
          try readComposite(member, path: key, into: &result, attributes: attributes)
        } else if let attribute = attributes[key] {
          guard !attribute.isTransient && !attribute.isDerived else {
            throw Problem(
              "\(key): \(entity).\(key) is \(attribute.isDerived ? "derived (the store computes it)" : "transient (not stored)")"
            )
          }
          do {
            result.attributes[key] = try attributeValue(member, of: attribute)
          } catch {
            throw Problem("\(key): \(error.detail)")
          }
        } else if let relationship = relationships[key], !relationship.isTransient {
          do throws(Problem) {
            if relationship.isToMany {
              guard let elements = member.arrayValue else {
                throw Problem("expected an array of references, found \(member.kindName)")
              }
              var references: [ObjectDictionary.Reference] = []
              for element in elements {
                references.append(try reference(element, to: relationship.destination))
              }
              result.toMany[key] = references
            } else if case .null = member {
              result.toOne[key] = .some(nil)
            } else {
              result.toOne[key] = try reference(member, to: relationship.destination)
            }
          } catch {
            throw Problem("\(key): \(error.detail)")
          }
        } else if key.hasPrefix(ExtendedAttributes.keyPrefix),
          ExtendedAttributes.bucket(of: entity, in: model) != nil
        {
          let name = String(key.dropFirst(ExtendedAttributes.keyPrefix.count))
          if case .null = member {
            result.extended[name] = .some(nil)
          } else {
            guard let value = PropertyListJSON.propertyList(member) else {
              throw Problem("\(key): not a property-list value")
            }
            result.extended[name] = value
          }
        } else {
          throw Problem("\(key): \(entity) has no attribute or relationship \(key)")
        }
      }
    }
    return result
  }

  /// A composite's JSON object into its elements' values, by key path (`null` or `{}`: no
  /// value for any of them).
  private func readComposite(
    _ member: JSONValue, path: String, into result: inout ObjectDictionary,
    attributes: [String: AttributeDescription]
  ) throws(Problem) {
    let elements = attributes.keys.filter { $0.hasPrefix(path + ".") }
    if case .null = member {
      for element in elements { result.attributes[element] = .some(nil) }
      return
    }
    guard let members = member.objectMembers else {
      throw Problem(
        "\(path): expected an object of the composite's elements, found \(member.kindName)")
    }
    for element in elements { result.attributes[element] = .some(nil) }
    for (name, value) in members {
      let elementPath = path + "." + name
      if let attribute = attributes[elementPath] {
        do {
          result.attributes[elementPath] = try attributeValue(value, of: attribute)
        } catch {
          throw Problem("\(elementPath): \(error.detail)")
        }
      } else if elements.contains(where: { $0.hasPrefix(elementPath + ".") }) {
        try readComposite(value, path: elementPath, into: &result, attributes: attributes)
      } else {
        throw Problem("\(elementPath): the composite \(path) has no element \(name)")
      }
    }
  }

  /// The `"class"` member.
  func entityName(_ value: JSONValue) throws(Problem) -> String {
    guard let name = value["class"]?.stringValue, !name.isEmpty else {
      throw Problem("class: every object needs \"class\", the name of its entity")
    }
    return name
  }

  /// A reference to an object of `destination` (or a sub-entity): by `"pk"`, or by the other
  /// attribute values it gives.
  func reference(_ value: JSONValue, to destination: String) throws(Problem)
    -> ObjectDictionary.Reference
  {
    guard let members = value.objectMembers else {
      throw Problem("expected a reference {\"class\": …, \"pk\": …}, found \(value.kindName)")
    }
    let entity = value["class"]?.stringValue ?? destination
    guard model.entity(named: entity) != nil else {
      throw Problem("the model has no entity \(entity)")
    }
    guard model.lineage(of: entity).contains(where: { $0.name == destination }) else {
      throw Problem("a \(entity) cannot be a \(destination)")
    }
    if let primaryKey = value["pk"] {
      guard let key = primaryKey.integerValue, key > 0, members.count <= 2 else {
        throw Problem("a reference by \"pk\" holds \"class\" and a positive integer \"pk\" only")
      }
      return ObjectDictionary.Reference(entity: entity, primaryKey: key)
    }
    var naturalKey: [String: AttributeValue] = [:]
    for (key, member) in members where key != "class" {
      guard let attribute = model.attributes(of: entity).first(where: { $0.name == key }) else {
        throw Problem("\(entity) has no attribute \(key) to pick an object by")
      }
      guard let attributeValue = try attributeValue(member, of: attribute) else {
        throw Problem("a natural key cannot hold null (\(key))")
      }
      naturalKey[key] = attributeValue
    }
    guard !naturalKey.isEmpty else {
      throw Problem("a reference needs \"pk\" or attribute values that pick out one \(entity)")
    }
    return ObjectDictionary.Reference(entity: entity, naturalKey: naturalKey)
  }

  /// The value of `attribute` that JSON `value` spells (nil for `null`).
  func attributeValue(_ value: JSONValue, of attribute: AttributeDescription) throws(Problem)
    -> AttributeValue?
  {
    if case .null = value { return nil }
    func mismatch(_ expected: String) -> Problem {
      Problem("\(attribute.type.rawValue) expects \(expected), found \(value.kindName)")
    }
    switch attribute.type {
    case .integer16, .integer32, .integer64, .objectID:
      guard let number = value.integerValue else { throw mismatch("an integer") }
      let bits = attribute.type == .integer16 ? 16 : attribute.type == .integer32 ? 32 : 64
      if bits < 64 {
        let limit = Int64(1) << (bits - 1)
        guard number >= -limit && number < limit else {
          throw Problem("\(number) does not fit in \(attribute.type.rawValue)")
        }
      }
      return .integer(number)
    case .double, .float:
      if let number = value.doubleValue { return .double(number) }
      switch value.stringValue {
      case "NaN": return .double(.nan)
      case "Infinity": return .double(.infinity)
      case "-Infinity": return .double(-.infinity)
      default: throw mismatch("a number")
      }
    case .decimal:
      switch value {
      case .string(let text):
        guard Double(text) != nil else { throw Problem("\"\(text)\" is not a decimal number") }
        return .decimal(text)
      case .integer(let number): return .decimal(String(number))
      case .real(let number): return .decimal(JSONWriter.spelling(of: number))
      default: throw mismatch("a decimal number as a string")
      }
    case .string:
      guard let text = value.stringValue else { throw mismatch("a string") }
      return .string(text)
    case .boolean:
      guard let flag = value.boolValue else { throw mismatch("true or false") }
      return .bool(flag)
    case .date:
      if case .real(let seconds) = value { return .date(seconds) }
      if case .integer(let seconds) = value { return .date(Double(seconds)) }
      guard let text = value.stringValue else { throw mismatch("an ISO 8601 time") }
      guard let date = ISO8601.exactDate(text) else {
        throw Problem("\"\(text)\" is not an ISO 8601 time (such as 2024-05-10T12:34:56.5Z)")
      }
      return .date(date.secondsSinceReferenceDate)
    case .binaryData:
      if let members = value.objectMembers, members.count == 1, let held = value["json"] {
        return .data(try Self.heldBytes(held))
      }
      guard let members = value.objectMembers, members.count == 1, let text = value["base64"]
      else {
        throw mismatch("{\"base64\": …} or {\"json\": …}")
      }
      guard let encoded = text.stringValue, let bytes = Base64.decode(encoded) else {
        throw Problem("\"base64\" is not base64 text")
      }
      return .data(bytes)
    case .uuid:
      guard let text = value.stringValue else { throw mismatch("a UUID string") }
      guard let bytes = AttributeValue.uuidBytes(text) else {
        throw Problem("\"\(text)\" is not a UUID")
      }
      return .uuid(bytes)
    case .uri:
      guard let text = value.stringValue else { throw mismatch("a URI string") }
      return .uri(text)
    case .transformable:
      return .transformed(try KeyedArchiveJSON.bytes(value))
    case .undefined:
      throw Problem("undefined attributes are transient and not stored")
    case .composite:
      throw Problem("a composite's value is an object of its elements")
    }
  }
}
