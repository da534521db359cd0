import ObjectModel
import ObjectStore

/// A model whose `Note` keeps extended attributes in a bucket (`extendedData`); `Memo` keeps
/// them too but without the fall-through of unknown keys; `Folder` holds notes.
enum BucketModel {
  static func make() throws -> ObjectModel {
    try ObjectModel(
      name: "Notes", versionIdentifiers: ["1"],
      entities: [
        EntityDescription(
          name: "Note",
          userInfo: [
            ExtendedAttributes.bucketKey: "extendedData", ExtendedAttributes.fallThroughKey: "YES",
          ],
          attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: false),
            AttributeDescription(name: "color", type: .string),
            AttributeDescription(name: "extendedData", type: .binaryData),
          ],
          relationships: [
            RelationshipDescription(
              name: "folder", destination: "Folder", inverse: "notes", maxCount: 1)
          ]),
        EntityDescription(
          name: "Memo", userInfo: [ExtendedAttributes.bucketKey: "bucket"],
          attributes: [
            AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "bucket", type: .binaryData),
          ]),
        EntityDescription(
          name: "Folder",
          attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "notes", destination: "Note", inverse: "folder", maxCount: 0,
              isOrdered: true, deleteRule: .cascade)
          ]),
      ])
  }
}
