import ObjectStore

/// One object on its way through a migration: the object stream's value
/// (``ObjectStore/ObjectValue``), in the shape of the model version it has reached.
public typealias MigratingObject = ObjectValue

/// A link from a migrating object to another object (``ObjectStore/ObjectLink``).
public typealias MigrationLink = ObjectLink
