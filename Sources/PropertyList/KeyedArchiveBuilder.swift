/// Writes `NSKeyedArchiver` archives, the mirror of ``KeyedArchive``: `$archiver`, `$version`,
/// `$top`, and `$objects` with `$null` first, objects referenced by UID, each class described
/// once (`$classname`, `$classes`).
///
/// Objects are made first and filled in afterwards, so they may refer to each other in
/// cycles; an object referred to from several places is written once. Values are laid out as
/// `NSKeyedArchiver` lays them out: an object takes its UID when first reached, then its values
/// in the order they were set, depth first, and its class description follows them.
///
/// ```swift
/// var builder = KeyedArchiveBuilder()
/// let entity = builder.makeObject(classes: ["NSEntityDescription", "NSObject"])
/// builder.set(.value(.string("Book")), forKey: "NSEntityName", of: entity)
/// builder.set(.inline(.bool(false)), forKey: "NSIsAbstract", of: entity)
/// let bytes = builder.archive(root: .object(entity))
/// ```
public struct KeyedArchiveBuilder: Sendable {
  /// An object being built, valid in the builder that made it.
  public struct ObjectID: Hashable, Sendable {
    let index: Int
  }

  /// What a key or a collection refers to: an entry of `$objects`.
  public enum Value: Hashable, Sendable {
    /// `$null` (UID 0): an absent object.
    case null
    /// A plain entry (a string, a number, data) written where it is referred to; each use is
    /// an entry of its own, as distinct Foundation instances are.
    case plain(PropertyListValue)
    /// An object made with ``KeyedArchiveBuilder/makeObject(classes:)``.
    case object(ObjectID)

    /// A string (`NSString`).
    public static func string(_ text: String) -> Value { .plain(.string(text)) }
    /// An integer (`NSNumber`).
    public static func integer(_ value: Int64) -> Value { .plain(.integer(value)) }
    /// A real (`NSNumber`).
    public static func real(_ value: Double) -> Value { .plain(.real(value)) }
    /// A boolean (`NSNumber`).
    public static func bool(_ value: Bool) -> Value { .plain(.bool(value)) }
    /// Bytes (`NSData`).
    public static func data(_ bytes: [UInt8]) -> Value { .plain(.data(bytes)) }
  }

  /// What an object holds under a key.
  public enum Field: Hashable, Sendable {
    /// A value written in the object itself (`encodeBool:`, `encodeInteger:`, `encodeDouble:`,
    /// `encodeBytes:`): a property list without UIDs.
    case inline(PropertyListValue)
    /// A reference to an entry (`encodeObject:`).
    case value(Value)
    /// An array of references written in the object itself, as Foundation's collections keep
    /// `NS.objects` and `NS.keys`.
    case values([Value])
  }

  private struct Object: Sendable {
    var classes: [String]
    var fields: [(key: String, field: Field)] = []
  }

  private var objects: [Object] = []

  /// An empty builder.
  public init() {}

  /// The number of objects made so far.
  public var objectCount: Int { objects.count }

  /// Makes an object of a class, given with its ancestors (most specific first:
  /// `["NSMutableArray", "NSArray", "NSObject"]`); fill it with ``set(_:forKey:of:)``.
  public mutating func makeObject(classes: [String]) -> ObjectID {
    objects.append(Object(classes: classes))
    return ObjectID(index: objects.count - 1)
  }

  /// Sets what `object` holds under `key`, replacing an earlier value and keeping its place.
  public mutating func set(_ field: Field, forKey key: String, of object: ObjectID) {
    if let place = objects[object.index].fields.firstIndex(where: { $0.key == key }) {
      objects[object.index].fields[place].field = field
    } else {
      objects[object.index].fields.append((key, field))
    }
  }

  /// The class hierarchy of `object`.
  public func classes(of object: ObjectID) -> [String] { objects[object.index].classes }

  // MARK: Foundation values

  /// An `NSArray` (or the class given) of `elements`.
  public mutating func array(_ elements: [Value], classes: [String] = ["NSArray", "NSObject"])
    -> Value
  {
    let array = makeObject(classes: classes)
    set(.values(elements), forKey: "NS.objects", of: array)
    return .object(array)
  }

  /// An `NSSet` (or the class given) of `members`.
  public mutating func set(_ members: [Value], classes: [String] = ["NSSet", "NSObject"]) -> Value {
    array(members, classes: classes)
  }

  /// An `NSDictionary` (or the class given) of `entries`, in the order given.
  public mutating func dictionary(
    _ entries: [(key: Value, value: Value)], classes: [String] = ["NSDictionary", "NSObject"]
  ) -> Value {
    let dictionary = makeObject(classes: classes)
    set(.values(entries.map(\.key)), forKey: "NS.keys", of: dictionary)
    set(.values(entries.map(\.value)), forKey: "NS.objects", of: dictionary)
    return .object(dictionary)
  }

