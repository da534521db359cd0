import ObjectModel
import SQLite

/// A scratchpad over a store, as Core Data's managed object context: insert, fetch, change and
/// delete objects in memory, then ``save()`` them in one transaction or ``rollback()``.
///
/// Relationship changes keep inverses in step; deletes follow each relationship's delete rule
/// (nullify, cascade, deny); saves increment each changed row's `Z_OPT` (and fail when another
/// writer changed it meanwhile) and raise `Z_PRIMARYKEY.Z_MAX` past every key handed out.
///
/// ```swift
/// let context = try ObjectContext(storePath: "Library.sqlite", model: model)
/// let book = try context.insert("Book")
/// try book.setValue(.string("Dune"), for: "title")
/// try context.save()
/// ```
public final class ObjectContext {
  /// The model.
  public let model: ObjectModel
  let store: CoreDataStore
  let layout: StoreLayout
  var registered: [ObjectReference: ManagedObject] = [:]
  var inserted = Set<ObjectReference>()
  var updated = Set<ObjectReference>()
  var deleted = Set<ObjectReference>()
  var joinInserts = Set<JoinPair>()
  var joinDeletes = Set<JoinPair>()
  var reordered = Set<OrderedMembership>()
  var nextKeys: [String: Int64] = [:]
  let entityNames: [Int: String]

  /// A row of a join table: the owner's and the destination's primary keys.
  struct JoinPair: Hashable {
    let table: String
    let source: Int64
    let destination: Int64
  }

  /// A to-many relationship whose order must be written.
  struct OrderedMembership: Hashable {
    let owner: ObjectReference
    let relationship: String
  }

  /// Opens a context on the store at `storePath`, which `model` must describe.
  /// - Throws: ``StoreError`` when the store cannot be opened for writing or the model does not
  ///   match it.
  public init(storePath: String, model: ObjectModel) throws(StoreError) {
    store = try CoreDataStore(path: storePath, writable: true)
    self.model = model
    layout = try store.layout(for: model)
    var names: [Int: String] = [:]
    for (name, number) in layout.entityNumbers { names[number] = name }
    entityNames = names
    do {
      try StandInFunctions.register(on: store.database)
    } catch {
      throw StoreError(
        .database, "cannot register Core Data's trigger functions", path: storePath,
        underlying: error)
    }
  }

  /// Forgets every object read so far, to keep memory flat in long batch jobs; objects held
  /// elsewhere are read again when next asked for.
  /// - Throws: ``StoreError`` when there are unsaved changes (save or roll back first).
  public func reset() throws(StoreError) {
    guard !hasChanges && reordered.isEmpty else {
      throw fail(.invalidValue, "the context has unsaved changes; save or roll back before reset")
    }
    registered.removeAll()
  }

  /// Whether there are unsaved changes.
  public var hasChanges: Bool {
    !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !joinInserts.isEmpty
      || !joinDeletes.isEmpty
  }

  func fail(_ kind: StoreError.Kind, _ detail: String) -> StoreError {
    StoreError(kind, detail, path: store.path)
  }

  func wrap(_ error: any Error, _ detail: String) -> StoreError {
    if let error = error as? StoreError { return error }
    return StoreError(.database, detail, path: store.path, underlying: error as? SQLiteError)
  }

  // MARK: Loading

  func table(for entity: String) throws(StoreError) -> StoreLayout.Table {
    guard let table = layout.table(for: entity) else {
      throw fail(.invalidValue, "the model has no entity \(entity)")
    }
    return table
  }

  /// Loads objects of `table` matching an SQL filter, registering them (objects already
  /// registered keep their in-memory state).
  func load(_ table: StoreLayout.Table, filter: String?, bindings: [SQLiteValue]) throws(StoreError)
    -> [ManagedObject]
  {
    do {
      let reader = try TableReader(
        table: table, layout: layout, database: store.database, filter: filter)
      try reader.bind(bindings)
      var result: [ManagedObject] = []
      try reader.readRows { record in result.append(register(record)) }
      return result
    } catch {
      throw wrap(error, "cannot read \(table.name)")
    }
  }

