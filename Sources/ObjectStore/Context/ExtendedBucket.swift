import PropertyList

/// An object's extended attributes as its bucket stores them: key–value pairs in key order.
///
/// A bucket holds a few keys and is decoded once per object read, so it is kept as a sorted
/// array rather than a dictionary: decoding one allocates once and hashes nothing, a lookup
/// compares a few strings (a binary search in a large bucket), and the pairs are written back
/// in the order a binary property list's dictionary takes (keys sorted), with no sort.
struct ExtendedBucket {
  /// The pairs, sorted by key, each key once.
  private(set) var entries: [(key: String, value: PropertyListValue)]

  /// Above this many keys a lookup searches by halves rather than comparing each key.
  private static let linearLookupLimit = 8

  /// A bucket with no keys.
  static let empty = ExtendedBucket(sorted: [])

  private init(sorted entries: [(key: String, value: PropertyListValue)]) {
    self.entries = entries
  }

  /// The bucket holding `entries`, given in any order; a key given twice keeps its last value,
  /// as a dictionary would.
  init(entries: [(key: String, value: PropertyListValue)]) {
    var isSorted = true
    var index = entries.startIndex
    while isSorted, index + 1 < entries.endIndex {
      isSorted = entries[index].key < entries[index + 1].key
      index += 1
    }
    if isSorted {
      self.entries = entries
      return
    }
    // By key, and for one key by position, so that the last of each run is the one kept.
    let ordered = entries.enumerated().sorted {
      ($0.element.key, $0.offset) < ($1.element.key, $1.offset)
    }
    var kept: [(key: String, value: PropertyListValue)] = []
    kept.reserveCapacity(ordered.count)
    for (position, item) in ordered.enumerated() {
      let isLastOfKey =
        position + 1 == ordered.count || ordered[position + 1].element.key != item.element.key
      if isLastOfKey { kept.append(item.element) }
    }
    self.entries = kept
  }

  /// The bucket a binary property list holds; nil when its top object is not a dictionary.
  /// - Throws: ``PropertyListError`` when the bytes are not a well-formed property list.
  init?(decoding bytes: [UInt8]) throws(PropertyListError) {
    guard let entries = try BinaryPropertyListReader(bytes: bytes).decodeDictionaryEntries()
    else { return nil }
    self.init(entries: entries)
  }

  /// Whether the bucket holds no keys.
  var isEmpty: Bool { entries.isEmpty }

  /// The value of `key`, nil when the bucket does not hold it.
  subscript(key: String) -> PropertyListValue? {
    if entries.count <= Self.linearLookupLimit {
      for entry in entries where entry.key == key { return entry.value }
      return nil
    }
    let (index, found) = position(of: key)
    return found ? entries[index].value : nil
  }

  /// Where `key` is, or where it would go to keep the keys sorted.
  private func position(of key: String) -> (index: Int, found: Bool) {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      let candidate = entries[middle].key
      if candidate == key { return (middle, true) }
      if candidate < key { low = middle + 1 } else { high = middle }
    }
    return (low, false)
  }

  /// The keys and values as a dictionary.
  var dictionary: [String: PropertyListValue] {
    Dictionary(entries, uniquingKeysWith: { _, last in last })
  }

  /// The bucket with `changes` applied: a value sets its key, nil removes it.
  func merging(_ changes: [String: PropertyListValue?]) -> ExtendedBucket {
    var merged = self
    for (key, change) in changes {
      let (index, found) = merged.position(of: key)
      switch (change, found) {
      case (let value?, true): merged.entries[index].value = value
      case (let value?, false): merged.entries.insert((key, value), at: index)
      case (nil, true): merged.entries.remove(at: index)
      case (nil, false): break
      }
    }
    return merged
  }

  /// Adds the bucket to `writer` as a dictionary, its keys in sorted order (as
  /// ``BinaryPropertyListWriter/value(_:)`` would write them).
  func write(to writer: inout BinaryPropertyListWriter) -> BinaryPropertyListWriter.Reference {
    let start = writer.stackCount
    for (key, value) in entries {
      writer.push(writer.string(key))
      writer.push(writer.value(value))
    }
    return writer.makeDictionary(fromStackIndex: start)
  }
}
