import ObjectStore
import PropertyList

/// What a chunk of objects holds by key, as the index says it (`ranges`, format 2 and later):
/// the smallest and largest primary key, and of every column of keys (to-one relationships,
/// many-to-many relationships, stored integer columns such as owner columns) the smallest and
/// largest value. A reader looking for some objects, or for the objects that point at some
/// others, skips the chunks whose ranges hold none of them: the pages of a thousand books are
/// in a few of a store's page chunks, and the ranges say which.
///
/// A column of keys with no value in the chunk has no range. Newer archives also give the
/// bounds of each attribute's values (``ValueBounds``: integers, reals, dates and
/// strings), so that a search by attribute skips the chunks whose bounds rule it out. The
/// ranges are checked wherever the chunk is decoded (``check(_:member:)``), and a chunk that
/// does not hold what its ranges say is damaged.
package struct ChunkRanges: Equatable, Sendable {
  /// The smallest and largest primary key.
  package var keys: ClosedRange<Int64>
  /// The smallest and largest value of each column of keys, by column key (a relationship's
  /// name, or `@columns/NAME`).
  package var links: [String: ClosedRange<Int64>]
  /// The bounds of each attribute's values, by attribute name (none for an attribute without
  /// values in the chunk, or of a type without bounds); nil in archives written before they
  /// were given.
  package var values: [String: ValueBounds]?

  package init(
    keys: ClosedRange<Int64>, links: [String: ClosedRange<Int64>],
    values: [String: ValueBounds]? = nil
  ) {
    self.keys = keys
    self.links = links
    self.values = values
  }

  /// The ranges of a decoded chunk, from its values; nil for a chunk without objects.
  package init?(_ batch: ObjectBatch) {
    guard let low = batch.primaryKeys.min(), let high = batch.primaryKeys.max() else {
      return nil
    }
    var links: [String: ClosedRange<Int64>] = [:]
    // Each column's bounds in two locals, then one entry (a column of a stored name may come
    // in several kinds: its integers are widened into one).
    func widen(_ key: String, _ body: ((Int64) -> Void) -> Void) {
      var (low, high) = (Int64.max, Int64.min)
      body { value in
        low = Swift.min(low, value)
        high = Swift.max(high, value)
      }
      guard low <= high else { return }
      if let known = links[key] {
        links[key] = Swift.min(known.lowerBound, low)...Swift.max(known.upperBound, high)
      } else {
        links[key] = low...high
      }
    }
    for column in batch.toOne {
      widen(column.name) { take in for key in column.keys { take(key) } }
    }
    for column in batch.toMany {
      widen(column.name) { take in
        for row in column.rows { for (key, _) in row { take(key) } }
      }
    }
    for column in batch.storedColumns {
      guard case .integers(let values) = column.values else { continue }
      widen(ColumnLayout.storedColumnPrefix + column.name) { take in
        for value in values { take(value) }
      }
    }
    var values: [String: ValueBounds] = [:]
    for attribute in batch.attributes {
      values[attribute.name] = ValueBounds(attribute)
    }
    self.init(keys: low...high, links: links, values: values)
  }

  /// The index's entry for them.
  package var propertyList: PropertyListValue {
    func pair(_ range: ClosedRange<Int64>) -> PropertyListValue {
      .array([.integer(range.lowerBound), .integer(range.upperBound)])
    }
    var entry: [String: PropertyListValue] = [
      "keys": pair(keys),
      "links": .dictionary(links.mapValues(pair)),
    ]
    if let values {
      entry["values"] = .dictionary(
        values.mapValues { bounds in
          switch bounds {
          case .integers(let range): pair(range)
          case .reals(let range): .array([.real(range.lowerBound), .real(range.upperBound)])
          case .texts(let low, let high): .array([.data(low), .data(high)])
          }
        })
    }
    return .dictionary(entry)
  }

  /// The ranges an index entry gives `member`; nil when it gives none (an archive written
  /// before archives had them, or a member that is not a chunk of objects).
  /// - Throws: ``ArchiveFormatError`` when they are there but not two integers, the first not
  ///   above the second, for the keys and every column.
  package init?(reading entry: PropertyListValue, member: String) throws(ArchiveFormatError) {
    guard let value = entry["ranges"] else { return nil }
    let damaged = ArchiveFormatError(
      member: ArchiveLayout.index, "the ranges it gives \(member) are damaged")
    func range(_ value: PropertyListValue?) throws(ArchiveFormatError) -> ClosedRange<Int64> {
      guard let pair = value?.arrayValue, pair.count == 2, let low = pair[0].integerValue,
        let high = pair[1].integerValue, low <= high
      else { throw damaged }
      return low...high
    }
    guard case .dictionary(let columns)? = value["links"] else { throw damaged }
    var links: [String: ClosedRange<Int64>] = [:]
    for (key, value) in columns { links[key] = try range(value) }
    var values: [String: ValueBounds]?
    if let given = value["values"] {
      guard case .dictionary(let attributes) = given else { throw damaged }
      values = [:]
      for (name, pair) in attributes {
        guard let pair = pair.arrayValue, pair.count == 2 else { throw damaged }
        switch (pair[0], pair[1]) {
        case (.integer(let low), .integer(let high)) where low <= high:
          values?[name] = .integers(low...high)
        case (.real(let low), .real(let high)) where low <= high:
          values?[name] = .reals(low...high)
        case (.data(let low), .data(let high))
        where low.count <= ValueBounds.textLimit && high.count <= ValueBounds.textLimit:
          values?[name] = .texts(low: low, high: high)
        default:
          throw damaged
        }
      }
    }
    self.init(keys: try range(value["keys"]), links: links, values: values)
  }

  /// Whether some object of the chunk may be one `filter` chooses, by the bounds of its
  /// attributes' values (every chunk may, in an archive that does not give them).
  package func mayMatch(_ filter: SelectionFilter) -> Bool {
    values.map(filter.mayMatch(within:)) ?? true
  }

  /// Whether the chunk may hold one of the objects `keys`.
  package func mayHold(keys wanted: Set<Int64>) -> Bool {
    Self.meets(keys, wanted)
  }

  /// Whether some object of the chunk may hold one of `values` in column `key`.
  package func mayHold(_ key: String, anyOf values: Set<Int64>) -> Bool {
    guard let range = links[key] else { return false }
    return Self.meets(range, values)
  }

  private static func meets(_ range: ClosedRange<Int64>, _ values: Set<Int64>) -> Bool {
    values.contains { range.contains($0) }
  }

  /// Checks that `batch`, decoded from `member`, holds what these ranges say of the columns it
  /// decoded: its keys, each of its columns of keys and the bounds of each attribute's values
  /// (a batch decoded in part has only some).
  /// - Throws: ``ArchiveFormatError`` naming the member when it does not.
  package func check(_ batch: ObjectBatch, member: String) throws(ArchiveFormatError) {
    guard let found = ChunkRanges(batch) else {
      throw ArchiveFormatError(member: member, "the index gives ranges to a chunk without objects")
    }
    var decoded = Set(batch.toOne.map(\.name)).union(batch.toMany.map(\.name))
    decoded.formUnion(batch.storedColumns.map { ColumnLayout.storedColumnPrefix + $0.name })
    guard found.keys == keys,
      decoded.allSatisfy({ found.links[$0] == links[$0] }),
      values.map({ given in
        batch.attributes.allSatisfy { found.values?[$0.name] == given[$0.name] }
      }) ?? true
    else { throw Self.mismatch(member) }
  }

  /// The problem of a chunk, `member`, that does not hold what its ranges say.
  static func mismatch(_ member: String) -> ArchiveFormatError {
    ArchiveFormatError(
      member: member, "its objects' keys or values are not those the index's ranges give (damaged)")
  }
}