  func register(_ record: ObjectRecord) -> ManagedObject {
    if let existing = registered[record.reference] { return existing }
    let object = ManagedObject(record: record, context: self)
    registered[record.reference] = object
    return object
  }

  /// The object with `reference`, from memory or the store.
  public func object(with reference: ObjectReference) throws(StoreError) -> ManagedObject {
    if let object = registered[reference] { return object }
    let table = try table(for: reference.entity)
    guard
      let object = try load(table, filter: "Z_PK = ?", bindings: [.integer(reference.primaryKey)])
        .first,
      object.reference == reference
    else {
      throw fail(.invalidValue, "no object \(reference) in the store")
    }
    return object
  }

  // MARK: Fetching

  /// The objects that match `request`, pending changes included.
  public func fetch(_ request: FetchRequest) throws(StoreError) -> [ManagedObject] {
    let table = try table(for: request.entity)
    let entities =
      request.includesSubentities
      ? model.hierarchy(from: request.entity).map(\.name) : [request.entity]
    let numbers = entities.compactMap { layout.entityNumbers[$0] }
    var filter = "Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    var bindings: [SQLiteValue] = []
    if let predicate = request.predicate,
      let sql = sqlFilter(predicate, table: table, bindings: &bindings)
    {
      filter += " AND (\(sql))"
    }
    var candidates: [ObjectReference: ManagedObject] = [:]
    for object in try load(table, filter: filter, bindings: bindings) {
      candidates[object.reference] = object
    }
    // Objects changed or inserted in memory may match now though their stored rows do not.
    let wanted = Set(entities)
    for (reference, object) in registered where wanted.contains(reference.entity) {
      candidates[reference] = object
    }
    var result = candidates.values.filter { object in
      !object.isDeleted && (request.predicate.map { evaluate($0, on: object) } ?? true)
    }
    result.sort { a, b in
      for descriptor in request.sortDescriptors {
        let order = compareOptional(a.attributes[descriptor.key], b.attributes[descriptor.key])
        if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
      }
      return a.primaryKey < b.primaryKey
    }
    if request.fetchLimit > 0 && result.count > request.fetchLimit {
      result = Array(result.prefix(request.fetchLimit))
    }
    return result
  }

