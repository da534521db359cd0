import ObjectModel

/// An object's attribute values, one slot for each attribute of its entity (in its
/// ``EntityTraits``' order), as `NSManagedObject` keeps its values: a key is found by the
/// entity's table of slots, and an object holds an array of values rather than a dictionary of
/// its own.
struct AttributeSlots: Equatable {
  /// The entity's slots, by name.
  let traits: EntityTraits
  /// The values, by slot; nil for none.
  private(set) var values: [AttributeValue?]

  /// Every slot empty.
  init(traits: EntityTraits) {
    self.traits = traits
    values = Array(repeating: nil, count: traits.slotNames.count)
  }

  /// The values of `dictionary`, by name; names the entity has no attribute of are left out.
  init(_ dictionary: [String: AttributeValue], traits: EntityTraits) {
    self.init(traits: traits)
    for (name, value) in dictionary {
      if let slot = traits.slots[name] { values[slot] = value }
    }
  }

  /// `values`, one per slot.
  init(values: [AttributeValue?], traits: EntityTraits) {
    precondition(values.count == traits.slotNames.count, "one value per slot")
    self.traits = traits
    self.values = values
  }

  /// The value of attribute `key`; nil when it has none or the entity has no such attribute.
  /// Setting a key the entity does not have changes nothing.
  subscript(key: String) -> AttributeValue? {
    get { traits.slots[key].flatMap { values[$0] } }
    set {
      guard let slot = traits.slots[key] else {
        assertionFailure("\(traits.name) has no attribute \(key)")
        return
      }
      values[slot] = newValue
    }
  }

  /// The value in `slot`.
  subscript(slot slot: Int) -> AttributeValue? {
    get { values[slot] }
    set { values[slot] = newValue }
  }

  /// The same values (of the same entity).
  static func == (lhs: AttributeSlots, rhs: AttributeSlots) -> Bool {
    lhs.traits === rhs.traits && lhs.values == rhs.values
  }
}
