import ObjectModel

extension ManagedObject {
  /// The value of attribute `key` as a Swift value of type `T` (nil when it has none), with
  /// Core Data's numeric conversions (``AttributeConvertible``); a transformable attribute's
  /// value comes through its value transformer.
  ///
  /// ```swift
  /// let title = try book.value(for: "title", as: String.self)
  /// let pages: Int? = try book.value(for: "pagesCount")
  /// ```
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity, the key,
  ///   its type and `T` when the value does not convert, or the key is unknown.
  public func value<T: AttributeConvertible>(for key: String, as type: T.Type = T.self)
    throws(StoreError) -> T?
  {
    let attribute = context.model.attributes(of: entity).first { $0.name == key }
    if attribute?.type == .transformable {
      return try transformedValue(for: key, as: T.self)
    }
    guard let stored = try value(for: key) else { return nil }
    guard let converted = T(attributeValue: stored, type: attribute?.type ?? .undefined) else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is \(attribute?.type.rawValue ?? "an extended attribute") and holds \(stored), which is not a \(T.self)"
      )
    }
    return converted
  }

  /// Sets attribute `key` to a Swift value (nil empties it), converted for the attribute's type
  /// as Core Data converts (an integer into a Double attribute, 0 or 1 into a Boolean one, a
  /// whole Double into an integer one within its width); a transformable attribute's value
  /// goes through its value transformer.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity, the key,
  ///   its type and the value when it does not convert, or as ``setValue(_:for:)-(AttributeValue?,_)``.
  public func setValue<T: AttributeConvertible>(_ value: T?, for key: String) throws(StoreError) {
    guard let attribute = context.model.attributes(of: entity).first(where: { $0.name == key })
    else {
      throw context.fail(.invalidValue, "\(entity) has no attribute \(key)")
    }
    guard let value else { return try setValue(nil as AttributeValue?, for: key) }
    if attribute.type == .transformable { return try setTransformedValue(value, for: key) }
    guard let converted = value.attributeValue(for: attribute.type) else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is \(attribute.type.rawValue); \(value) (\(T.self)) does not convert to it"
      )
    }
    try setValue(converted, for: key)
  }

  /// The value of transformable attribute `key`, through its value transformer, as `T`.
  /// - Throws: ``StoreError`` when the value is not a `T`, or as
  ///   ``transformedValue(for:)``.
  public func transformedValue<T>(for key: String, as type: T.Type) throws(StoreError) -> T? {
    guard let value = try transformedValue(for: key) else { return nil }
    guard let typed = value as? T else {
      throw context.fail(
        .invalidValue, "\(entity).\(key) holds a \(Swift.type(of: value)), not a \(T.self)")
    }
    return typed
  }
}
