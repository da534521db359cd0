import ObjectModel
import SQLite

/// Foreign keys to be set on rows after they are all inserted: links that a migration delivers
/// from the other end of a relationship. They wait in a temporary table (on disk, not in
/// memory) and are applied in one `UPDATE … FROM` per column.
struct DeferredLinks {
  /// A column set of one table: the foreign key, the destination's entity column, the order
  /// column, and the relationship they store (for messages).
  struct Target: Hashable {
    let table: String
    let column: String
    let entityColumn: String?
    let orderColumn: String?
    let label: String
  }

  var targets: [Target] = []
  var numbers: [Target: Int] = [:]
  var insert: Statement?
}

extension StoreLoader {
  /// Stores a link from `source` through its relationship `name` to `target`, wherever the
  /// layout keeps it: the source's foreign key when the relationship is to-one, the target's
  /// when the inverse is to-one, the target's owner key (`Z<n><NAME>`) when a to-many has no
  /// inverse (these set after every row is in), else a join-table row (a row that exists
  /// already is kept).
  ///
  /// `order` is the target's position in an ordered to-many relationship.
  /// - Throws: ``StoreError`` (``StoreError/Kind/modelMismatch``) when the model has no such
  ///   relationship.
  package func link(
    _ source: ObjectReference, _ name: String, to target: ObjectReference, order: Int64? = nil
  ) throws(StoreError) {
    guard let layout else {
      throw StoreError(.unsupported, "prepare(model:entityRows:) first", path: path)
    }
    let model = layout.model
    guard
      let relationship = model.relationships(of: source.entity).first(where: { $0.name == name })
    else {
      throw StoreError(
        .modelMismatch, "\(source.entity) has no relationship \(name)", path: path)
    }
    let inverse = model.inverse(of: relationship)
    try endDirectWrites()
    try run("cannot store the link \(source) \(name) → \(target)") {
      if !relationship.isToMany {
        try queue(on: source, relationship: relationship, to: target, order: nil, layout: layout)
      } else if let inverse, !inverse.isToMany {
        try queue(
          on: target, relationship: inverse, to: source,
          order: relationship.isOrdered ? order ?? target.primaryKey : nil, layout: layout)
      } else if inverse == nil,
        let owner = layout.ownerColumns(ofToMany: name, in: source.entity)
      {
        // The member's row keeps its owner's key (and its place, when ordered).
        try enqueue(
          DeferredLinks.Target(
            table: owner.table.name, column: owner.column, entityColumn: nil,
            orderColumn: owner.orderColumn, label: "\(source.entity).\(name)"),
          row: target.primaryKey, value: source.primaryKey, entity: 0,
          order: owner.orderColumn == nil ? nil : order ?? target.primaryKey)
      } else if let join = join(for: source.entity, name, layout: layout) {
        try insertJoin(join, source.primaryKey, target.primaryKey, order: order)
      } else if let inverse, let join = join(for: target.entity, inverse.name, layout: layout) {
        try insertJoin(join, target.primaryKey, source.primaryKey, order: nil)
      } else {
        throw StoreError(
          .modelMismatch, "\(source.entity).\(name) has no join table", path: path)
      }
    }
  }

  private func insertJoin(_ join: StoreLayout.Join, _ source: Int64, _ target: Int64, order: Int64?)
    throws
  {
    let statement = try joinStatement(join)
    var bindings: [SQLiteValue] = [.integer(source), .integer(target)]
    if join.orderColumn != nil { bindings.append(.integer(order ?? target)) }
    try statement.bind(bindings)
    try statement.run()
  }

  /// Queues `owner`'s to-one `relationship` to be set to `target`.
  private func queue(
    on owner: ObjectReference, relationship: RelationshipDescription, to target: ObjectReference,
    order: Int64?, layout: StoreLayout
  ) throws {
    let model = layout.model
    guard let table = layout.table(for: owner.entity),
      let declaring = model.lineage(of: owner.entity).first(where: {
        $0.relationship(named: relationship.name) != nil
      }),
      let columns = table.toOne[declaring.name]?.first(where: {
        $0.relationship.name == relationship.name
      })
    else {
      throw StoreError(
        .modelMismatch, "\(owner.entity).\(relationship.name) has no column", path: path)
    }
    let orderColumn = layout.orderColumn(ofToOne: relationship, in: owner.entity)
    let key = DeferredLinks.Target(
      table: table.name, column: columns.column, entityColumn: columns.entityColumn,
      orderColumn: orderColumn, label: "\(declaring.name).\(relationship.name)")
    try enqueue(
      key, row: owner.primaryKey, value: target.primaryKey,
      entity: Int64(layout.entityNumbers[target.entity] ?? 0), order: order)
  }

  /// Queues row `row` of `key`'s table to get `value` in its column (`entity` in its entity
  /// column, `order` in its order column) once every row is in.
  private func enqueue(
    _ key: DeferredLinks.Target, row: Int64, value: Int64, entity: Int64, order: Int64?
  ) throws {
    let number: Int
    if let known = deferred.numbers[key] {
      number = known
    } else {
      if deferred.targets.isEmpty {
        try database.execute(
          "CREATE TEMP TABLE gv_deferred_link (target INTEGER, pk INTEGER, value INTEGER, ent INTEGER, ord INTEGER)"
        )
        deferred.insert = try database.prepare(
          "INSERT INTO temp.gv_deferred_link (target, pk, value, ent, ord) VALUES (?, ?, ?, ?, ?)")
      }
      number = deferred.targets.count
      deferred.targets.append(key)
      deferred.numbers[key] = number
    }
    try deferred.insert!.bind([
      .integer(Int64(number)), .integer(row), .integer(value), .integer(entity),
      order.map(SQLiteValue.integer) ?? .null,
    ])
    try deferred.insert!.run()
  }

  /// Sets the queued foreign keys; a row asked to point at two objects through a to-one
  /// relationship is an error naming it.
  func applyDeferredLinks() throws(StoreError) {
    guard !deferred.targets.isEmpty else { return }
    let targets = deferred.targets
    let conflict: [SQLiteValue]? = try run("cannot check the links") {
      try database.execute("CREATE INDEX temp.gv_deferred_link_pk ON gv_deferred_link (target, pk)")
      return try database.prepare(
        "SELECT target, pk, COUNT(DISTINCT value) FROM temp.gv_deferred_link GROUP BY target, pk HAVING COUNT(DISTINCT value) > 1 LIMIT 1"
      ).allRows().first
    }
    if let conflict, let number = conflict[0].integerValue, let pk = conflict[1].integerValue {
      let target = targets[Int(number)]
      throw StoreError(
        .modelMismatch,
        "the object with Z_PK \(pk) in \(target.table) would point at \(conflict[2].integerValue ?? 2) objects through \(target.label), which is to-one",
        path: path)
    }
    try run("cannot set the links") {
      for (number, target) in targets.enumerated() {
        var sets = ["\(target.column) = l.value"]
        if let entity = target.entityColumn { sets.append("\(entity) = l.ent") }
        if let order = target.orderColumn {
          sets.append("\(order) = COALESCE(l.ord, \(target.table).Z_PK)")
        }
        try database.execute(
          "UPDATE \(target.table) SET \(sets.joined(separator: ", ")) FROM (SELECT pk, MAX(value) AS value, MAX(ent) AS ent, MAX(ord) AS ord FROM temp.gv_deferred_link WHERE target = \(number) GROUP BY pk) AS l WHERE \(target.table).Z_PK = l.pk"
        )
      }
      try database.execute("DROP TABLE temp.gv_deferred_link")
    }
    deferred = DeferredLinks()
  }
}