  /// An `NSDate`.
  public mutating func date(_ date: PropertyListDate) -> Value {
    let object = makeObject(classes: ["NSDate", "NSObject"])
    set(.inline(.real(date.secondsSinceReferenceDate)), forKey: "NS.time", of: object)
    return .object(object)
  }

  /// An `NSMutableString`, which Foundation archives as an object with `NS.string`.
  public mutating func mutableString(_ text: String) -> Value {
    let object = makeObject(classes: ["NSMutableString", "NSString", "NSObject"])
    set(.inline(.string(text)), forKey: "NS.string", of: object)
    return .object(object)
  }

  /// A decoded value written back: Foundation values as `NSKeyedArchiver` writes them (arrays,
  /// sets and dictionaries as `NSArray`, `NSSet`, `NSDictionary`; dates as `NSDate`), and an
  /// object of another class with all it holds, each object once.
  public mutating func value(_ decoded: KeyedArchiveValue) throws(PropertyListError) -> Value {
    var copied: [UInt64: ObjectID] = [:]
    return try value(decoded, copied: &copied)
  }

  private mutating func value(_ decoded: KeyedArchiveValue, copied: inout [UInt64: ObjectID])
    throws(PropertyListError) -> Value
  {
    switch decoded {
    case .null: return .null
    case .bool(let v): return .bool(v)
    case .integer(let v): return .integer(v)
    case .real(let v): return .real(v)
    case .string(let v): return .string(v)
    case .data(let v): return .data(v)
    case .date(let v): return date(v)
    case .array(let elements):
      var values: [Value] = []
      for element in elements { values.append(try value(element, copied: &copied)) }
      return array(values)
    case .set(let members):
      var values: [Value] = []
      for member in members { values.append(try value(member, copied: &copied)) }
      return set(values)
    case .dictionary(let entries):
      var values: [(key: Value, value: Value)] = []
      for (key, element) in entries {
        values.append((try value(key, copied: &copied), try value(element, copied: &copied)))
      }
      return dictionary(values)
    case .object(let object):
      return .object(try copy(object.archive, uid: object.uid, copied: &copied))
    }
  }

  /// Copies the objects of `archive` reachable from `$top`, each once, with every field as it
  /// was (inline values inline, references as references), so an archive can be read, changed
  /// and written again. Returns `$top`'s entries; keep them in a constant before passing them
  /// to ``archivePropertyList(top:)``, which must see the builder after the copy.
  public mutating func copy(_ archive: KeyedArchive) throws(PropertyListError) -> [(
    key: String, value: Value
  )] {
    var copied: [UInt64: ObjectID] = [:]
    var top: [(key: String, value: Value)] = []
    for key in archive.topKeys {
      guard case .uid(let uid)? = archive.top[key] else {
        throw PropertyListError(
          .invalidKeyedArchive, "$top.\(key) is not a UID", location: "$top.\(key)")
      }
      top.append((key, try entry(archive, uid: uid, copied: &copied)))
    }
    return top
  }

  private mutating func entry(
    _ archive: KeyedArchive, uid: UInt64, copied: inout [UInt64: ObjectID]
  ) throws(PropertyListError) -> Value {
    guard uid < UInt64(archive.objects.count) else {
      throw PropertyListError(
        .invalidKeyedArchive,
        "UID \(uid) is outside $objects (\(archive.objects.count) entries)")
    }
    if uid == 0 { return .null }
    let raw = archive.objects[Int(uid)]
    guard case .dictionary(let fields) = raw, case .uid = fields["$class"] else {
      return .plain(raw)
    }
    return .object(try copy(archive, uid: uid, copied: &copied))
  }

  private mutating func copy(
    _ archive: KeyedArchive, uid: UInt64, copied: inout [UInt64: ObjectID]
  ) throws(PropertyListError) -> ObjectID {
    if let done = copied[uid] { return done }
    guard case .dictionary(let fields) = archive.objects[Int(uid)],
      case .uid(let classUID)? = fields["$class"]
    else {
      throw PropertyListError(.invalidKeyedArchive, "$objects[\(uid)] is not an object")
    }
    let (_, hierarchy) = try archive.classInfo(classUID, path: "$objects[\(uid)]")
    let object = makeObject(classes: hierarchy)
    copied[uid] = object
    for key in fields.keys.sorted() where key != "$class" {
      switch fields[key]! {
      case .uid(let reference):
        set(.value(try entry(archive, uid: reference, copied: &copied)), forKey: key, of: object)
      case .array(let elements) where elements.contains(where: \.isUID):
        var values: [Value] = []
        for element in elements {
          guard case .uid(let reference) = element else {
            throw PropertyListError(
              .invalidKeyedArchive, "$objects[\(uid)].\(key) mixes UIDs and values")
          }
          values.append(try entry(archive, uid: reference, copied: &copied))
        }
        set(.values(values), forKey: key, of: object)
      case let inline:
        set(.inline(inline), forKey: key, of: object)
      }
    }
    return object
  }

