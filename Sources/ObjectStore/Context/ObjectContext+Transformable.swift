import ObjectModel
import PropertyList

extension ObjectContext {
  /// Checks that every transformable attribute whose transformer is registered names a value
  /// class it knows (Core Data lets a misspelled class name pass, and fails later), and, with
  /// ``ValueTransformerRegistry/requiresEveryTransformer``, that every transformer is
  /// registered.
  static func checkTransformables(_ model: ObjectModel, _ registry: ValueTransformerRegistry)
    -> String?
  {
    guard registry.refusesUnknownNames else { return nil }
    for entity in model.entities {
      for attribute in entity.attributes where attribute.type == .transformable {
        let place = "\(entity.name).\(attribute.name)"
        if registry.transformer(named: attribute.valueTransformerName) == nil {
          guard registry.requiresEveryTransformer else { continue }
          return
            "\(place) names the value transformer \(attribute.valueTransformerName ?? ""), which is not registered"
        }
        if let name = attribute.valueClassName, !name.isEmpty, !registry.knowsValueClass(name) {
          var text = "\(place) names the value class \(name), which is not known"
          if let near = Self.nearest(name, in: registry.knownValueClasses) {
            text += " (did you mean \(near)?)"
          }
          return text + "; declare it with registerValueClass or a transformer's valueClassNames"
        }
      }
    }
    return nil
  }

  /// The known name closest to `name` by edit distance, when it is close (a typo).
  private static func nearest(_ name: String, in names: Set<String>) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
      var row = Array(0...b.count)
      for (i, x) in a.enumerated() {
        var previous = row[0]
        row[0] = i + 1
        for (j, y) in b.enumerated() {
          let current = row[j + 1]
          row[j + 1] = min(row[j + 1] + 1, row[j] + 1, previous + (x == y ? 0 : 1))
          previous = current
        }
      }
      return row[b.count]
    }
    let target = Array(name)
    let best = names.sorted().map { ($0, distance(target, Array($0))) }.min { $0.1 < $1.1 }
    guard let best, best.1 <= max(1, name.count / 4) else { return nil }
    return best.0
  }

  /// Transformable attribute `key` of `entity`, with its registered transformer.
  func transformable(_ key: String, of entity: String) throws(StoreError) -> (
    AttributeDescription, any AttributeValueTransformer
  ) {
    guard let attribute = model.attributes(of: entity).first(where: { $0.name == key })
    else {
      throw fail(.invalidValue, "\(entity) has no attribute \(key)")
    }
    guard attribute.type == .transformable else {
      throw fail(
        .invalidValue,
        "\(entity).\(key) is \(attribute.type.rawValue), not transformable; use value(for:)")
    }
    guard let transformer = transformers.transformer(named: attribute.valueTransformerName) else {
      throw fail(
        .invalidValue,
        "\(entity).\(key) needs the value transformer \(attribute.valueTransformerName ?? ""), which is not registered: register it on the ValueTransformerRegistry the context opens with to read or set this value"
      )
    }
    return (attribute, transformer)
  }

  func transformedValue(for key: String, of object: ManagedObject) throws(StoreError)
    -> (any Sendable)?
  {
    let (attribute, transformer) = try transformable(key, of: object.entity)
    let bytes: [UInt8]
    switch object.attributes[key] {
    case nil: return nil
    case .transformed(let stored)?, .data(let stored)?: bytes = stored
    case let other?:
      throw fail(.invalidValue, "\(object.entity).\(key) holds \(other), not transformed bytes")
    }
    let value: any Sendable
    do {
      value = try transformer.transformedValue(bytes)
    } catch {
      throw fail(
        .invalidValue,
        "\(object.entity).\(key) (\(object)): \(Self.transformerName(attribute)) cannot read the stored value: \(error)"
      )
    }
    if let archived = value as? KeyedArchiveValue, archived.isNull { return nil }
    return value
  }

  func setTransformedValue(_ value: (any Sendable)?, for key: String, of object: ManagedObject)
    throws(StoreError)
  {
    try setValue(
      try transformedBytes(value, for: key, of: object.entity).map { .transformed($0) }, for: key,
      of: object)
  }

  /// `value` as transformable attribute `key` of `entity` stores it: checked against the
  /// attribute's value class and turned into bytes by its transformer; nil for nil.
  @usableFromInline
  func transformedBytes(_ value: (any Sendable)?, for key: String, of entity: String)
    throws(StoreError) -> [UInt8]?
  {
    let (attribute, transformer) = try transformable(key, of: entity)
    guard let value else { return nil }
    if let expected = attribute.valueClassName, !expected.isEmpty {
      let hierarchy = ValueClass.hierarchy(of: value)
      guard ValueClass.matches(hierarchy, expected) else {
        throw fail(
          .invalidValue,
          "\(entity).\(key) holds \(expected) values; a \(hierarchy.first ?? "?") (\(type(of: value))) was given"
        )
      }
    }
    do {
      return try transformer.reverseTransformedValue(value)
    } catch {
      throw fail(
        .invalidValue,
        "\(entity).\(key): \(Self.transformerName(attribute)) cannot store the value (nothing was set): \(error)"
      )
    }
  }

  private static func transformerName(_ attribute: AttributeDescription) -> String {
    ValueTransformerRegistry.effectiveName(attribute.valueTransformerName)
  }
}