  private func compareOptional(_ a: AttributeValue?, _ b: AttributeValue?) -> Int {
    switch (a, b) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let a?, let b?): return AttributeValue.compare(a, b) ?? 0
    }
  }

  func evaluate(_ predicate: Predicate, on object: ManagedObject) -> Bool {
    func compare(_ key: String, _ value: AttributeValue, _ test: (Int) -> Bool) -> Bool {
      guard let current = object.attributes[key], let order = AttributeValue.compare(current, value)
      else {
        return false
      }
      return test(order)
    }
    switch predicate {
    case .equal(let key, let value): return object.attributes[key] == value
    case .notEqual(let key, let value): return object.attributes[key] != value
    case .less(let key, let value): return compare(key, value) { $0 < 0 }
    case .lessOrEqual(let key, let value): return compare(key, value) { $0 <= 0 }
    case .greater(let key, let value): return compare(key, value) { $0 > 0 }
    case .greaterOrEqual(let key, let value): return compare(key, value) { $0 >= 0 }
    case .relatedTo(let key, let reference): return object.toOne[key] == reference
    case .and(let all): return all.allSatisfy { evaluate($0, on: object) }
    case .or(let any): return any.contains { evaluate($0, on: object) }
    case .not(let inner): return !evaluate(inner, on: object)
    }
  }

  /// The predicate as SQL over the table's columns, when every key maps to a column; it only
  /// narrows the rows read (the predicate is evaluated again in memory).
  private func sqlFilter(
    _ predicate: Predicate, table: StoreLayout.Table, bindings: inout [SQLiteValue]
  ) -> String? {
    func column(_ key: String) -> String? {
      for columns in table.attributes.values {
        if let match = columns.first(where: { $0.attribute.name == key }) { return match.column }
      }
      for columns in table.toOne.values {
        if let match = columns.first(where: { $0.relationship.name == key }) { return match.column }
      }
      return nil
    }
    func binary(_ key: String, _ op: String, _ value: AttributeValue?) -> String? {
      guard let column = column(key) else { return nil }
      bindings.append(value.map { SQLValues.sqlite($0) } ?? .null)
      return "\(column) \(op) ?"
    }
    switch predicate {
    case .equal(let key, let value): return binary(key, "IS", value)
    case .notEqual(let key, let value): return binary(key, "IS NOT", value)
    case .less(let key, let value): return binary(key, "<", value)
    case .lessOrEqual(let key, let value): return binary(key, "<=", value)
    case .greater(let key, let value): return binary(key, ">", value)
    case .greaterOrEqual(let key, let value): return binary(key, ">=", value)
    case .relatedTo(let key, let reference):
      guard let column = column(key) else { return nil }
      bindings.append(reference.map { .integer($0.primaryKey) } ?? .null)
      return "\(column) IS ?"
    case .and(let all):
      var parts: [String] = []
      for part in all {
        if let sql = sqlFilter(part, table: table, bindings: &bindings) { parts.append("(\(sql))") }
      }
      return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    case .or(let any):
      var parts: [String] = []
      var local: [SQLiteValue] = []
      for part in any {
        guard let sql = sqlFilter(part, table: table, bindings: &local) else { return nil }
        parts.append("(\(sql))")
      }
      bindings += local
      return parts.joined(separator: " OR ")
    case .not:
      return nil
    }
  }

  // MARK: Inserting and changing

  /// Inserts a new object of `entity`, with its attributes' default values, and a primary key
  /// from its hierarchy's counter.
  public func insert(_ entity: String) throws(StoreError) -> ManagedObject {
    guard let description = model.entity(named: entity), let root = model.root(of: entity) else {
      throw fail(.invalidValue, "the model has no entity \(entity)")
    }
    guard !description.isAbstract else {
      throw fail(.invalidValue, "entity \(entity) is abstract and cannot have objects")
    }
    let key = try nextPrimaryKey(root: root.name)
    var attributes: [String: AttributeValue] = [:]
    for attribute in model.attributes(of: entity) {
      if let value = attribute.defaultValue { attributes[attribute.name] = value }
    }
    let object = ManagedObject(
      record: ObjectRecord(entity: entity, primaryKey: key, version: 0, attributes: attributes),
      context: self)
    registered[object.reference] = object
    inserted.insert(object.reference)
    return object
  }

  private func nextPrimaryKey(root: String) throws(StoreError) -> Int64 {
    if nextKeys[root] == nil {
      let table = try table(for: root)
      let number = layout.entityNumbers[root] ?? 0
      do {
        let statement = try store.database.prepare(
          "SELECT max((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?), ifnull((SELECT max(Z_PK) FROM \(table.name)), 0))"
        )
        try statement.bind(.integer(Int64(number)), at: 1)
        nextKeys[root] = (try statement.scalar().integerValue ?? 0) + 1
      } catch {
        throw wrap(error, "cannot read the primary-key counter of \(root)")
      }
    }
    let key = nextKeys[root]!
    nextKeys[root] = key + 1
    return key
  }

  func markUpdated(_ object: ManagedObject) {
    if !inserted.contains(object.reference) { updated.insert(object.reference) }
  }

  func setValue(_ value: AttributeValue?, for key: String, of object: ManagedObject)
    throws(StoreError)
  {
    guard !object.isDeleted else { throw fail(.invalidValue, "\(object) is deleted") }
    guard let attribute = model.attributes(of: object.entity).first(where: { $0.name == key })
    else {
      throw fail(.invalidValue, "\(object.entity) has no attribute \(key)")
    }
    guard !attribute.isDerived else {
      throw fail(.invalidValue, "\(object.entity).\(key) is derived; the store computes it")
    }
    if let value, !value.fits(attribute.type) {
      throw fail(
        .invalidValue,
        "\(object.entity).\(key) is \(attribute.type.rawValue); \(value) does not fit")
    }
    object.attributes[key] = value
    if !attribute.isTransient { markUpdated(object) }
  }

  // MARK: Relationships

  func relationship(_ name: String, of entity: String) throws(StoreError) -> RelationshipDescription
  {
    guard let relationship = model.relationships(of: entity).first(where: { $0.name == name })
    else {
      throw fail(.invalidValue, "\(entity) has no relationship \(name)")
    }
    guard !relationship.isTransient else {
      throw fail(
        .unsupported,
        "\(entity).\(name) is transient; the context does not keep transient relationships")
    }
    return relationship
  }

  func relatedObject(of object: ManagedObject, _ name: String) throws(StoreError) -> ManagedObject?
  {
    let relationship = try relationship(name, of: object.entity)
    guard !relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-many")
    }
    return try object.toOne[name].map { reference throws(StoreError) in
      try self.object(with: reference)
    }
  }

  /// The members of a to-many relationship, loaded from the store on first use and kept in
  /// step with in-memory changes afterwards.
  func members(of object: ManagedObject, _ name: String) throws(StoreError) -> [ObjectReference] {
    if let loaded = object.toMany[name] { return loaded }
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-one")
    }
    guard let inverse = model.inverse(of: relationship) else {
      throw fail(
        .unsupported,
        "\(object.entity).\(name) has no inverse; Core Data stores need one for to-many relationships"
      )
    }
    var members: [ObjectReference]
    let destinations = Set(model.hierarchy(from: relationship.destination).map(\.name))
    if !inverse.isToMany {
      // One-to-many: the members are the objects whose to-one points here.
      let table = try table(for: relationship.destination)
      let column = table.toOne.values.joined().first { $0.relationship.name == inverse.name }?
        .column
      var found: [ObjectReference: ManagedObject] = [:]
      if let column, !inserted.contains(object.reference) {
        for member in try load(
          table, filter: "\(column) = ?", bindings: [.integer(object.primaryKey)])
        {
          found[member.reference] = member
        }
      }
      for (reference, candidate) in registered where destinations.contains(reference.entity) {
        found[reference] = candidate
      }
      let orderColumn = layout.tables.compactMap { $0.orderKeys["\(object.entity).\(name)"] }.first
      var order: [ObjectReference: Int64] = [:]
      if relationship.isOrdered, let orderColumn,
        let table = layout.table(for: relationship.destination)
      {
        do {
          let statement = try store.database.prepare(
            "SELECT Z_PK, \(orderColumn) FROM \(table.name) WHERE \(column ?? "Z_PK") = ?")
          try statement.bind(.integer(object.primaryKey), at: 1)
          for row in try statement.allRows() {
            if let pk = row[0].integerValue, let key = row[1].integerValue {
              for reference in found.keys where reference.primaryKey == pk {
                order[reference] = key
              }
            }
          }
        } catch {
          throw wrap(error, "cannot read the order of \(object.entity).\(name)")
        }
      }
      members = found.values.filter { !$0.isDeleted && $0.toOne[inverse.name] == object.reference }
        .map(\.reference)
      members.sort {
        (order[$0] ?? Int64.max, $0.primaryKey) < (order[$1] ?? Int64.max, $1.primaryKey)
      }
    } else {
      // Many-to-many: rows of the join table, plus pending pairs.
      let (join, ownerSide) = try joinTable(for: object.entity, name)
      var keys: [Int64] = []
      if !inserted.contains(object.reference) {
        let mine = ownerSide ? join.sourceColumn : join.destinationColumn
        let theirs = ownerSide ? join.destinationColumn : join.sourceColumn
        let orderBy = join.orderColumn.map { "\($0), \(theirs)" } ?? theirs
        do {
          let statement = try store.database.prepare(
            "SELECT \(theirs) FROM \(join.name) WHERE \(mine) = ? ORDER BY \(orderBy)")
          try statement.bind(.integer(object.primaryKey), at: 1)
          keys = try statement.allRows().compactMap { $0[0].integerValue }
        } catch {
          throw wrap(error, "cannot read \(join.name)")
        }
      }
      func pending(_ pair: JoinPair) -> Int64? {
        guard pair.table == join.name else { return nil }
        if ownerSide { return pair.source == object.primaryKey ? pair.destination : nil }
        return pair.destination == object.primaryKey ? pair.source : nil
      }
      let removed = Set(joinDeletes.compactMap(pending))
      keys = keys.filter { !removed.contains($0) } + joinInserts.compactMap(pending).sorted()
      members = []
      let table = try table(for: relationship.destination)
      for key in keys {
        if let known = registered.keys.first(where: {
          $0.primaryKey == key && destinations.contains($0.entity)
        }) {
          members.append(known)
        } else if let loaded = try load(table, filter: "Z_PK = ?", bindings: [.integer(key)]).first
        {
          members.append(loaded.reference)
        }
      }
      members = members.filter { registered[$0]?.isDeleted != true }
    }
    object.toMany[name] = members
    return members
  }

  /// The join table of a many-to-many relationship, and whether `entity` is its owner side.
  func joinTable(for entity: String, _ name: String) throws(StoreError) -> (StoreLayout.Join, Bool)
  {
    let lineage = Set(model.lineage(of: entity).map(\.name))
    for join in layout.joins {
      if lineage.contains(join.entity) && join.relationship.name == name { return (join, true) }
      if join.relationship.inverse == name && lineage.contains(join.relationship.destination) {
        return (join, false)
      }
    }
    throw fail(.modelMismatch, "no join table for \(entity).\(name)")
  }

  /// The join-table row linking `object` to `member` through `name`.
  private func joinPair(_ object: ManagedObject, _ name: String, _ member: ObjectReference)
    throws(StoreError) -> JoinPair
  {
    let (join, ownerSide) = try joinTable(for: object.entity, name)
    return ownerSide
      ? JoinPair(table: join.name, source: object.primaryKey, destination: member.primaryKey)
      : JoinPair(table: join.name, source: member.primaryKey, destination: object.primaryKey)
  }

  func setToOne(of object: ManagedObject, _ name: String, to target: ObjectReference?)
    throws(StoreError)
  {
    guard !object.isDeleted else { throw fail(.invalidValue, "\(object) is deleted") }
    let relationship = try relationship(name, of: object.entity)
    guard !relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-many")
    }
    if let target {
      guard
        model.lineage(of: target.entity).contains(where: { $0.name == relationship.destination })
      else {
        throw fail(
          .invalidValue,
          "\(object.entity).\(name) points to \(relationship.destination), not \(target.entity)")
      }
    }
    let old = object.toOne[name]
    guard old != target else { return }
    object.toOne[name] = target
    markUpdated(object)
    guard let inverse = model.inverse(of: relationship) else { return }
    if let old, let previous = registered[old] ?? (try? self.object(with: old)) {
      if inverse.isToMany {
        previous.toMany[inverse.name]?.removeAll { $0 == object.reference }
        if inverse.isOrdered {
          reordered.insert(OrderedMembership(owner: previous.reference, relationship: inverse.name))
        }
      } else if previous.toOne[inverse.name] == object.reference {
        previous.toOne[inverse.name] = nil
        markUpdated(previous)
      }
    }
    if let target {
      let destination = try self.object(with: target)
      if inverse.isToMany {
        if destination.toMany[inverse.name] != nil,
          !destination.toMany[inverse.name]!.contains(object.reference)
        {
          destination.toMany[inverse.name]!.append(object.reference)
        }
        if inverse.isOrdered {
          reordered.insert(OrderedMembership(owner: target, relationship: inverse.name))
        }
      } else {
        // One-to-one: whatever pointed at the destination lets go of it.
        if let stolen = destination.toOne[inverse.name], stolen != object.reference,
          let holder = registered[stolen] ?? (try? self.object(with: stolen))
        {
          holder.toOne[name] = nil
          markUpdated(holder)
        }
        destination.toOne[inverse.name] = object.reference
        markUpdated(destination)
      }
    }
  }

  func addMember(_ member: ObjectReference, to object: ManagedObject, _ name: String)
    throws(StoreError)
  {
    guard !object.isDeleted else { throw fail(.invalidValue, "\(object) is deleted") }
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany, let inverse = model.inverse(of: relationship) else {
      throw fail(
        .invalidValue, "\(object.entity).\(name) is not a to-many relationship with an inverse")
    }
    guard model.lineage(of: member.entity).contains(where: { $0.name == relationship.destination })
    else {
      throw fail(
        .invalidValue,
        "\(object.entity).\(name) holds \(relationship.destination), not \(member.entity)")
    }
    _ = try members(of: object, name)
    guard !(object.toMany[name]?.contains(member) ?? false) else { return }
    let other = try self.object(with: member)
    if !inverse.isToMany {
      try setToOne(of: other, inverse.name, to: object.reference)
      if !(object.toMany[name]?.contains(member) ?? false) { object.toMany[name]?.append(member) }
    } else {
      let pair = try joinPair(object, name, member)
      if joinDeletes.remove(pair) == nil { joinInserts.insert(pair) }
      object.toMany[name]?.append(member)
      if other.toMany[inverse.name] != nil, !other.toMany[inverse.name]!.contains(object.reference)
      {
        other.toMany[inverse.name]!.append(object.reference)
      }
      if inverse.isOrdered {
        reordered.insert(OrderedMembership(owner: member, relationship: inverse.name))
      }
    }
    if relationship.isOrdered {
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
    }
  }

  func removeMember(_ member: ObjectReference, from object: ManagedObject, _ name: String)
    throws(StoreError)
  {
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany, let inverse = model.inverse(of: relationship) else {
      throw fail(
        .invalidValue, "\(object.entity).\(name) is not a to-many relationship with an inverse")
    }
    guard try members(of: object, name).contains(member) else { return }
    let other = try self.object(with: member)
    if !inverse.isToMany {
      try setToOne(of: other, inverse.name, to: nil)
    } else {
      let pair = try joinPair(object, name, member)
      if joinInserts.remove(pair) == nil { joinDeletes.insert(pair) }
      other.toMany[inverse.name]?.removeAll { $0 == object.reference }
    }
    object.toMany[name]?.removeAll { $0 == member }
    if relationship.isOrdered {
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
    }
  }
}

/// Conversions between typed values and SQLite values, as Core Data stores them.
enum SQLValues {
  static func sqlite(_ value: AttributeValue) -> SQLiteValue {
    switch value {
    case .integer(let v): return .integer(v)
    case .double(let v), .date(let v): return .real(v)
    case .decimal(let v): return Double(v).map(SQLiteValue.real) ?? .text(v)
    case .string(let v), .uri(let v): return .text(v)
    case .bool(let v): return .integer(v ? 1 : 0)
    case .data(let v), .uuid(let v), .transformed(let v): return .blob(v)
    }
  }
}

/// Stand-ins for the SQL functions Core Data registers at run time and its derived-attribute
/// triggers call; without them, inserting into such a table fails with "no such function".
enum StandInFunctions {
  static let names = [
    "NSCoreDataDATriggerUpdatedAffectedObjectValue",
    "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
  ]

  static func register(on database: Database) throws(SQLiteError) {
    for name in names {
      try database.createFunction(name) { _ in .null }
    }
  }
}