  // MARK: Writing

  /// The archive as a property list, with `root` (and any other entries) in `$top`.
  public func archivePropertyList(top: [(key: String, value: Value)]) -> PropertyListValue {
    var layout = Layout(objects: objects)
    var topEntries: [String: PropertyListValue] = [:]
    for (key, value) in top { topEntries[key] = .uid(layout.place(value)) }
    return .dictionary([
      "$archiver": .string("NSKeyedArchiver"),
      "$version": .integer(100_000),
      "$top": .dictionary(topEntries),
      "$objects": .array(layout.entries),
    ])
  }

  /// `archive` read and written again by this writer: the same graph, laid out as
  /// `NSKeyedArchiver` lays it out (see ``copy(_:)``).
  public static func rewritten(_ archive: KeyedArchive) throws(PropertyListError) -> [UInt8] {
    var builder = KeyedArchiveBuilder()
    let top = try builder.copy(archive)
    return builder.archivePropertyList(top: top).binaryPropertyList()
  }

  /// The archive as binary property-list bytes, with `root` as its root object.
  public func archive(root: Value) -> [UInt8] {
    archivePropertyList(top: [("root", root)]).binaryPropertyList()
  }

  /// Lays objects out in `$objects` as `NSKeyedArchiver` does.
  private struct Layout {
    let objects: [Object]
    var entries: [PropertyListValue] = [.string("$null")]
    var placed: [Int: UInt64] = [:]
    var classUIDs: [[String]: UInt64] = [:]

    init(objects: [Object]) { self.objects = objects }

    /// The UID of `value`, placing it (and all it holds) first if it is not placed yet.
    /// Iterative, so deep or long chains of objects cannot exhaust the stack.
    mutating func place(_ value: Value) -> UInt64 {
      switch value {
      case .null: return 0
      case .plain(let plain):
        entries.append(plain)
        return UInt64(entries.count - 1)
      case .object(let id):
        if let uid = placed[id.index] { return uid }
        return placeObject(id.index)
      }
    }

    private struct Frame {
      var index: Int
      var uid: UInt64
      var field = 0
      var element = 0
      var fields: [String: PropertyListValue] = [:]
      var pending: [PropertyListValue] = []
    }

    private mutating func placeObject(_ root: Int) -> UInt64 {
      var stack: [Frame] = [open(root)]
      let rootUID = stack[0].uid
      while !stack.isEmpty {
        var frame = stack.removeLast()
        let fields = objects[frame.index].fields
        var descend: Int?
        while frame.field < fields.count, descend == nil {
          let (key, field) = fields[frame.field]
          switch field {
          case .inline(let value):
            frame.fields[key] = value
            frame.field += 1
          case .value(let value):
            if case .object(let id) = value, placed[id.index] == nil {
              descend = id.index
            } else {
              frame.fields[key] = .uid(place(value))
              frame.field += 1
            }
          case .values(let values):
            while frame.element < values.count, descend == nil {
              if case .object(let id) = values[frame.element], placed[id.index] == nil {
                descend = id.index
              } else {
                frame.pending.append(.uid(place(values[frame.element])))
                frame.element += 1
              }
            }
            if descend == nil {
              frame.fields[key] = .array(frame.pending)
              frame.pending = []
              frame.element = 0
              frame.field += 1
            }
          }
        }
        if let child = descend {
          stack.append(frame)
          stack.append(open(child))
          continue
        }
        frame.fields["$class"] = .uid(classUID(objects[frame.index].classes))
        entries[Int(frame.uid)] = .dictionary(frame.fields)
      }
      return rootUID
    }

    /// Gives an object its UID (a placeholder entry until its fields are done).
    private mutating func open(_ index: Int) -> Frame {
      entries.append(.null)
      let uid = UInt64(entries.count - 1)
      placed[index] = uid
      return Frame(index: index, uid: uid)
    }

    private mutating func classUID(_ classes: [String]) -> UInt64 {
      if let uid = classUIDs[classes] { return uid }
      entries.append(
        .dictionary([
          "$classname": .string(classes.first ?? "NSObject"),
          "$classes": .array(classes.map(PropertyListValue.string)),
        ]))
      let uid = UInt64(entries.count - 1)
      classUIDs[classes] = uid
      return uid
    }
  }
}

extension PropertyListValue {
  fileprivate var isUID: Bool {
    if case .uid = self { return true }
    return false
  }
}
