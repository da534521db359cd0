import ObjectModel

/// Composite values between their two shapes: element values by key path (`author.origin.city`,
/// how objects and stores keep them, one column each) and nested dictionaries
/// (`author: {origin: {city: …}}`, how Core Data hands a composite out).
package enum RecordNesting {
  /// Element values by key path as composite values by the first component, sorted by name;
  /// a value whose path has no dot stays as it is.
  package static func nested(_ elements: [(String, AttributeValue)]) -> [String: AttributeValue] {
    var groups: [String: [(String, AttributeValue)]] = [:]
    var result: [String: AttributeValue] = [:]
    for (path, value) in elements {
      guard let dot = path.firstIndex(of: ".") else {
        result[path] = value
        continue
      }
      groups[String(path[..<dot]), default: []].append(
        (String(path[path.index(after: dot)...]), value))
    }
    for (name, inner) in groups { result[name] = .composite(nested(inner)) }
    return result
  }

  /// A composite's dictionary as its elements' values by key path under `prefix`.
  package static func flattened(_ elements: [String: AttributeValue], prefix: String)
    -> [String: AttributeValue]
  {
    var result: [String: AttributeValue] = [:]
    for (name, value) in elements {
      if case .composite(let inner) = value {
        result.merge(flattened(inner, prefix: prefix + "." + name)) { $1 }
      } else {
        result[prefix + "." + name] = value
      }
    }
    return result
  }
}
