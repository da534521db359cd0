import SQLite

extension ResolvedPredicate {
  /// Whether an object whose attributes lie within `bounds` (by attribute name) may satisfy
  /// the predicate: false only when none can. An attribute without bounds may hold anything
  /// (or nothing), and a test this cannot rule on (`!=`, `nil`, options, other objects, an
  /// extended attribute, a pattern without a literal beginning) may pass.
  func mayMatch(within bounds: [String: ValueBounds]) -> Bool {
    switch self {
    case .constant(let value): return value
    case .and(let parts): return parts.allSatisfy { $0.mayMatch(within: bounds) }
    case .or(let parts): return parts.contains { $0.mayMatch(within: bounds) }
    case .not: return true
    case .test(let test): return test.mayMatch(within: bounds)
    }
  }
}

extension ResolvedPredicate.Test {
  fileprivate func mayMatch(within bounds: [String: ValueBounds]) -> Bool {
    guard hops.isEmpty, case .attribute(let attribute) = target, options.isEmpty,
      let range = bounds[attribute.name]
    else { return true }
    // `nil` compared is `IS NULL`, which bounds of the values present cannot rule out.
    guard values.allSatisfy({ $0 != nil }) else { return true }
    let given = values.compactMap { $0.map { SQLValues.sqlite($0) } }
    switch op {
    case .equal: return range.mayEqual(given[0])
    case .in: return given.contains { range.mayEqual($0) }
    case .less: return range.mayBe(atMost: given[0], strictly: true)
    case .lessOrEqual: return range.mayBe(atMost: given[0], strictly: false)
    case .greater: return range.mayBe(atLeast: given[0], strictly: true)
    case .greaterOrEqual: return range.mayBe(atLeast: given[0], strictly: false)
    case .between:
      return given.count == 2 && range.mayBe(atLeast: given[0], strictly: false)
        && range.mayBe(atMost: given[1], strictly: false)
    case .beginsWith, .like, .matches:
      // Every string the test accepts matches its GLOB filter, so lies where the filter's
      // beginning says.
      guard case .string(let operand)? = values[0],
        let glob = GlobFilter.pattern(op, operand)
      else { return true }
      let (low, high) = GlobFilter.literalRange(of: glob)
      return range.mayHold(from: low, upToAnyBeginning: high)
    case .notEqual, .endsWith, .contains:
      return true
    }
  }
}
