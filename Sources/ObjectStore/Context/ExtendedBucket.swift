import PropertyList

/// An object's extended attributes as its bucket stores them: key–value pairs in key order.
///
/// A bucket holds a few keys and is decoded once per object read, so it is kept as sorted
/// pairs rather than a dictionary: decoding one hashes nothing and allocates at most once (not
/// at all for a bucket of one key), a lookup compares a few strings (a binary search in a
/// large bucket), and the pairs are written back in the order a binary property list's
/// dictionary takes (keys sorted), with no sort.
struct ExtendedBucket {
  typealias Entry = (key: String, value: PropertyListValue)

  private enum Storage {
    /// No key, or one: no array to allocate.
    case none
    case one(Entry)
    /// Two keys or more, sorted, each once.
    case many([Entry])
  }

  private var storage: Storage

  /// Above this many keys a lookup searches by halves rather than comparing each key.
  private static let linearLookupLimit = 8

  /// A bucket with no keys.
  static let empty = ExtendedBucket(storage: .none)

  private init(storage: Storage) {
    self.storage = storage
  }

  /// The bucket holding `entries`, given in any order; a key given twice keeps its last value,
  /// as a dictionary would.
  init(entries: [Entry]) {
    self.init(sorted: Self.sortedUnique(entries))
  }

  private init(sorted entries: [Entry]) {
    switch entries.count {
    case 0: storage = .none
    case 1: storage = .one(entries[0])
    default: storage = .many(entries)
    }
  }

  /// `entries` sorted by key, the last of each repeated key kept; as given when already so.
  private static func sortedUnique(_ entries: [Entry]) -> [Entry] {
    var isSorted = true
    var index = entries.startIndex
    while isSorted, index + 1 < entries.endIndex {
      isSorted = entries[index].key < entries[index + 1].key
      index += 1
    }
    if isSorted { return entries }
    // By key, and for one key by position, so that the last of each run is the one kept.
    let ordered = entries.enumerated().sorted {
      ($0.element.key, $0.offset) < ($1.element.key, $1.offset)
    }
    var kept: [Entry] = []
    kept.reserveCapacity(ordered.count)
    for (position, item) in ordered.enumerated() {
      let isLastOfKey =
        position + 1 == ordered.count || ordered[position + 1].element.key != item.element.key
      if isLastOfKey { kept.append(item.element) }
    }
    return kept
  }

  /// The bucket a binary property list holds; nil when its top object is not a dictionary.
  /// - Throws: ``PropertyListError`` when the bytes are not a well-formed property list.
  init?(decoding bytes: [UInt8]) throws(PropertyListError) {
    var first: Entry?
    var more: [Entry] = []
    let isDictionary = try BinaryPropertyListReader(bytes: bytes).forEachDictionaryEntry {
      key, value in
      if first == nil {
        first = (key, value)
      } else {
        if more.isEmpty, let first { more.append(first) }
        more.append((key, value))
      }
    }
    guard isDictionary else { return nil }
    if !more.isEmpty {
      self.init(entries: more)
    } else if let first {
      self.init(storage: .one(first))
    } else {
      self.init(storage: .none)
    }
  }

  /// Whether the bucket holds no keys.
  var isEmpty: Bool {
    if case .none = storage { return true }
    return false
  }

  /// The pairs, sorted by key.
  var entries: [Entry] {
    switch storage {
    case .none: []
    case .one(let entry): [entry]
    case .many(let entries): entries
    }
  }

  /// The value of `key`, nil when the bucket does not hold it.
  subscript(key: String) -> PropertyListValue? {
    switch storage {
    case .none:
      return nil
    case .one(let entry):
      return entry.key == key ? entry.value : nil
    case .many(let entries):
      if entries.count <= Self.linearLookupLimit {
        for entry in entries where entry.key == key { return entry.value }
        return nil
      }
      let (index, found) = Self.position(of: key, in: entries)
      return found ? entries[index].value : nil
    }
  }

  /// Where `key` is in `entries`, or where it would go to keep the keys sorted.
  private static func position(of key: String, in entries: [Entry]) -> (index: Int, found: Bool) {
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
    // The common case, one key set in a bucket of at most that key, allocates nothing.
    if changes.count == 1, let (key, change) = changes.first {
      switch storage {
      case .none:
        return change.map { ExtendedBucket(storage: .one((key, $0))) } ?? self
      case .one(let entry) where entry.key == key:
        return change.map { ExtendedBucket(storage: .one((key, $0))) } ?? .empty
      default:
        break
      }
    }
    var merged = entries
    for (key, change) in changes {
      let (index, found) = Self.position(of: key, in: merged)
      switch (change, found) {
      case (let value?, true): merged[index].value = value
      case (let value?, false): merged.insert((key, value), at: index)
      case (nil, true): merged.remove(at: index)
      case (nil, false): break
      }
    }
    return ExtendedBucket(sorted: merged)
  }

  /// Adds the bucket to `writer` as a dictionary, its keys in sorted order (as
  /// ``BinaryPropertyListWriter/value(_:)`` would write them).
  func write(to writer: inout BinaryPropertyListWriter) -> BinaryPropertyListWriter.Reference {
    let start = writer.stackCount
    func add(_ entry: Entry) {
      writer.push(writer.string(entry.key))
      writer.push(writer.value(entry.value))
    }
    switch storage {
    case .none: break
    case .one(let entry): add(entry)
    case .many(let entries): for entry in entries { add(entry) }
    }
    return writer.makeDictionary(fromStackIndex: start)
  }
}
